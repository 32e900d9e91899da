"""How a returned value is compared with the expected one: one comparator per test case.

A comparator answers one question — is ``got`` what was expected? — with ``None`` (yes) or a
:class:`Mismatch` whose sentence says what differs, in the learner's words. Containers (tuples, dicts)
hold comparators for their items and report which item differs, so hints can look at that item.

Every comparator takes untrusted values (decoded from the sandbox's report), so none of them may raise on
an odd value: ragged lists, strings inside arrays, ``Opaque`` objects and ``None`` all give a Mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from qkv.grading.display import SHORT_LIMIT, short, show
from qkv.grading.values import clean_text, dtype_name, numeric_array

__all__ = [
    "Close",
    "Comparator",
    "Exact",
    "Items",
    "Keys",
    "Mismatch",
    "Shape",
    "Whole",
    "agrees",
]


@dataclass(frozen=True)
class Mismatch:
    """Why ``got`` is not the expected value.

    Parameters
    ----------
    message : str
        A sentence: what was expected and what came back.
    at : str or int or None
        The item of a tuple (its name or index) or the key of a dict that differs; None for the whole value.
    """

    message: str
    at: str | int | None = None


class Comparator(Protocol):
    """Compares a returned value with the expected one."""

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        """None when ``got`` is right; otherwise why not. ``name`` is how the sentence calls the value."""

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        """The comparator and the index or key for one item of the value (None: it has no items)."""


def agrees(comparator: Comparator, got: Any, want: Any) -> bool:
    """Whether ``comparator`` finds ``got`` right, cheaply where it can say so without a sentence.

    Examples
    --------
    >>> agrees(Close(), np.array([1.0]), [1]), agrees(Whole(), 12, 13)
    (True, False)
    >>> agrees(Items((Close(), Whole())), (1.0, 2), (1, 2))
    True
    """
    if isinstance(comparator, Close):
        return comparator.agrees(got, want)
    if isinstance(comparator, Items) and not comparator.container_only:
        if not comparator.holds_items(got):
            return False
        pairs = zip(comparator.items, got, want, strict=True)
        return all(agrees(item, mine, expected) for item, mine, expected in pairs)
    return comparator.mismatch(got, want) is None


def _as_numbers(got: Any) -> np.ndarray[Any, Any] | None:
    """``got`` as an array if it is a number or holds only numbers (else None)."""
    number = isinstance(got, int | float | np.integer | np.floating) and not isinstance(got, bool)
    return np.asarray(got) if number else numeric_array(got)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Close:
    """Numbers or arrays of numbers: the same shape, values within ``rtol``/``atol``, and optionally a dtype.

    Parameters
    ----------
    rtol, atol : float
        Tolerances as in ``np.allclose``.
    dtype : str, optional
        ``"float"`` to require floating-point values, an exact dtype such as ``"float32"``, or
        ``"expected"`` for the dtype of the expected value (the reference's result: float32 when the
        reference keeps a float32 input's dtype). A Python number returned where an array is expected has
        no dtype of its own; it is taken as NumPy takes it (float64 or int64).

    Examples
    --------
    >>> Close().mismatch(np.array([[1.0, 2.0]]), np.array([[1, 2]])) is None
    True
    >>> Close().mismatch(np.array([1.0, 2.0]), np.array([[1, 2]]), "Q").message
    'Expected Q with shape (1, 2), but got shape (2,): array([1., 2.]).'
    >>> Close(dtype="float32").mismatch(np.array([1.0]), np.array([1.0], dtype=np.float32)).message
    'Expected the result as float32 numbers, but it has the dtype float64.'
    >>> Close(dtype="expected").mismatch(np.array([1.0]), np.array([1.0], dtype=np.float32), "A").message
    'Expected A as float32 numbers (the dtype of the expected result), but it has the dtype float64.'
    """

    rtol: float = 1e-5
    atol: float = 1e-8
    dtype: str | None = None

    def agrees(self, got: Any, want: Any) -> bool:
        """Whether :meth:`mismatch` would find nothing, without writing its sentence.

        Hints ask this of every mistake they know for each failed test, where the sentence is never read.

        Examples
        --------
        >>> Close().agrees(np.array([1.0, 2.0]), [1, 2]), Close().agrees([1.0], [1, 2])
        (True, False)
        """
        want_array = np.asarray(want)
        array = _as_numbers(got)
        if array is None or array.shape != want_array.shape or self._dtype_problem(array, want_array):
            return False
        return self._close(array, want_array)

    def _close(self, array: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> bool:
        with np.errstate(all="ignore"):
            return bool(
                np.allclose(array.astype(np.float64), want.astype(np.float64), rtol=self.rtol, atol=self.atol)
            )

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        want_array = np.asarray(want)
        label = name or "the result"
        array = _as_numbers(got)
        if array is None:
            kind = "an array" if want_array.ndim else "a number"
            return Mismatch(f"Expected {label} to be {kind}, but got {short(got)}.")
        if array.shape != want_array.shape:
            values = show(array)
            # Long values would be described as "an array of shape …", which says the shape again.
            got_shape = f"shape {array.shape}" + (f": {values}" if len(values) <= SHORT_LIMIT else "")
            return Mismatch(f"Expected {label} with shape {want_array.shape}, but got {got_shape}.")
        wrong_dtype = self._dtype_problem(array, want_array)
        if wrong_dtype:
            return Mismatch(f"Expected {label} as {wrong_dtype}.")
        if not self._close(array, want_array):
            if array.ndim == 0:
                # A single number is shown as returned (4, not array(4)), as the failure's "Got" shows it.
                return Mismatch(f"Expected {label} = {show(want)}, but got {show(array.item())}.")
            # The whole arrays are in the failure's Expected and Got; the sentence says where they part.
            return Mismatch(_where_arrays_differ(label, array, want_array, self.rtol, self.atol))
        return None

    def _dtype_problem(self, array: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> str | None:
        if self.dtype is None:
            return None
        if self.dtype == "float":
            return None if array.dtype.kind == "f" else f"floats, but it holds {array.dtype} numbers"
        if self.dtype == "expected":
            if array.dtype == want.dtype:
                return None
            return (
                f"{want.dtype} numbers (the dtype of the expected result), but it has the dtype {array.dtype}"
            )
        if dtype_name(array.dtype) == self.dtype:
            return None
        return f"{self.dtype} numbers, but it has the dtype {array.dtype}"

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        return None


@dataclass(frozen=True)
class Items:
    """A tuple (or list) of a fixed length, each item compared with its own comparator.

    Parameters
    ----------
    items : sequence of Comparator
        One per item.
    names : sequence of str, optional
        What the sentences call each item (``("Q", "K", "V")``); by default "item 0", "item 1", …
    description : str
        How the sentence describes the whole value, e.g. ``"(Q, K, V), three matrices"``.
    exact_type : bool
        Require a tuple, not a list.
    container_only : bool
        Check only that it is a tuple of the right length (a test of the return type alone).

    Examples
    --------
    >>> pair = Items((Close(), Close()), names=("a", "b"), description="(a, b)")
    >>> pair.mismatch((1.0, 3.0), (1, 2))
    Mismatch(message='Expected b = 2, but got 3.0.', at='b')
    >>> pair.mismatch([1.0], (1, 2)).message
    'Expected (a, b), but got [1.0].'
    """

    items: Sequence[Comparator]
    names: Sequence[str] = ()
    description: str = ""
    exact_type: bool = False
    container_only: bool = False

    def _name(self, index: int) -> str:
        return self.names[index] if index < len(self.names) else f"item {index}"

    def _describe(self) -> str:
        return self.description or f"a tuple of {len(self.items)} values"

    def holds_items(self, got: Any) -> bool:
        """Whether ``got`` is a sequence of the right type and length (its items aside)."""
        sequence_types = (tuple,) if self.exact_type else (tuple, list)
        return isinstance(got, sequence_types) and len(got) == len(self.items)

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        if not self.holds_items(got):
            return Mismatch(f"Expected {self._describe()}, but got {short(got)}.")
        if self.container_only:
            return None
        for index, (comparator, mine, expected) in enumerate(zip(self.items, got, want, strict=True)):
            found = comparator.mismatch(mine, expected, self._name(index))
            if found is not None:
                return Mismatch(found.message, self._name(index) if self.names else index)
        return None

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        index = list(self.names).index(at) if isinstance(at, str) else at
        return self.items[index], index


@dataclass(frozen=True)
class Keys:
    """A dict with exactly the expected keys, each value compared with ``values``.

    Parameters
    ----------
    values : Comparator
        Compares each value (named by its key in the sentences).
    keys_only : bool
        Check only the keys (a test of the dict's keys alone).

    Examples
    --------
    >>> Keys(Shape()).mismatch({"a": (1, 2)}, {"a": (1, 3)})
    Mismatch(message='Expected a to have the shape (1, 3), but got (1, 2).', at='a')
    >>> Keys(Shape()).mismatch({"b": (1, 2)}, {"a": (1, 3)}).message
    "Expected the keys 'a', but the dict has the keys 'b'."
    """

    values: Comparator
    keys_only: bool = False

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        listed = _and_list([repr(key) for key in want])
        if not isinstance(got, dict):
            return Mismatch(f"Expected a dict with the keys {listed}, but got {short(got)}.")
        if set(got) != set(want):
            keys = clean_text(", ".join(show(key) for key in got), 200) or "none"  # 64 long keys: a wall
            return Mismatch(f"Expected the keys {listed}, but the dict has the keys {keys}.")
        if self.keys_only:
            return None
        for key, expected in want.items():
            found = self.values.mismatch(got[key], expected, str(key))
            if found is not None:
                return Mismatch(found.message, key)
        return None

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        return self.values, at


@dataclass(frozen=True)
class Shape:
    """A shape: whole numbers equal to the expected ones; ``tuple_only`` checks only that it is a tuple.

    Examples
    --------
    >>> Shape().mismatch([3, 4], (3, 4)) is None
    True
    >>> Shape().mismatch((4, 3), (3, 4)).message
    'Expected the shape (3, 4), but got (4, 3).'
    >>> Shape(tuple_only=True).mismatch([3, 4], (3, 4), "K").message
    'Expected K to be a tuple such as (3, 4), but got [3, 4].'
    """

    tuple_only: bool = False

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        if self.tuple_only:
            if isinstance(got, tuple):
                return None
            label = name or "the shape"
            example = show(tuple(want))
            return Mismatch(f"Expected {label} to be a tuple such as {example}, but got {short(got)}.")
        if isinstance(got, tuple | list) and all(_is_whole(n) for n in got) and tuple(got) == tuple(want):
            return None
        if name:
            return Mismatch(f"Expected {name} to have the shape {show(tuple(want))}, but got {short(got)}.")
        return Mismatch(f"Expected the shape {show(tuple(want))}, but got {short(got)}.")

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        return None


@dataclass(frozen=True)
class Whole:
    """A whole number (an ``int``, not a ``bool``) equal to the expected one.

    Examples
    --------
    >>> Whole().mismatch(12, 12) is None
    True
    >>> Whole().mismatch(12.0, 12).message
    'Expected the whole number 12, but got the float 12.0; return an int.'
    """

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        if _is_whole(got) and got == want:
            return None
        if isinstance(got, float) and got == want:
            return Mismatch(f"Expected the whole number {want}, but got the float {got!r}; return an int.")
        label = f"{name} = " if name else ""
        return Mismatch(f"Expected {label}{want}, but got {short(got)}.")

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        return None


@dataclass(frozen=True)
class Exact:
    """Any plain value (text, a bool, None …) equal to the expected one, of the same type.

    Examples
    --------
    >>> Exact().mismatch("causal", "causal") is None
    True
    >>> Exact().mismatch(1, True).message
    'Expected True, but got 1.'
    """

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        if type(got) is type(want) and got == want:
            return None
        label = f"{name} = " if name else ""
        return Mismatch(f"Expected {label}{show(want)}, but got {short(got)}.")

    def item(self, at: str | int) -> tuple[Comparator, int | str] | None:
        return None


def _and_list(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _where_arrays_differ(
    label: str, got: np.ndarray[Any, Any], want: np.ndarray[Any, Any], rtol: float, atol: float
) -> str:
    """Which entries of two same-shaped arrays are off, and the first of them, in one sentence.

    Examples
    --------
    >>> got, want = np.array([[1.0, 2.0], [3.0, 9.5]]), np.array([[1.0, 2.0], [3.0, 4.25]])
    >>> _where_arrays_differ("A", got, want, 1e-6, 0)
    'A differs from the expected value in 1 of its 4 entries; the first is A[1, 1]: expected 4.25, got 9.5.'
    """
    with np.errstate(all="ignore"):
        close = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    off = np.argwhere(~close)
    where = tuple(int(i) for i in off[0])
    index = ", ".join(str(i) for i in where)
    first = f"{label}[{index}]" if label != "the result" else f"the entry at [{index}]"
    if got.size == 1:
        count = "its one entry"
    elif len(off) < got.size:
        count = f"{len(off)} of its {got.size} entries"
    else:
        count = f"all {got.size} of its entries"
    return (
        f"{label[0].upper()}{label[1:]} differs from the expected value in {count}; the first is {first}: "
        f"expected {show(want[where].item())}, got {show(got[where].item())}."
    )
