"""Behaviour signatures: what a failing function computes on a fixed set of inputs, in one short digest.

Two programs that make the same mistake in different styles (a loop, ``np.dot``, ``@``, ``einsum``)
compute the same wrong values. A signature records, for one function of an exercise, its outcome on a
probe set that is the same for every run: the suite's fixed tests (their inputs never change) and one draw
of each drawn test from a fixed seed (the *probes*). Each outcome is compared with the expected one and
rounded to four significant digits, so that float noise between styles does not split a group; a raised
exception counts by its class. Programs with equal signatures of a failing function make one group of
mistakes, which an instructor may name once for everyone after.

The probes ride along in the grading run itself: the grader appends their calls to the job after the
tests (:func:`probe_calls`), so signing costs a few more calls in a sandbox that is running anyway and no
sandbox of its own. Their results never change the verdict.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from qkv.grading.suite import Case, Raises, Suite
from qkv.grading.values import decode_value

__all__ = ["MAX_PROBES", "PROBE_SEED", "fixed_names", "probe_cases", "rounded", "signatures"]

PROBE_SEED = 20_240_917
"""The seed every probe is drawn from: the same inputs for every run and every server."""
MAX_PROBES = 32
"""At most this many probe calls are added to a run."""
_VALUES_SIGNED = 512  # an array's first values that enter its signature (with its shape)

_cache: dict[int, tuple[Suite, list[Case]]] = {}
_cache_lock = threading.Lock()


def probe_cases(suite: Suite) -> list[Case]:
    """One case per drawn row of the suite (at most :data:`MAX_PROBES`), drawn from :data:`PROBE_SEED`.

    Made once per suite and kept. A row whose reference fails on the probe's inputs gets no probe.

    Examples
    --------
    >>> from qkv.grading.suite import TestCase
    >>> def double(x):
    ...     return 2 * x
    >>> suite = Suite(["double"], [TestCase("two", "double", (2,), double),
    ...                            TestCase("any", "double", lambda rng: (int(rng.integers(3, 9)),), double)])
    >>> [case.name for case in probe_cases(suite)]
    ['any']
    >>> probe_cases(suite)[0].args == probe_cases(suite)[0].args
    True
    """
    with _cache_lock:
        kept = _cache.get(id(suite))
        if kept is not None and kept[0] is suite:
            return kept[1]
    drawn = [index for index, row in enumerate(suite.table) if callable(row.args)][:MAX_PROBES]
    cases: list[Case] = []
    if drawn:
        every = suite.cases(PROBE_SEED)  # one draw of every row, in the table's order
        cases = [every[index] for index in drawn]
    with _cache_lock:
        _cache[id(suite)] = (suite, cases)
    return cases


def fixed_names(suite: Suite) -> frozenset[str]:
    """The names of the suite's tests whose inputs are the same in every run.

    Examples
    --------
    >>> from qkv.grading.suite import TestCase
    >>> suite = Suite(["f"], [TestCase("one", "f", (1,), abs), TestCase("any", "f", lambda rng: (2,), abs)])
    >>> sorted(fixed_names(suite))
    ['one']
    """
    return frozenset(row.name for row in suite.table if not callable(row.args))


def rounded(value: Any) -> str:
    """A value as it enters a signature: numbers to four significant digits, arrays with their shape.

    Examples
    --------
    >>> rounded(0.70710678), rounded(np.float32(0.7071069)), rounded(1)
    ('0.7071', '0.7071', '1')
    >>> rounded(np.array([[0.5, -0.0]]))
    'array(1, 2)[0.5,0]'
    >>> rounded([0.5, 0.0]) == rounded(np.array([0.5, 0.0]))
    False
    """
    if isinstance(value, bool | np.bool_):
        return f"bool:{bool(value)}"
    if isinstance(value, int | float | np.integer | np.floating):
        return _number(float(value))
    if isinstance(value, np.ndarray):
        return _array("array", value)
    if isinstance(value, list | tuple):
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return f"{type(value).__name__}:{len(value)}"
        return _array(type(value).__name__, array)
    return type(value).__name__


def _number(number: float) -> str:
    if math.isnan(number):
        return "nan"
    if number == 0:
        return "0"  # -0.0 and 0.0 alike
    return f"{number:.4g}"


def _array(kind: str, array: np.ndarray) -> str:
    shape = ", ".join(str(size) for size in array.shape)
    try:
        flat = np.asarray(array, dtype=float).ravel()[:_VALUES_SIGNED]
    except (TypeError, ValueError, OverflowError):
        return f"{kind}({shape}):{array.dtype.kind}"
    return f"{kind}({shape})[{','.join(_number(float(x)) for x in flat)}]"


def _outcome(case: Case, event: Mapping[str, Any] | None) -> str:
    """One call's outcome against its expected one: ``=`` when it is right, else what it did."""
    if event is None:
        return "stopped"
    outcome = event.get("outcome")
    if outcome in ("missing", "not_callable"):
        return str(outcome)
    if outcome == "raised":
        raised = str(event.get("type"))
        right = isinstance(case.expected, Raises) and case.expected.exception == raised
        return "=" if right else f"raises {raised}"
    try:
        got = decode_value(event.get("value"))
        if isinstance(case.expected, Raises):
            return f"returns {rounded(got)}"
        if case.compare.mismatch(got, case.expected) is None:
            return "="
        return f"≠ {rounded(got)}"
    except Exception:  # a value the comparator cannot read is still an outcome
        return "unreadable"


def signatures(
    functions: Sequence[str],
    calls: Sequence[tuple[Case, Mapping[str, Any] | None]],
) -> dict[str, str]:
    """The signature of each function in ``functions``: a digest of its outcomes on the probe set.

    Parameters
    ----------
    functions : sequence of str
        The functions to sign (the failing ones).
    calls : sequence of (Case, event or None)
        Every call of the probe set with the harness's result event for it (None: it never ran).

    Examples
    --------
    >>> from qkv.grading.compare import Close
    >>> case = Case("half of 4", "half", (4,), 2.0, Close())
    >>> wrong = signatures(["half"], [(case, {"outcome": "returned", "value": {"t": "float", "v": 1.0}})])
    >>> same = signatures(["half"], [(case, {"outcome": "returned", "value": {"t": "float", "v": 1.00001}})])
    >>> wrong == same, len(wrong["half"])
    (True, 32)
    >>> signatures(["half"], [(case, {"outcome": "raised", "type": "KeyError"})]) == wrong
    False
    >>> signatures(["half"], [(case, {"outcome": "missing"})])
    {}
    """
    signed: dict[str, str] = {}
    for function in functions:
        outcomes = [(case.name, _outcome(case, event)) for case, event in calls if case.function == function]
        if not outcomes or all(outcome in ("missing", "not_callable") for _, outcome in outcomes):
            continue  # a function the program does not define has no behaviour to group
        parts = [f"{name}\x1f{outcome}" for name, outcome in outcomes]
        digest = hashlib.sha256("\x1e".join(sorted(parts)).encode("utf-8", "replace")).hexdigest()
        signed[function] = digest[:32]
    return signed
