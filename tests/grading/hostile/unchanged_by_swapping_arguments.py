# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Changes its argument in place, then tries to make the harness compare something else: it swaps its
# argument for an untouched copy in every list of the calling frames that holds it, rebinds the harness's
# comparison functions in __main__ to ones that see no change, and rewrites every bytes snapshot it can
# find (bytes cannot be changed, so it can only try to swap them in containers).
import gc
import sys

import numpy as np


def _never_changed(*args, **kwargs):
    return []


def row_softmax(S):
    pristine = S.copy()
    S -= S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    result = E / E.sum(axis=-1, keepdims=True)
    main = sys.modules.get("__main__")
    for name in ("changed_arguments", "unchanged", "snapshot", "call_once"):
        if main is not None and hasattr(main, name):
            setattr(main, name, _never_changed if name != "unchanged" else (lambda *a, **k: True))
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if item is S:
                        value[index] = pristine
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, list) and any(item is S for item in obj):
            for index, item in enumerate(obj):
                if item is S:
                    obj[index] = pristine
    return result
