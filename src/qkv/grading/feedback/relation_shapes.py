"""What a wrong value's shape says: the :class:`Relation` record every check returns, the names a call
gives its sizes (:func:`name_shape`), and the relations between values of different shapes (transposed,
axes swapped or moved, another shape's numbers, an axis too many or too few, a triangle kept).

The checks of :mod:`qkv.grading.feedback.relations` and :mod:`qkv.grading.feedback.relation_kinds` stand
on this module; it imports neither.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from qkv.grading.feedback.grammar import Term
from qkv.grading.values import numeric_array

__all__ = ["HEAD_NAMES", "MAX_ELEMENTS", "MAX_SLICES", "Array", "Relation", "Sizes", "name_shape"]

Array = np.ndarray[Any, Any]
Sizes = Sequence[tuple[str, int]]
MAX_ELEMENTS = 4096
MAX_SLICES = 64  # rows (or heads) matched one to one when looking for another order
HEAD_NAMES = ("h", "heads", "n_heads", "num_heads")


@dataclass(frozen=True)
class Relation:
    """A relation between what came back and what was expected.

    Parameters
    ----------
    kind : str
        Which relation: ``transposed``, ``axes``, ``reshaped``, ``shape``, ``factor``, ``offset``,
        ``normalised``, ``row_factors``, ``permuted``, ``interleaved``, ``partly``, ``non_finite``,
        ``dtype``, ``truncated`` (also whole numbers only, where decimals belong), ``function``; and,
        found by :mod:`qkv.grading.feedback.explain`, ``swapped_items`` and ``one_item``.
    sentence : str
        The sentence shown to the learner.
    """

    kind: str
    sentence: str


@dataclass(frozen=True)
class _Call:
    """What a check needs besides the two values."""

    label: str
    sizes: Sizes
    args: Sequence[Any]
    rtol: float
    atol: float

    def close(self, a: Array, b: Array) -> bool:
        if a.shape != b.shape:
            return False
        with np.errstate(all="ignore"):
            return bool(np.allclose(a, b, rtol=self.rtol, atol=self.atol, equal_nan=True))

    @property
    def Label(self) -> str:
        return self.label[:1].upper() + self.label[1:]


def _names(terms: list[Term]) -> str:
    """One way to write it, or two when two sizes of the call are equal (then both are possible)."""
    if len(terms) == 1:
        return terms[0].text
    return f"{terms[0].text} (or {terms[1].text}: equal in this call)"


def name_shape(shape: Sequence[int], sizes: Sizes, prefer: Sequence[str | None] = ()) -> str:
    """A shape written with the call's size names, where one has that value: ``(n, d_model)``.

    Examples
    --------
    >>> name_shape((9, 4), [("n", 9), ("d_model", 4), ("d_k", 3)])
    '(n, d_model)'
    >>> name_shape((9, 3), [("n", 9), ("d_k", 3), ("d_v", 3)], prefer=(None, "d_v"))
    '(n, d_v)'
    """
    words = []
    for axis, size in enumerate(shape):
        wanted = prefer[axis] if axis < len(prefer) else None
        matching = [name for name, value in sizes if value == size]
        word = wanted if wanted in matching else (matching[0] if matching else str(size))
        words.append(word)
    return f"({words[0]},)" if len(words) == 1 else f"({', '.join(words)})"


def _axis_names(shape: Sequence[int], sizes: Sizes) -> list[str | None]:
    names: list[str | None] = []
    for size in shape:
        matching = [name for name, value in sizes if value == size]
        names.append(matching[0] if len(matching) == 1 else None)
    return names


def _is_shape(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in value)
    )


def _numbers(value: Any) -> Array | None:
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return np.asarray(value)
    return numeric_array(value)


def _shape_tuple(got: tuple[int, ...], want: tuple[int, ...], call: _Call) -> Relation | None:
    """A returned shape (a tuple of sizes) explained by the sizes: ``(9, 4) is (n, d_model)``."""
    if got == want:
        return None
    if sorted(got) == sorted(want) and len(got) == 2:
        return Relation(
            "transposed",
            f"{call.Label} {got} is the expected shape {want} reversed: rows and columns are swapped.",
        )
    return _shape_names("shape", got, want, call, f"{call.Label} {got}", f"the expected {want}")


def _shape_names(
    kind: str, got: Sequence[int], want: Sequence[int], call: _Call, mine: str, theirs: str
) -> Relation | None:
    if len(got) != len(want) or not call.sizes:
        return None
    expected_names = _axis_names(want, call.sizes)
    got_named, want_named = name_shape(got, call.sizes), name_shape(want, call.sizes, expected_names)
    swaps = [
        (g, w)
        for g, w in zip(got_named.strip("(),").split(", "), want_named.strip("(),").split(", "), strict=False)
        if g != w
    ]
    if not swaps or any(g.isdigit() and w.isdigit() for g, w in swaps):
        return None
    wrong = "; ".join(
        f"{g} stands where {w} belongs" if not g.isdigit() else f"{g} is no size of this call, {w} belongs"
        for g, w in swaps
    )
    return Relation(kind, f"{mine} is {got_named}; {theirs} is {want_named}: {wrong}.")


def _other_shape(got: Array, want: Array, call: _Call) -> Relation | None:
    if got.ndim != want.ndim and np.squeeze(got).shape == np.squeeze(want).shape:
        ones = "an axis of size 1 too many" if got.ndim > want.ndim else "an axis of size 1 missing"
        same = call.close(np.squeeze(got), np.squeeze(want))
        values = " The values are right." if same else ""
        return Relation(
            "shape",
            f"{call.Label} has shape {got.shape} where {want.shape} is expected: {ones} (keepdims=True, "
            f"or [:, None], keeps a reduced axis).{values}",
        )
    if got.size == want.size:
        found = _reordered(got, want, call)
        if found:
            return found
    mine, theirs = f"{call.Label} has shape {got.shape}, which", f"the expected shape {want.shape}"
    return _shape_names("shape", got.shape, want.shape, call, mine, theirs) or _axis_count(got, want, call)


def _axis_count(got: Array, want: Array, call: _Call) -> Relation | None:
    """As many numbers as expected, in more axes or fewer (not one of size 1): axes left apart that
    belong merged into one (heads never merged back), or merged that belong apart."""
    if got.ndim == want.ndim or got.size != want.size or got.size == 0:
        return None
    if got.ndim > want.ndim:
        look = "axes left apart that belong merged into one (a reshape, after a transpose where the order "
        look += "needs it)"
    else:
        look = "axes merged into one that belong apart (a reshape to the expected shape's axes)"
    return Relation(
        "shape",
        f"{call.Label} has shape {got.shape}, {got.ndim} axes, where the expected shape {want.shape} has "
        f"{want.ndim}, with as many numbers in all ({want.size}). Look for {look}.",
    )


def _reordered(got: Array, want: Array, call: _Call) -> Relation | None:
    """The right numbers in another order or shape: transposed, axes swapped, or a reshape."""
    flat = got.reshape(-1)
    orders = list(itertools.permutations(range(want.ndim)))
    # A transpose whose shape is the returned one first: square arrays can read alike both ways.
    identity = tuple(range(want.ndim))
    orders.sort(key=lambda order: (tuple(want.shape[i] for i in order) != got.shape, order == identity))
    for order in orders:
        moved = np.transpose(want, order)
        if not call.close(flat, moved.reshape(-1)):
            continue
        if order == tuple(range(want.ndim)):
            return Relation(
                "reshaped",
                f"{call.Label} holds the right numbers in the right order, but in the shape {got.shape} "
                f"instead of {want.shape}.",
            )
        return _moved(got, want, order, call)
    return None


def _moved(got: Array, want: Array, order: tuple[int, ...], call: _Call) -> Relation:
    names = _axis_names(want.shape, call.sizes)
    moved_shape = tuple(want.shape[i] for i in order)
    if got.shape == moved_shape and want.ndim == 2:
        return Relation(
            "transposed",
            f"{call.Label} is the expected value transposed: its rows are the expected columns. Look for "
            "a missing or extra .T, or operands of a product in the wrong order.",
        )
    named = name_shape(moved_shape, call.sizes, [names[i] for i in order])
    expected_named = name_shape(want.shape, call.sizes, names)
    if got.shape == moved_shape:
        return Relation(
            "axes",
            f"{call.Label} has its axes in another order: it is {named} where {expected_named} is expected. "
            f"Transpose with the axes ({', '.join(map(str, order))}) of the expected layout, or check "
            "which axes your transpose moves.",
        )
    return Relation(
        "reshaped",
        f"{call.Label} holds the right numbers, but in the order of an array of shape {named} reshaped "
        f"to {got.shape}: reshape keeps the order of the entries, so a reshape cannot replace a transpose. "
        f"The expected layout is {expected_named}.",
    )


def _triangle(ok: Array) -> str | None:
    """Which triangle is right, when the entries right in every matrix make one triangle exactly."""
    size = ok.shape[-1]
    flat = ok.reshape(-1, size, size).all(axis=0)
    square = np.ones((size, size), dtype=bool)
    for triangle, on, off in (
        (np.tril(square), "on and below", "above"),
        (np.triu(square), "on and above", "below"),
    ):
        if (flat == triangle).all():
            return f"the entries {on} the diagonal are right, those {off} it differ"
        if (flat == ~triangle).all():
            return f"the entries {off} the diagonal are right, those {on} it differ"
    return None
