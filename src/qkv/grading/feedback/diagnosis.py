"""Sentences about what a call did besides returning: a crash inside NumPy, an argument changed in place,
a warning emitted.

Everything here is generic: it names NumPy's operations, the shapes and dtypes involved and the usual
causes, never a lesson. A lesson names its own mistakes with hints
(:class:`~qkv.grading.feedback.hints.Raised`,
:class:`~qkv.grading.feedback.hints.Mutated`, :class:`~qkv.grading.feedback.hints.Warned`). The inputs of
these functions are the grader's own copies of the arguments and text from the untrusted report, which is only
quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from qkv.grading.display import format_number, short
from qkv.grading.feedback.hints import Emitted
from qkv.grading.values import Opaque

__all__ = [
    "UNCHANGED",
    "argument_name",
    "call_shapes",
    "crash_diagnosis",
    "describe_change",
    "describe_warnings",
]

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
MAX_LISTED = 8  # arguments (or entries of a dict) described in one sentence
UNCHANGED = "it holds the same values as before"


def _shape(text: str) -> str:
    """NumPy's ``(3,4)`` or ``(5,newaxis)`` written as Python prints a shape: ``(3, 4)``, ``(5, -1)``."""
    sizes = [size.strip() for size in text.strip("()").split(",") if size.strip()]
    sizes = ["-1" if size == "newaxis" else size for size in sizes]
    return f"({sizes[0]},)" if len(sizes) == 1 else f"({', '.join(sizes)})"


def _and(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


_IN_PLACE = {
    "add": "+=",
    "subtract": "-=",
    "multiply": "*=",
    "divide": "/=",
    "true_divide": "/=",
    "power": "**=",
}


def crash_diagnosis(message: str) -> str | None:
    """A sentence that explains one of NumPy's shape, index and casting errors; None for other messages.

    Examples
    --------
    >>> print(crash_diagnosis("operands could not be broadcast together with shapes (3,4) (3,) "))
    NumPy could not line up the shapes (3, 4) and (3,) element by element: shapes are matched from their \
last axis, where each pair of sizes must be equal or one of them 1. Common causes: a sum, max or mean over \
one axis without keepdims=True, an operand that needs a transpose, or two sizes mixed up.
    >>> crash_diagnosis("axis 1 is out of bounds for array of dimension 1")[:60]
    'The array has 1 axis, so there is no axis 1: its axes are 0 '
    >>> crash_diagnosis("Wq needs 2 rows") is None
    True
    """
    for explain in _CRASH_EXPLANATIONS:
        sentence = explain(message)
        if sentence is not None:
            return sentence
    return None


def _broadcast_shapes(message: str) -> str | None:
    """Operands whose shapes do not broadcast."""
    found = re.search(r"could not be broadcast together with (?:remapped )?shapes(.*)", message)
    if found:
        originals = re.findall(r"(\([\w,]*\))->", found.group(1)) or re.findall(r"\([\w,]*\)", found.group(1))
        shapes = _and([_shape(shape) for shape in originals])
        return (
            f"NumPy could not line up the shapes {shapes} element by element: shapes are matched from "
            "their last axis, where each pair of sizes must be equal or one of them 1. Common causes: a "
            "sum, max or mean over one axis without keepdims=True, an operand that needs a transpose, or "
            "two sizes mixed up."
        )
    return None


def _matmul_sizes(message: str) -> str | None:
    """``A @ B`` with inner sizes that differ."""
    found = re.search(
        r"^matmul: Input operand (\d+) has a mismatch in its core dimension \d+.*"
        r"\(size (\d+) is different from (\d+)\)",
        message,
    )
    if found:
        operand, size, other = found.groups()
        sizes = (
            f"the left operand's last size is {other} but the right operand's second-to-last size is {size}"
            if operand == "1"
            else f"the sizes {size} and {other} do not match"
        )
        return (
            f"In A @ B the last size of A must equal the second-to-last size of B, and here {sizes}. Common "
            "causes: a missing or extra .T, the two operands in the wrong order, or a matrix whose axes are "
            "swapped."
        )
    return None


def _dot_sizes(message: str) -> str | None:
    """``np.dot`` with inner sizes that differ."""
    found = re.search(
        r"shapes (\([\d,]*\)) and (\([\d,]*\)) not aligned: (\d+) \(dim \d+\) != (\d+)", message
    )
    if found:
        left, right, size, other = found.groups()
        return (
            "np.dot needs the last size of its first operand to equal the second-to-last size of its "
            f"second, and the shapes {_shape(left)} and {_shape(right)} give {size} and {other}. Common "
            "causes: a missing or extra .T, or the two operands in the wrong order."
        )
    return None


def _boolean_mask_shape(message: str) -> str | None:
    """A boolean mask whose shape is not the array's."""
    found = re.search(
        r"boolean index did not match indexed array along (?:axis|dimension) (\d+); "
        r"(?:size of axis|dimension) is (\d+) but "
        r"(?:size of )?corresponding boolean (?:axis|dimension) is (\d+)",
        message,
    )
    if found:
        axis, size, other = found.groups()
        return (
            "A boolean mask used as an index must have exactly the shape of the array it selects from (it "
            f"is not broadcast): along axis {axis} the array has {size} entries but the mask has {other}. "
            "Broadcast the mask first (np.broadcast_to(mask, array.shape)), or choose values with "
            "np.where(mask, array, other)."
        )
    return None


def _in_place_cast(message: str) -> str | None:
    """An in-place operation whose result's dtype does not fit the array."""
    found = re.search(r"Cannot cast ufunc '(\w+)' output from dtype\('(\w+)'\) to dtype\('(\w+)'\)", message)
    if found:
        ufunc, result, kept = found.groups()
        operator = _IN_PLACE.get(ufunc)
        example = f"x {operator} …" if operator else f"the ufunc {ufunc} with out="
        plain = f"x = x {operator[:-1]} …" if operator else "a new array"
        return (
            f"An in-place operation ({example}) stores its result in the array it changes, which keeps its "
            f"dtype: a {result} result cannot be stored in {_article(kept)} {kept} array. Make a new array "
            f"instead ({plain}), or convert first with x = x.astype(float)."
        )
    return None


def _axis_out_of_bounds(message: str) -> str | None:
    """An axis the array does not have."""
    found = re.search(r"axis (-?\d+) is out of bounds for array of dimension (\d+)", message)
    if found:
        axis, ndim = int(found.group(1)), int(found.group(2))
        axes = f"{ndim} ax{'i' if ndim == 1 else 'e'}s"
        listed = "none" if ndim == 0 else f"0 to {ndim - 1}, or -1 down to -{ndim}"
        return (
            f"The array has {axes}, so there is no axis {axis}: its axes are {listed}. axis=-1 always means "
            "the last axis, whatever the number of dimensions."
        )
    return None


def _reshape_size(message: str) -> str | None:
    """A reshape to a shape of another size."""
    found = re.search(r"cannot reshape array of size (\d+) into shape (\([\w,]*\))", message)
    if found:
        return (
            f"reshape keeps every element, and {found.group(1)} elements cannot fill the shape "
            f"{_shape(found.group(2))}. Check which sizes you multiplied: the product of the new shape must "
            f"be {found.group(1)}."
        )
    return None


def _assignment_shape(message: str) -> str | None:
    """An assignment of a value whose shape does not fit its place."""
    found = re.search(
        r"could not broadcast input array from shape (\([\d,]*\)) into shape (\([\d,]*\))", message
    )
    if found:
        value, place = (_shape(shape) for shape in found.groups())
        return (
            f"An assignment stores values only where their shape fits: an array of shape {value} does not "
            f"fit into a place of shape {place}. Check the index on the left and the shape of the value on "
            "the right."
        )
    return None


# Tried in turn; the first that recognises the message explains it.
_CRASH_EXPLANATIONS: tuple[Callable[[str], str | None], ...] = (
    _broadcast_shapes,
    _matmul_sizes,
    _dot_sizes,
    _boolean_mask_shape,
    _in_place_cast,
    _axis_out_of_bounds,
    _reshape_size,
    _assignment_shape,
)


def argument_name(index: int, params: Sequence[str] | None) -> str:
    """How a sentence names the argument at ``index``: ``"first argument (S)"`` or ``"third argument"``.

    Examples
    --------
    >>> argument_name(0, ["S"]), argument_name(2, None), argument_name(11, None)
    ('first argument (S)', 'third argument', 'argument 12')
    """
    position = f"{ORDINALS[index]} argument" if index < len(ORDINALS) else f"argument {index + 1}"
    if params is not None and index < len(params):
        return f"{position} ({params[index]})"
    return position


def _describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"of shape {value.shape}"
    if isinstance(value, dict):
        entries = [f"{key} {_describe_value(item)}" for key, item in list(value.items())[:MAX_LISTED]]
        more = ", …" if len(value) > MAX_LISTED else ""
        return f"(a dict with {_and(entries) if entries else 'no entries'}{more})"
    if isinstance(value, list | tuple) and any(isinstance(item, np.ndarray) for item in value):
        kind = "list" if isinstance(value, list) else "tuple"
        items = [_describe_value(item).removeprefix("of shape ") for item in value[:MAX_LISTED]]
        return f"(a {kind} of {len(value)} items: {_and(items)})"
    return f"= {short(value)}"


def call_shapes(args: Sequence[Any], params: Sequence[str] | None) -> str | None:
    """A sentence with the shapes of a call's arrays, or None when no argument holds an array.

    Examples
    --------
    >>> call_shapes((np.zeros((3, 4)), np.zeros(3), 2), ["S", "m", "axis"])
    'It was called with S of shape (3, 4), m of shape (3,) and axis = 2.'
    >>> call_shapes((np.zeros((3, 4)), 2), None)
    'It was called with an array of shape (3, 4) and 2.'
    >>> call_shapes((3, 4), ["a", "b"]) is None
    True
    """
    if not any(isinstance(arg, np.ndarray | dict | list | tuple) for arg in args):
        return None
    parts = []
    for index, arg in enumerate(args[:MAX_LISTED]):
        described = _describe_value(arg)
        if params is not None and index < len(params):
            parts.append(f"{params[index]} {described}")
        elif isinstance(arg, np.ndarray):
            parts.append(f"an array {described}")
        elif described.startswith("= "):
            parts.append(described.removeprefix("= "))
        else:
            parts.append(described.strip("()"))
    more = " and more" if len(args) > MAX_LISTED else ""
    return f"It was called with {_and(parts)}{more}."


def _index(position: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in position) + "]"


def _number(value: Any) -> str:
    try:
        return format_number(float(value)) if np.isfinite(value) else str(float(value))
    except (TypeError, ValueError, OverflowError):
        return str(value)


def describe_change(before: Any, after: Any, depth: int = 0) -> str:
    """What changed between an argument as the grader sent it and as the report shows it after the call.

    Examples
    --------
    >>> describe_change(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 2.0], [3.0, 0.0]]))
    '2 of its 4 values changed; the first, at [0, 0], went from 1 to 0'
    >>> describe_change(np.zeros((3, 4)), np.zeros(12))
    'its shape went from (3, 4) to (12,)'
    >>> describe_change({"W": np.zeros(2), "b": np.zeros(2)}, {"W": np.zeros(2), "b": np.ones(2)})
    "its entry 'b' changed: 2 of its 2 values changed; the first, at [0], went from 0 to 1"
    """
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray):
            return (
                f"it is no longer an array but {short(after)}"
                if not isinstance(after, Opaque)
                else "it changed"
            )
        if after.shape != before.shape:
            return f"its shape went from {before.shape} to {after.shape}"
        if after.dtype != before.dtype:
            return f"its dtype went from {before.dtype} to {after.dtype}"
        with np.errstate(all="ignore"):
            same = before == after
            if before.dtype.kind == "f" and after.dtype.kind == "f":
                same = same | (np.isnan(before) & np.isnan(after))
        differing = np.argwhere(~np.asarray(same))
        if not len(differing):
            return UNCHANGED
        first = tuple(differing[0])
        return (
            f"{len(differing)} of its {before.size} values changed; the first, at {_index(first)}, went from "
            f"{_number(before[first])} to {_number(after[first])}"
        )
    if isinstance(before, dict) and isinstance(after, dict) and depth < 4:
        lost = [repr(key) for key in before if key not in after]
        gained = [repr(key) for key in after if key not in before]
        if lost or gained:
            return (
                "its keys changed"
                + (f": it lost {_and(lost)}" if lost else "")
                + (f"{';' if lost else ':'} it gained {_and(gained[:MAX_LISTED])}" if gained else "")
            )
        for key, item in before.items():
            inner = describe_change(item, after[key], depth + 1)
            if inner != UNCHANGED:
                return f"its entry {key!r} changed: {inner}"
        return UNCHANGED
    if isinstance(before, list | tuple) and isinstance(after, list | tuple) and depth < 4:
        if len(before) != len(after):
            return f"it went from {len(before)} items to {len(after)}"
        for index, (item, now) in enumerate(zip(before, after, strict=True)):
            inner = describe_change(item, now, depth + 1)
            if inner != UNCHANGED:
                return f"its item {index} changed: {inner}"
        return UNCHANGED
    if type(before) is type(after) and _same_plain(before, after):
        return UNCHANGED
    return f"it went from {short(before)} to {short(after)}"


def _same_plain(before: Any, after: Any) -> bool:
    try:
        return bool(before == after) or (before != before and after != after)  # NaN stays NaN
    except Exception:
        return False


def describe_warnings(function: str, warnings: Sequence[Emitted]) -> str:
    """The sentence naming what a call emitted: its first warning, with the learner's line if known.

    Examples
    --------
    >>> emitted = Emitted("RuntimeWarning", ("RuntimeWarning",), "invalid value encountered in divide", 9)
    >>> describe_warnings("masked_softmax", [emitted])
    'masked_softmax emitted RuntimeWarning (line 9 of your file): invalid value encountered in divide'
    """
    first = warnings[0]
    where = f" (line {first.line} of your file)" if first.line is not None else ""
    others = len(warnings) - 1
    more = f", and {others} more warning{'s' if others > 1 else ''}" if others else ""
    return f"{function} emitted {first.category}{where}: {first.message.rstrip('. ')}{more}"


def _article(word: str) -> str:
    return "an" if word[:1] in "aeio" else "a"  # an int64, a uint8, a float64
