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


COMPUTE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def as_float_arrays(*named: tuple[str, npt.ArrayLike]) -> tuple[list[npt.NDArray[Any]], np.dtype[Any]]:
    """Convert to one float dtype to compute in, and name the dtype of the result.

    float64 unless every input is float32 or float16; float16 is computed in float32 (its sums lose
    too much precision) and converted back at the end.
    """
    arrays = [as_numeric_array(name, value) for name, value in named]
    dtypes = {array.dtype for array in arrays}
    if len(dtypes) == 1 and (only := dtypes.pop()) in COMPUTE_DTYPES:
        return arrays, only  # the common case, and the cheapest check on small inputs
    out_dtype = result_dtype(*arrays)
    compute = np.float64 if out_dtype == np.float64 else np.float32
    return [array.astype(compute, copy=False) for array in arrays], out_dtype


def result_dtype(*arrays: npt.NDArray[Any]) -> np.dtype[Any]:
    """float16 or float32 when the inputs are no wider; float64 for everything else (ints, bools, float64)."""
    common = np.result_type(*arrays)
    if common.kind == "f" and common.itemsize <= 4:
        return common  # float16 or float32
    return np.dtype(np.float64)


def check_shared_d_k(wq: npt.NDArray[Any], wk: npt.NDArray[Any]) -> None:
    """Queries meet keys in dot products, so the projections Wq and Wk need the same number of columns."""
    if wk.shape[1] != wq.shape[1]:
        raise ValueError(
            f"Wk has {wk.shape[1]} columns but Wq has {wq.shape[1]}; queries and keys must share d_k."
        )
