"""Well-known elementwise functions, to say which one a result is when it is not the expected one.

An exercise that asks for an activation (or any function applied entry by entry) is often answered with
a relative of it: GELU computed exactly where its tanh approximation was asked for, or with the sigmoid
approximation; ReLU; SiLU; the input itself. :func:`which_function` tells which of a fixed family of
such functions of the call's input a value is. The family is the usual activations of neural networks;
it names no lesson.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["FAMILY", "which_function"]

Array = np.ndarray[Any, Any]


def _sigmoid(x: Array) -> Array:
    return 0.5 * (1 + np.tanh(x / 2))  # the logistic function, without an overflow for large |x|


def _erf(x: Array) -> Array:
    return np.asarray(np.vectorize(math.erf, otypes=[float])(x), dtype=float)


FAMILY: tuple[tuple[str, Callable[[Array], Array]], ...] = (
    ("the input unchanged, x", lambda x: x),
    ("GELU computed exactly, 0.5·x·(1 + erf(x/√2))", lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    (
        "GELU's tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    ("GELU's sigmoid approximation, x·σ(1.702·x)", lambda x: x * _sigmoid(1.702 * x)),
    ("ReLU, max(0, x)", lambda x: np.maximum(0.0, x)),
    ("SiLU (swish), x·σ(x)", lambda x: x * _sigmoid(x)),
    ("the logistic sigmoid, σ(x) = 1/(1 + e^−x)", _sigmoid),
    ("tanh(x)", np.tanh),
    ("softplus, log(1 + e^x)", lambda x: np.logaddexp(0.0, x)),
)


def which_function(value: Array, x: Array, rtol: float, atol: float) -> str | None:
    """The name of the family's function that gives ``value`` from ``x`` entry by entry, or None.

    Examples
    --------
    >>> x = np.linspace(-3, 3, 7)
    >>> which_function(np.maximum(x, 0), x, 1e-7, 1e-9)
    'ReLU, max(0, x)'
    >>> which_function(x**2, x, 1e-7, 1e-9) is None
    True
    """
    if value.shape != x.shape or x.size == 0:
        return None
    with np.errstate(all="ignore"):
        for name, function in FAMILY:
            if np.allclose(value, function(x), rtol=rtol, atol=atol):
                return name
    return None
