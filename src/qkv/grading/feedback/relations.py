"""Relations between a wrong value and the expected one, found without knowing the mistake.

When a result differs, it is often the expected value seen through one simple change: transposed, its
axes swapped, scaled by a constant that the call's sizes name (``÷ √d_k``), shifted by one
(``+ d_model·d_v``), normalised along another axis, its rows or heads in another order, the right
numbers read into another shape (a reshape where a transpose belonged), right in part, or broken by NaN
where an input explains why. :func:`find_relation` looks for these in a fixed order and returns the
first as one sentence that tells the learner where to look. It is generic: it names no lesson, only the
call's sizes (:mod:`qkv.grading.feedback.sizes`) and NumPy's own words.

Every check is cheap on the grader's small arrays (at most a few thousand numbers); nothing here runs
the learner's code, and nothing raises on an odd value (the values come from the sandbox's report).

This module holds the order of the checks; the record and the relations between shapes are
:mod:`qkv.grading.feedback.relation_shapes`, the relations between values of one shape (dtype, order,
scale, sums, elementwise functions, NaN) :mod:`qkv.grading.feedback.relation_kinds`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from qkv.grading.feedback.relation_kinds import (
    _constant,
    _elementwise,
    _input_added,
    _kind,
    _non_finite,
    _normalised,
    _partly,
    _precision,
    _rearranged,
    _row_factors,
    _scalar,
    _slices_permuted,
    _truncated,
    _whole_only,
)
from qkv.grading.feedback.relation_shapes import (
    MAX_ELEMENTS,
    Array,
    Relation,
    Sizes,
    _Call,
    _is_shape,
    _numbers,
    _other_shape,
    _reordered,
    _shape_tuple,
    name_shape,
)

__all__ = ["Relation", "find_relation", "name_shape"]


def find_relation(
    got: Any,
    expected: Any,
    *,
    sizes: Sizes = (),
    args: Sequence[Any] = (),
    label: str = "your result",
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> Relation | None:
    """The first simple relation between ``got`` and ``expected``, as a sentence; None when none holds.

    Examples
    --------
    >>> want = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> find_relation(want.T, want).kind
    'transposed'
    >>> print(find_relation(want / 2, want, sizes=[("d_k", 4)]).sentence)
    Your result is the expected value × 1/√d_k (every entry: 0.5 times the expected one). Look for a \
factor 1/√d_k that does not belong, or one missing.
    >>> find_relation((9, 4), (9, 3), sizes=[("n", 9), ("d_model", 4), ("d_k", 3)]).sentence
    'Your result (9, 4) is (n, d_model); the expected (9, 3) is (n, d_k): d_model stands where d_k belongs.'
    """
    call = _Call(label, sizes, args, rtol, atol)
    try:
        container = _container(got, expected, call)
        if container is not None:
            return container
        if _is_shape(got) and _is_shape(expected):
            return _shape_tuple(tuple(got), tuple(expected), call)
        got_array, want = _numbers(got), _numbers(expected)
        if got_array is None or want is None or want.size > MAX_ELEMENTS or got_array.size > MAX_ELEMENTS:
            return None
        if want.ndim == 0 or (got_array.ndim == 0 and want.size == 1):
            whole = got_array.dtype.kind in "iu" and want.dtype.kind in "iu"  # counts, not measures
            return _scalar(float(got_array.reshape(-1)[0]), float(want.reshape(-1)[0]), call, whole)
        if got_array.shape != want.shape:
            return _other_shape(got_array, want, call)
        return _same_shape(got_array, want, call)
    except (ValueError, TypeError, ArithmeticError, IndexError):  # an odd value: no relation, never a crash
        return None


def _container(got: Any, expected: Any, call: _Call) -> Relation | None:
    """The right items in another container (a list for a tuple), or a dict whose keys differ only in
    their case."""
    if (
        isinstance(got, list | tuple)
        and isinstance(expected, list | tuple)
        and type(got) is not type(expected)
        and _same_items(got, expected)
    ):
        kind, other = type(got).__name__, type(expected).__name__
        return Relation(
            "container",
            f"{call.Label} holds the right items in a {kind}; a {other} is asked for: return "
            f"{other}(...) of them, or write them in {'( )' if other == 'tuple' else '[ ]'}.",
        )
    if isinstance(got, dict) and isinstance(expected, dict) and set(got) != set(expected):
        folded = {str(key).casefold(): key for key in got}
        if len(folded) == len(got) and set(folded) == {str(key).casefold() for key in expected}:
            pairs = [f"{folded[str(key).casefold()]!r} for {key!r}" for key in expected if key not in got]
            return Relation(
                "keys",
                f"{call.Label} has the right keys in the wrong case ({', '.join(pairs[:3])}): dict keys "
                "are compared exactly, letter case included.",
            )
    return None


def _same_items(got: Sequence[Any], expected: Sequence[Any]) -> bool:
    try:
        return bool(list(got) == list(expected))
    except (ValueError, TypeError):  # arrays inside: their == is element by element
        return False


def _same_shape(got: Array, want: Array, call: _Call) -> Relation | None:
    got_f, want_f = got.astype(np.float64), want.astype(np.float64)
    if got.dtype.kind == want.dtype.kind and call.close(got_f, want_f):
        return None  # the values are right: what differs is the dtype, which the mismatch says
    checks: list[Callable[[Array, Array, _Call], Relation | None]] = [
        _kind,
        _non_finite,
        _truncated,
        _precision,
        _elementwise,
        _reordered,
        _slices_permuted,
        _rearranged,
        _normalised,
        _constant,
        _input_added,
        _partly,
        _row_factors,
        _whole_only,
    ]
    raw = (_kind, _truncated, _precision, _whole_only)  # the checks that look at the dtypes
    for check in checks:
        found = check(got, want, call) if check in raw else check(got_f, want_f, call)
        if found:
            return found
    return None
