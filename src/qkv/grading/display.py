"""Values written as a learner reads and types them: in messages, on the page, in calls that repeat tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from qkv.grading.values import Opaque, dtype_name

__all__ = ["format_number", "format_value", "python_call", "python_literal", "short", "show"]

SHORT_LIMIT = 120  # characters of a value shown in a sentence before it is described instead


def show(value: Any) -> str:
    """A value the way a learner would print it.

    Examples
    --------
    >>> show(np.array([[1.5, 2.0]]))
    'array([[1.5, 2. ]])'
    >>> show((2, 3)), show((4,)), show({"Q": (1, 2)})
    ('(2, 3)', '(4,)', "{'Q': (1, 2)}")
    """
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, separator=", ", prefix="array(").join(("array(", ")"))
    if isinstance(value, Opaque):
        return f"a {value.type} object {value.repr}"
    container = _container(value, show)
    return repr(value) if container is None else container


def _container(value: Any, write: Callable[[Any], str]) -> str | None:
    """A tuple, list or dict written as Python writes it, each item by ``write``; None for other values."""
    if isinstance(value, tuple | list):
        inner = ", ".join(write(item) for item in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{write(k)}: {write(v)}" for k, v in value.items()) + "}"
    return None


def short(value: Any) -> str:
    """``show(value)`` when it is short; otherwise what it is, not a wall of numbers.

    Examples
    --------
    >>> short(np.zeros((40, 3)))
    'an array of shape (40, 3)'
    >>> short((np.zeros((4, 30)), np.zeros((4, 30)), np.zeros((4, 2))))
    'a tuple of 3 arrays with shapes (4, 30), (4, 30) and (4, 2)'
    >>> short([1, 2])
    '[1, 2]'
    """
    text = show(value)
    if len(text) <= SHORT_LIMIT:
        return text
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, tuple | list) and value and all(isinstance(item, np.ndarray) for item in value):
        shapes = [str(item.shape) for item in value]
        listed = shapes[0] if len(shapes) == 1 else ", ".join(shapes[:-1]) + " and " + shapes[-1]
        kind = "tuple" if isinstance(value, tuple) else "list"
        plural = "s" if len(value) > 1 else ""
        return f"a {kind} of {len(value)} array{plural} with shape{plural} {listed}"
    return text[:SHORT_LIMIT] + "…"


_DEFAULT_DTYPES = {"int64", "float64", "bool"}  # what np.array gives for Python ints, floats and bools


def python_literal(value: Any) -> str:
    """``value`` as Python source that rebuilds it exactly (NumPy arrays as ``np.array(...)``).

    Examples
    --------
    >>> python_literal(np.array([[1, 2]]))
    'np.array([[1, 2]])'
    >>> python_literal(np.array([0.1], dtype=np.float32))
    'np.array([0.10000000149011612], dtype=np.float32)'
    >>> python_literal((2, "a", None))
    "(2, 'a', None)"
    """
    if isinstance(value, np.ndarray):
        dtype = "" if dtype_name(value.dtype) in _DEFAULT_DTYPES else f", dtype=np.{value.dtype}"
        return f"np.array({value.tolist()!r}{dtype})"
    container = _container(value, python_literal)
    return repr(value) if container is None else container


def python_call(function: str, args: Sequence[Any], keywords: Sequence[str] = ()) -> str:
    """The call as a learner would type it to repeat a test: the last ``len(keywords)`` arguments
    written as ``name=value``.

    Examples
    --------
    >>> python_call("volume", (3, 5, 7))
    'volume(3, 5, 7)'
    >>> python_call("f", (np.array([[1.5, -2.25]]), 2))
    'f(np.array([[1.5, -2.25]]), 2)'
    >>> python_call("f", (np.array([1.5], dtype=np.float32), True), ("causal",))
    'f(np.array([1.5], dtype=np.float32), causal=True)'
    """
    split = len(args) - len(keywords)
    written = [python_literal(arg) for arg in args[:split]]
    written += [f"{name}={python_literal(arg)}" for name, arg in zip(keywords, args[split:], strict=True)]
    return f"{function}({', '.join(written)})"


def format_number(value: float) -> str:
    """Write a number the way the lesson does: whole numbers without ``.0``, others to 6 decimals.

    Examples
    --------
    >>> format_number(3.0), format_number(-0.0), format_number(1.3395230986533138), format_number(2.5e-9)
    ('3', '0', '1.339523', '2.5e-09')
    """
    if float(value).is_integer():
        return str(int(value))
    if abs(value) < 1e-4:
        return f"{value:.6g}"
    return f"{value:.6f}".rstrip("0").rstrip(".")


def format_value(value: object) -> str:
    """Write a number or a (nested) list of numbers as ``[3, 2]`` / ``[[1, 0], [1, 1]]``.

    Examples
    --------
    >>> format_value([[1, 0], [1, 1]]), format_value([0.5, 2]), format_value("V")
    ('[[1, 0], [1, 1]]', '[0.5, 2]', 'V')
    """
    if isinstance(value, bool) or not isinstance(value, int | float | list | tuple):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    return format_number(value)
