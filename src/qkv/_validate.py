"""Argument checks shared by the core modules: each failure is a sentence that quotes the value."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt


def check_size(name: str, value: object) -> int:
    """Return ``value`` as an int if it is a positive whole number; otherwise raise a clear error."""
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a positive int, not the bool {value!r}.")
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a positive int, not the {type(value).__name__} {value!r}.")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, but it is {value}.")
    return int(value)


def as_numeric_array(name: str, value: npt.ArrayLike) -> npt.NDArray[Any]:
    """Convert ``value`` to an ndarray of real numbers (bool, int or float), naming it in any error."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{name} is not a rectangular array of numbers ({error}).") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers, but its dtype is {array.dtype}; "
            "convert it with np.asarray(..., dtype=float) first."
        )
    return array


def shape_text(shape: tuple[int, ...]) -> str:
    """``(3,)`` for one dimension, ``(2, 3)`` for two: the way NumPy prints shapes."""
    return str(tuple(int(n) for n in shape))
