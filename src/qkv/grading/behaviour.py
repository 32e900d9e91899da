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

__all__ = [
    "MAX_PROBES",
    "PROBES_PER_FUNCTION",
    "PROBE_SEED",
    "fixed_names",
    "probe_cases",
    "rounded",
    "signatures",
]

PROBE_SEED = 20_240_917
"""The seed every probe is drawn from: the same inputs for every run and every server."""
MAX_PROBES = 16
"""At most this many probe calls are added to a run."""
PROBES_PER_FUNCTION = 3
"""Each function gets the drawn tests with the smallest inputs, at most this many, as probes."""

_cache: dict[int, tuple[Suite, list[Case]]] = {}
_cache_lock = threading.Lock()


def probe_cases(suite: Suite) -> list[Case]:
    """Probes: one draw from :data:`PROBE_SEED` of each function's drawn rows with the smallest inputs.

    At most :data:`PROBES_PER_FUNCTION` per function and :data:`MAX_PROBES` in all; made once per suite
    and kept.

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
    drawn = [index for index, row in enumerate(suite.table) if callable(row.args)]
    cases: list[Case] = []
    if drawn:
        every = suite.cases(PROBE_SEED)  # one draw of every row, in the table's order
        cases = _smallest_per_function([every[index] for index in drawn])
    with _cache_lock:
        _cache[id(suite)] = (suite, cases)
    return cases


def _smallest_per_function(cases: list[Case]) -> list[Case]:
    """Of each function's drawn cases, the :data:`PROBES_PER_FUNCTION` with the smallest inputs (cheap to
    run), in the table's order."""
    chosen: set[int] = set()
    for function in dict.fromkeys(case.function for case in cases):
        mine = [index for index, case in enumerate(cases) if case.function == function]
        mine.sort(key=lambda index: (_size(cases[index].args), index))
        chosen.update(mine[:PROBES_PER_FUNCTION])
    return [case for index, case in enumerate(cases) if index in chosen][:MAX_PROBES]


def _size(args: tuple[Any, ...]) -> int:
    return sum(int(np.asarray(arg).size) if isinstance(arg, np.ndarray | list | tuple) else 1 for arg in args)


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
    >>> rounded(np.array([[0.5, -0.0]])) == rounded(np.array([[0.50001, 0.0]]))
    True
    >>> rounded(np.array([[0.5, 0.0]])).startswith("array(1, 2):")
    True
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
    """An array's shape and a digest of its values rounded to four significant digits (at once, in NumPy)."""
    shape = ", ".join(str(size) for size in array.shape)
    try:
        flat = np.asarray(array, dtype=float).ravel()
    except (TypeError, ValueError, OverflowError):
        return f"{kind}({shape}):{array.dtype.kind}"
    with np.errstate(all="ignore"):
        finite = np.isfinite(flat) & (flat != 0)
        exponent = np.where(finite, np.floor(np.log10(np.abs(np.where(finite, flat, 1.0)))), 0.0)
        mantissa = np.where(finite, np.round(flat / 10.0**exponent, 3), flat) + 0.0  # -0.0 becomes 0.0
    mantissa[np.isnan(mantissa)] = 7e307  # every NaN alike, whatever its bits
    digest = hashlib.sha256(mantissa.tobytes() + exponent.tobytes()).hexdigest()[:16]
    return f"{kind}({shape}):{digest}"


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
