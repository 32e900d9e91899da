"""The relations between a wrong value and the expected one of the same shape, one family after another:
the dtype (:data:`KINDS`: truncated, whole numbers only, lower precision), the order (rows or heads
permuted, interleaved, rearranged), scale and sums (a named factor or offset, normalised along another
axis, factors per row), and the rest (an elementwise function, the input added, right in part, NaN or
infinity where an input explains why). :func:`qkv.grading.feedback.relations.find_relation` tries them in
its fixed order.
"""

from __future__ import annotations

import itertools

import numpy as np

from qkv.grading.display import format_number
from qkv.grading.feedback.elementwise import which_function
from qkv.grading.feedback.grammar import Term, name_factor, name_offset
from qkv.grading.feedback.relation_shapes import (
    HEAD_NAMES,
    MAX_ELEMENTS,
    MAX_SLICES,
    Array,
    Relation,
    _axis_names,
    _Call,
    _names,
    _numbers,
    _triangle,
)

__all__ = ["KINDS"]


def _scalar(got: float, want: float, call: _Call, whole: bool) -> Relation | None:
    """A number: the expected one times a named factor, or plus a named offset (the cheaper to write;
    between two as cheap, the offset for whole numbers, which are counts: a term counted too often)."""
    if not np.isfinite(got) and np.isfinite(want):
        return Relation("non_finite", f"{call.Label} is {got} where a finite number is expected.")
    factor = name_factor(got / want, call.sizes) if want != 0 else []
    offset = name_offset(got - want, call.sizes)
    if factor and (
        not offset or factor[0].cost < offset[0].cost or (factor[0].cost == offset[0].cost and not whole)
    ):
        return _factor_relation(factor, got / want, call)
    if offset:
        return Relation(
            "offset",
            f"{call.Label} is the expected value {_names(offset)}: look for a term counted once too "
            "often or missing.",
        )
    return None


def _factor_relation(factor: list[Term], value: float, call: _Call) -> Relation:
    return Relation(
        "factor",
        f"{call.Label} is the expected value × {_names(factor)} (every entry: {format_number(value)} times "
        f"the expected one). Look for a factor {factor[0].text.lstrip('-')} that does not belong, or "
        "one missing.",
    )


def _elementwise(got: Array, want: Array, call: _Call) -> Relation | None:
    """The result is a well-known function of the call's one input, entry by entry (an activation's
    relative: GELU computed exactly where its tanh approximation belongs, ReLU, the input itself)."""
    inputs = [array for array in map(_numbers, call.args) if array is not None and array.shape == want.shape]
    if len(inputs) != 1 or len(call.args) != 1:
        return None
    x = inputs[0].astype(np.float64)
    mine = which_function(got, x, call.rtol, call.atol)
    if mine is None:
        return None
    theirs = which_function(want, x, call.rtol, call.atol)
    expected = f"the expected values are {theirs}" if theirs else "that is not the function asked for"
    return Relation(
        "function",
        f"{call.Label} is {mine}, of the input, entry by entry; {expected}. Compare your formula with the "
        "one the exercise gives, term by term.",
    )


def _non_finite(got: Array, want: Array, call: _Call) -> Relation | None:
    bad = ~np.isfinite(got) & np.isfinite(want)
    if not bad.any():
        return None
    what = "NaN" if np.isnan(got[bad]).all() else ("inf" if np.isinf(got[bad]).all() else "NaN and inf")
    where = _rows_of(bad)
    why = _why_non_finite(bad, call)
    return Relation(
        "non_finite", f"{call.Label} holds {what} in {where}, where the expected values are finite.{why}"
    )


def _rows_of(mask: Array) -> str:
    if mask.ndim < 2:
        spots = [int(i) for i in np.flatnonzero(mask)]
        return f"entr{'y' if len(spots) == 1 else 'ies'} {_ranges(spots)}"
    rows = np.flatnonzero(mask.reshape(-1, mask.shape[-1]).any(axis=-1))
    where = "row" if mask.ndim == 2 else "row (counting every leading axis)"
    return f"{where}{'s' if len(rows) > 1 else ''} {_ranges([int(r) for r in rows])}"


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``0–2 and 5``."""
    parts: list[str] = []
    for _, group in itertools.groupby(enumerate(numbers), key=lambda pair: pair[1] - pair[0]):
        run = [n for _, n in group]
        parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}")
    if len(parts) > 6:
        parts = [*parts[:6], "…"]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _why_non_finite(bad: Array, call: _Call) -> str:
    """What in the inputs explains NaN or inf: a row that masks everything, or numbers that overflow."""
    rows = bad.reshape(-1, bad.shape[-1]).any(axis=-1) if bad.ndim >= 2 else None
    for arg in call.args:
        array = _numbers(arg)
        if array is None or array.size == 0 or array.size > MAX_ELEMENTS:
            continue
        if array.dtype == bool and array.ndim >= 1 and rows is not None:
            empty = ~array.reshape(-1, array.shape[-1]).any(axis=-1)
            if (
                empty.any()
                and (empty.size in (1, rows.size))
                and (rows & np.broadcast_to(empty, rows.shape)).any()
            ):
                return (
                    " A row whose mask allows no key is there: its sum of exponentials is 0, and 0/0 is NaN. "
                    "Decide what such a row gives before dividing."
                )
        if array.dtype.kind == "f" and np.isneginf(array).any():
            return " An input holds -inf: -inf − (-inf) and 0/0 are NaN."
    arrays = [array for array in map(_numbers, call.args) if array is not None and _finite_size(array)]
    largest = max((float(np.abs(array).max()) for array in arrays), default=0.0)
    if largest >= 1e6:
        return (
            f" The inputs reach {format_number(largest)}: far from zero, a formula that squares or "
            "exponentiates the numbers themselves loses every digit or overflows (the square of 1e8 is "
            "1e16, past float64's 16 digits, so a difference of two such numbers can even come out "
            "negative, and its square root is NaN). Work with the differences from the mean (or from the "
            "row's maximum) instead."
        )
    if largest >= 20:
        return (
            f" The inputs reach {format_number(largest)}: an exponential of numbers that large overflows to "
            "inf (e^710 does in float64, e^89 in float32), and inf/inf or inf − inf is NaN. Keep the "
            "numbers you exponentiate small (subtract the largest first)."
        )
    return ""


def _finite_size(array: Array | None) -> bool:
    return (
        array is not None
        and 0 < array.size <= MAX_ELEMENTS
        and array.dtype.kind in "iuf"
        and bool(np.isfinite(array).all())
    )


KINDS = {"b": "booleans", "i": "whole numbers", "u": "whole numbers", "f": "decimal numbers"}


def _kind(got: Array, want: Array, call: _Call) -> Relation | None:
    """The right values, of another kind: floats where booleans belong, and so on."""
    if KINDS.get(got.dtype.kind) == KINDS.get(want.dtype.kind):
        return None
    if not call.close(got.astype(np.float64), want.astype(np.float64)):
        return None
    return Relation(
        "dtype",
        f"{call.Label} holds the right values as {KINDS.get(got.dtype.kind, got.dtype)} ({got.dtype}), where "
        f"{KINDS.get(want.dtype.kind, want.dtype)} ({want.dtype}) are expected: convert, or build the result "
        "from the right kind of values.",
    )


def _truncated(got: Array, want: Array, call: _Call) -> Relation | None:
    if got.dtype.kind not in "iub" or want.dtype.kind != "f":
        return None
    for how, rounded in (
        ("cut to whole numbers", np.trunc(want)),
        ("rounded to whole numbers", np.round(want)),
    ):
        if call.close(got.astype(np.float64), rounded):
            return Relation(
                "truncated",
                f"{call.Label} holds the expected values {how}: it has the dtype {got.dtype}, where decimals "
                "belong. Look for an int() or an integer array that the result is stored in.",
            )
    return None


def _whole_only(got: Array, want: Array, call: _Call) -> Relation | None:
    """Whole numbers where the expected values have decimals, and no other relation: the numbers were
    made whole somewhere on the way (the inputs converted to integers, then computed with)."""
    if got.dtype.kind not in "iu" or want.dtype.kind != "f":
        return None
    with np.errstate(all="ignore"):
        fractional = np.isfinite(want) & (want != np.trunc(want))
    if not fractional.any():
        return None
    first = format_number(float(want[fractional].reshape(-1)[0]))
    return Relation(
        "truncated",
        f"{call.Label} holds only whole numbers (its dtype is {got.dtype}), where the expected values have "
        f"decimals (such as {first}): somewhere on the way the numbers were made whole. Look for an int(), "
        "a dtype=int, or an integer array that the inputs or the result are stored in.",
    )


def _precision(got: Array, want: Array, call: _Call) -> Relation | None:
    if got.dtype.kind != "f" or want.dtype.kind != "f":
        return None
    with np.errstate(all="ignore"):
        close32 = bool(np.allclose(got.astype(np.float64), want, rtol=1e-4, atol=1e-5))
    if not close32:
        return None
    if got.dtype == np.float32:
        return Relation(
            "dtype",
            f"{call.Label} has the dtype float32 and is right only to float32's 7 digits, where float64 is "
            "expected: look for an astype, a dtype= or a float32 array that the result passes through.",
        )
    return Relation(
        "dtype",
        f"{call.Label} is right only to about 4 significant digits, as float32 numbers are: check for a "
        "float32 step (an astype, a dtype= or a float32 constant) on the way, or for an approximation.",
    )


def _slices_permuted(got: Array, want: Array, call: _Call) -> Relation | None:
    """Rows, columns or heads in another order (and columns interleaved as a (b, a) grid read across)."""
    names = _axis_names(want.shape, call.sizes)
    for axis in range(want.ndim):
        size = want.shape[axis]
        if size < 2 or size > MAX_SLICES:
            continue
        order = _matching_order(np.moveaxis(got, axis, 0), np.moveaxis(want, axis, 0), call)
        if order is None:
            continue
        return _permutation(order, axis, want.ndim, names, call)
    return None


def _matching_order(got: Array, want: Array, call: _Call) -> list[int] | None:
    """``order[i]``: which expected slice the i-th returned slice is, if every one is exactly one."""
    mine, theirs = got.reshape(len(got), -1), want.reshape(len(want), -1)
    with np.errstate(all="ignore"):
        gap = np.abs(mine[:, None, :] - theirs[None, :, :])
        alike = (gap <= call.atol + call.rtol * np.abs(theirs[None, :, :])).all(axis=-1)  # (i, j)
    order: list[int] = []
    for row in alike:
        found = [int(j) for j in np.flatnonzero(row) if int(j) not in order]
        if not found:
            return None
        order.append(found[0])
    return None if order == sorted(order) else order


def _slice_word(axis: int, ndim: int, name: str | None) -> str:
    if name in HEAD_NAMES:
        return "head"
    if ndim == 2:
        return "row" if axis == 0 else "column"
    if axis == ndim - 1:
        return "column"
    if axis == ndim - 2:
        return "row"
    return f"slice along axis {axis}"


def _permutation(order: list[int], axis: int, ndim: int, names: list[str | None], call: _Call) -> Relation:
    word = _slice_word(axis, ndim, names[axis])
    grid = _grid(order)
    if grid is not None:
        a, b = grid
        head = next((name for name, value in call.sizes if value in (a, b) and name in HEAD_NAMES), None)
        whose = f" ({head} = {dict(call.sizes)[head]} heads)" if head else ""
        return Relation(
            "interleaved",
            f"{call.Label} has the right {word}s, interleaved: they come in the order of a {a} × {b} grid "
            f"read down its columns instead of across its rows{whose}. That is what a reshape gives where "
            "a transpose belonged: keep each group's entries together.",
        )
    if order == list(reversed(range(len(order)))):
        how = "in reverse order"
    else:
        pairs = [f"your {word} {i} is the expected {word} {j}" for i, j in enumerate(order) if i != j][:3]
        how = "in another order (" + "; ".join(pairs) + ")"
    return Relation(
        "permuted",
        f"{call.Label} has the right {word}s, {how}: look at the order in which you stack, split or index "
        f"the {word}s.",
    )


def _grid(order: list[int]) -> tuple[int, int] | None:
    size = len(order)
    for a in range(2, size):
        if size % a == 0 and size // a > 1:
            b = size // a
            if order == [int(i) for i in np.arange(size).reshape(a, b).T.reshape(-1)]:
                return a, b
    return None


def _constant(got: Array, want: Array, call: _Call) -> Relation | None:
    finite = np.isfinite(got) & np.isfinite(want)
    nonzero = finite & (np.abs(want) > 1e-12)
    if nonzero.any():
        ratios = got[nonzero] / want[nonzero]
        factor = float(np.median(ratios))
        if call.close(got[finite], want[finite] * factor):
            named = name_factor(factor, call.sizes)
            if named:
                return _factor_relation(named, factor, call)
            if np.isclose(factor, -1.0):
                return Relation("factor", f"{call.Label} is the expected value with every sign flipped.")
            if factor != 0 and want[nonzero].size > 1:
                return Relation(
                    "factor",
                    f"{call.Label} is the expected value times {format_number(factor)}, in every entry: "
                    "a constant factor (a scale, a count, a sum) is off somewhere.",
                )
    offsets = got[finite] - want[finite]
    if offsets.size and call.close(got[finite], want[finite] + float(np.median(offsets))):
        offset = float(np.median(offsets))
        named = name_offset(offset, call.sizes)
        amount = _names(named) if named else f"{'+' if offset > 0 else '-'} {format_number(abs(offset))}"
        return Relation(
            "offset",
            f"{call.Label} is the expected value {amount}, in every entry: look for a term added or "
            "subtracted once too often.",
        )
    return None


def _normalised(got: Array, want: Array, call: _Call) -> Relation | None:
    """Weights that sum to 1 along another axis (or over the whole array) than the expected ones."""
    if want.ndim == 0 or (want < -1e-12).any() or (got < -1e-12).any():
        return None
    expected_axes = [axis for axis in range(want.ndim) if _sums_to_one(want, axis)]
    if not expected_axes:
        return None
    got_axes = [axis for axis in range(got.ndim) if _sums_to_one(got, axis)]
    if set(got_axes) & set(expected_axes):
        return None
    theirs = _axis_word(expected_axes[-1], want.ndim)
    if got_axes:
        mine = _axis_word(got_axes[-1], got.ndim)
        return Relation(
            "normalised",
            f"{call.Label} is normalised along {mine}: its {_summed(got_axes[-1], got.ndim)} sum to 1, where "
            f"the expected {_summed(expected_axes[-1], want.ndim)} do (along {theirs}). Check the axis of "
            "your sum (and max), and keepdims=True.",
        )
    with np.errstate(all="ignore"):
        if np.isclose(got.sum(), 1.0, rtol=1e-6):
            return Relation(
                "normalised",
                f"{call.Label} sums to 1 over the whole array, where its "
                f"{_summed(expected_axes[-1], want.ndim)} should, each (along {theirs}): the sum needs an "
                "axis.",
            )
    return None


def _summed(axis: int, ndim: int) -> str:
    """What sums to 1 when the sum runs along ``axis``: the rows along the last axis, the columns along
    the one before."""
    if axis == ndim - 1:
        return "rows"
    if axis == ndim - 2:
        return "columns"
    return f"entries along axis {axis}"


def _sums_to_one(values: Array, axis: int) -> bool:
    if values.shape[axis] < 2:
        return False
    with np.errstate(all="ignore"):
        sums = values.sum(axis=axis)
    return bool(np.allclose(sums, 1.0, rtol=1e-6, atol=1e-8))


def _axis_word(axis: int, ndim: int) -> str:
    return "the last axis (axis=-1)" if axis == ndim - 1 else f"axis {axis}"


def _row_factors(got: Array, want: Array, call: _Call) -> Relation | None:
    """Each row is the expected row times a factor of its own: a per-row normalisation differs."""
    if want.ndim < 2 or want.shape[-1] < 2:
        return None
    g, w = got.reshape(-1, want.shape[-1]), want.reshape(-1, want.shape[-1])
    with np.errstate(all="ignore"):
        factors = np.array(
            [np.dot(a, b) / np.dot(b, b) if np.dot(b, b) > 0 else np.nan for a, b in zip(g, w, strict=True)]
        )
    if (
        not np.isfinite(factors).all()
        or (np.abs(factors) < 1e-9).any()
        or not call.close(g, w * factors[:, None])
    ):
        return None
    if np.allclose(factors, factors[0], rtol=1e-6):
        return None  # one constant: a factor the grammar did not name
    sums = g.sum(axis=-1)
    told = (
        " (your rows do not sum to 1)"
        if not np.allclose(sums, 1.0) and _sums_to_one(want, want.ndim - 1)
        else ""
    )
    return Relation(
        "row_factors",
        f"Each row of {call.label} is the expected row times a factor of its own{told}: the row's shape is "
        "right, but the number it is divided (or multiplied) by is not. Check what each row is divided by.",
    )


def _rearranged(got: Array, want: Array, call: _Call) -> Relation | None:
    """The expected numbers, every one of them, in other places (no simpler order explains it): an axis
    split or merged the wrong way, heads cut from the wrong columns, a reshape where a transpose belongs.

    Examples
    --------
    >>> want = np.arange(8.0).reshape(2, 4)
    >>> _rearranged(want.reshape(4, 2).T.reshape(2, 4), want, _Call("your result", (), (), 1e-5, 1e-8)).kind
    'rearranged'
    """
    if got.size < 4 or not np.isfinite(want).all() or call.close(got, want):
        return None
    if len(np.unique(np.round(want, 9))) < max(4, want.size // 2):
        return None  # too few distinct numbers to tell an arrangement
    if not call.close(np.sort(got, axis=None), np.sort(want, axis=None)):
        return None
    where = (
        "for a stack of heads, each head cut from the wrong columns or the heads merged in the wrong order, "
        if got.ndim >= 3
        else ""
    )
    return Relation(
        "rearranged",
        f"{call.Label} holds exactly the expected numbers, but in other places: the values are right and "
        f"their arrangement is not. Look at how axes are split, merged or reordered ({where}a reshape "
        "where a transpose belongs, or the sizes of a reshape in the other order).",
    )


def _input_added(got: Array, want: Array, call: _Call) -> Relation | None:
    """The result differs from the expected one by exactly one of the call's arrays (a residual added
    once too often, or left out).

    Examples
    --------
    >>> X = np.array([[1.0, -2.0], [0.5, 3.0]])
    >>> _input_added(np.ones((2, 2)) + X, np.ones((2, 2)), _Call("your result", (), (X,), 1e-5, 1e-8)).kind
    'input_added'
    """
    for position, arg in enumerate(call.args):
        array = _numbers(arg)
        if array is None or array.shape != want.shape or array.size < 4 or not np.any(array):
            continue  # a tiny input equals a difference by chance too often
        array = array.astype(np.float64)
        for sign, words in ((1, "plus"), (-1, "minus")):
            if call.close(got, want + sign * array):
                fix = (
                    "the input is added once more than it belongs (a residual added twice)"
                    if sign == 1
                    else "the input is missing from a sum it belongs in (a residual left out)"
                )
                return Relation(
                    "input_added",
                    f"{call.Label} is the expected value {words} the call's {_ordinal(position)} argument, "
                    f"entry by entry: {fix}.",
                )
    return None


def _ordinal(position: int) -> str:
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
    return words[position] if position < len(words) else f"argument {position + 1}"


def _partly(got: Array, want: Array, call: _Call) -> Relation | None:
    """The part that is right: leading rows, some heads, one triangle."""
    with np.errstate(all="ignore"):
        ok = np.isclose(got, want, rtol=call.rtol, atol=call.atol, equal_nan=True)
    if ok.all() or not ok.any():
        return None
    if want.ndim >= 2 and want.shape[-1] == want.shape[-2] and want.shape[-1] > 1:
        found = _triangle(ok)
        if found:
            return Relation(
                "partly", f"In {call.label}, {found}: look at what decides those entries (a mask?)."
            )
    names = _axis_names(want.shape, call.sizes)
    for axis in range(want.ndim):
        if axis == want.ndim - 1:
            continue
        rows = np.asarray(ok.reshape((*ok.shape[: axis + 1], -1)).all(axis=-1))
        good = np.asarray(np.moveaxis(rows, axis, 0).reshape(want.shape[axis], -1).all(axis=-1))
        if good.any() and not good.all():
            word = _slice_word(axis, want.ndim, names[axis])
            right = [int(i) for i in np.flatnonzero(good)]
            return Relation("partly", f"{_right_part(word, right, len(good))}: look at what differs there.")
    return None


def _right_part(word: str, right: list[int], count: int) -> str:
    first_wrong = next(i for i in range(count) if i not in right)
    if right == list(range(first_wrong)):
        these = f"{word} 0" if first_wrong == 1 else f"{word}s 0–{first_wrong - 1}"  # 0–1 reads as "0 to 1"
        verb = "is" if first_wrong == 1 else "are"
        return f"{these[:1].upper()}{these[1:]} {verb} right; from {word} {first_wrong} on the values differ"
    listed = _ranges(right)
    plural = "s" if len(right) > 1 else ""
    verb = "are" if plural else "is"
    return f"{word[:1].upper()}{word[1:]}{plural} {listed} {verb} right and the other {word}s differ"
