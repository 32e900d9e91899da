"""Attention inside a transformer block: layer norm, GELU and the pre-norm block that joins them.

LN(x) = (x − mean(x)) / √(var(x) + eps) · γ + β         over the features of each token
GELU(x) ≈ ½ x (1 + tanh(√(2/π) (x + 0.044715 x³)))
X ← X + MHA(LN₁(X))                                      the residual stream carries X through
X ← X + W₂ GELU(W₁ LN₂(X) + b₁) + b₂
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from qkv._validate import as_float_arrays, shape_text
from qkv.multihead import multi_head_attention

__all__ = ["BLOCK_PARAMS", "gelu", "layer_norm", "transformer_block"]

FloatArray = npt.NDArray[np.floating[Any]]

# The names of one block's weights, in the order the chapter introduces them.
BLOCK_PARAMS = ("ln1_g", "ln1_b", "Wq", "Wk", "Wv", "Wo", "ln2_g", "ln2_b", "W1", "b1", "W2", "b2")
_TANH_FACTOR = math.sqrt(2 / math.pi)
_ERF = np.frompyfunc(math.erf, 1, 1)  # NumPy has no erf; math.erf is exact to a float64's precision


def layer_norm(X: npt.ArrayLike, gamma: npt.ArrayLike, beta: npt.ArrayLike, eps: float = 1e-5) -> FloatArray:
    """Normalise each token (the last axis) to mean 0 and variance 1, then scale by gamma and shift by beta.

    The variance is the plain mean of squared deviations (divided by ``d``, not ``d − 1``), and ``eps``
    sits inside the square root, as in PyTorch's ``nn.LayerNorm``.

    Parameters
    ----------
    X : array_like, shape (..., d)
        Tokens; each row is normalised on its own.
    gamma, beta : array_like, shape (d,)
        The learned scale and shift.
    eps : float, default 1e-5
        Added to the variance, so that a constant row does not divide by zero.

    Returns
    -------
    ndarray, shape (..., d)
        float32 for float32 inputs (float16 comes back as float16); float64 otherwise.

    Raises
    ------
    ValueError
        If ``X`` has no feature axis, ``gamma`` or ``beta`` is not of shape ``(d,)``, or ``eps`` is negative
        or not finite.
    TypeError
        If an input does not hold real numbers, or ``eps`` is not a real number.

    Examples
    --------
    >>> layer_norm([[1.0, 3.0], [2.0, 6.0]], [1.0, 1.0], [0.0, 0.0], eps=0.0)
    array([[-1.,  1.],
           [-1.,  1.]])
    >>> layer_norm([[1.0, 3.0]], [2.0, 2.0], [0.5, 0.5], eps=0.0)
    array([[-1.5,  2.5]])
    """
    (x, g, b), out_dtype = as_float_arrays(("X", X), ("gamma", gamma), ("beta", beta))
    eps = _check_eps(eps)
    if x.ndim < 1:
        raise ValueError(f"X must have a feature axis (..., d), but it is the scalar {x!r}.")
    d = x.shape[-1]
    for name, vector in (("gamma", g), ("beta", b)):
        if vector.shape != (d,):
            raise ValueError(
                f"{name} must have shape ({d},), one entry per feature of X {shape_text(x.shape)}, "
                f"but it has shape {shape_text(vector.shape)}."
            )
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean  # (..., d)
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1), divided by d
    normed = centred / np.sqrt(var + eps)  # (..., d)
    out: FloatArray = normed * g + b  # (..., d)
    return out.astype(out_dtype, copy=False)


def gelu(x: npt.ArrayLike, *, exact: bool = False) -> FloatArray:
    """GELU, the transformer's activation: the tanh form by default, ``x·Φ(x)`` with ``exact=True``.

    Parameters
    ----------
    x : array_like
        Any shape.
    exact : bool, default False
        ``False``: ``0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``, PyTorch's ``approximate="tanh"``.
        ``True``: ``0.5·x·(1 + erf(x/√2))``, PyTorch's default (computed element by element with
        ``math.erf``, so slower).

    Returns
    -------
    ndarray
        The shape of ``x``; float32 for float32 input (float16 comes back as float16); float64 otherwise.

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers or ``exact`` is not a bool.

    Examples
    --------
    >>> gelu([0.0, 1.0]).round(6)
    array([0.      , 0.841192])
    >>> gelu([1.0], exact=True).round(6)
    array([0.841345])
    """
    (values,), out_dtype = as_float_arrays(("x", x))
    if not isinstance(exact, bool | np.bool_):
        raise TypeError(f"exact must be True or False, not the {type(exact).__name__} {exact!r}.")
    if exact:
        wide = values.astype(np.float64, copy=False)
        phi = 0.5 * (1.0 + np.asarray(_ERF(wide / math.sqrt(2.0)), dtype=np.float64))  # Φ(x), the normal CDF
        return np.asarray(wide * phi).astype(out_dtype, copy=False)
    inner = _TANH_FACTOR * (values + 0.044715 * values**3)
    return np.asarray(0.5 * values * (1.0 + np.tanh(inner))).astype(out_dtype, copy=False)


def transformer_block(
    X: npt.ArrayLike, params: Mapping[str, npt.ArrayLike], h: int, causal: bool = True
) -> FloatArray:
    """One pre-norm transformer block: ``X + MHA(LN₁(X))``, then that plus ``MLP(LN₂(·))``.

    The MLP is ``GELU(x W1 + b1) W2 + b2`` with the tanh GELU; attention has no biases. PyTorch's
    ``nn.TransformerEncoderLayer(norm_first=True)`` with a tanh GELU, no dropout and zero attention biases
    computes the same.

    Parameters
    ----------
    X : array_like, shape (..., n, d)
        The residual stream: one row per token.
    params : mapping
        ``ln1_g, ln1_b, ln2_g, ln2_b`` of shape ``(d,)``; ``Wq, Wk, Wv, Wo`` of shape ``(d, d)``;
        ``W1 (d, d_ff)``, ``b1 (d_ff,)``, ``W2 (d_ff, d)``, ``b2 (d,)`` (``BLOCK_PARAMS`` lists them).
    h : int
        Attention heads; it must divide ``d``.
    causal : bool, default True
        Token ``i`` attends only to tokens ``0 … i`` (a decoder block).

    Returns
    -------
    ndarray, shape (..., n, d)
        float32 when ``X`` and every parameter are float32; float64 otherwise.

    Raises
    ------
    ValueError
        If a parameter is missing or has a shape that does not fit ``X``, or ``h`` does not divide ``d``.
    TypeError
        If ``params`` is not a mapping, ``h`` is not an int, or an input does not hold real numbers.

    Examples
    --------
    With no value projection and a zero MLP, nothing is added: the residual stream passes through.

    >>> d = 4
    >>> p = {"ln1_g": np.ones(d), "ln1_b": np.zeros(d), "ln2_g": np.ones(d), "ln2_b": np.zeros(d),
    ...      "Wq": np.eye(d), "Wk": np.eye(d), "Wv": np.zeros((d, d)), "Wo": np.eye(d),
    ...      "W1": np.zeros((d, 8)), "b1": np.zeros(8), "W2": np.zeros((8, d)), "b2": np.zeros(d)}
    >>> transformer_block(np.eye(d)[:2], p, 2)
    array([[1., 0., 0., 0.],
           [0., 1., 0., 0.]])
    """
    _check_params(params)
    (x, *weights), out_dtype = as_float_arrays(("X", X), *((name, params[name]) for name in BLOCK_PARAMS))
    p = dict(zip(BLOCK_PARAMS, weights, strict=True))
    W1, b1, W2, b2 = (p[name] for name in ("W1", "b1", "W2", "b2"))
    _check_mlp(x.shape[-1], W1, b1, W2, b2)  # before any work: a bad shape is told at once
    attended = multi_head_attention(
        layer_norm(x, p["ln1_g"], p["ln1_b"]), p["Wq"], p["Wk"], p["Wv"], p["Wo"], h, causal
    )  # (..., n, d)
    x = x + attended  # (..., n, d)
    normed = layer_norm(x, p["ln2_g"], p["ln2_b"])  # (..., n, d)
    hidden = gelu(normed @ W1 + b1)  # (..., n, d_ff)
    out: FloatArray = x + hidden @ W2 + b2  # (..., n, d)
    return out.astype(out_dtype, copy=False)


def _check_params(params: object) -> None:
    """A mapping that holds all twelve parameters; a sentence naming the missing ones."""
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of the block's weights, not a {type(params).__name__}.")
    missing = [name for name in BLOCK_PARAMS if name not in params]
    if missing:
        raise ValueError(
            f"params lacks {', '.join(missing)}; a block needs all of {', '.join(BLOCK_PARAMS)}."
        )


def _check_mlp(
    d: int, W1: npt.NDArray[Any], b1: npt.NDArray[Any], W2: npt.NDArray[Any], b2: npt.NDArray[Any]
) -> None:
    if W1.ndim != 2 or W1.shape[0] != d:
        raise ValueError(f"W1 must have shape ({d}, d_ff) for tokens of d = {d}, not {shape_text(W1.shape)}.")
    d_ff = W1.shape[1]
    for name, array, wanted in (("b1", b1, (d_ff,)), ("W2", W2, (d_ff, d)), ("b2", b2, (d,))):
        if array.shape != wanted:
            raise ValueError(
                f"{name} must have shape {shape_text(wanted)} (d = {d}, d_ff = {d_ff} from W1), "
                f"not {shape_text(array.shape)}."
            )


def _check_eps(eps: object) -> float:
    if isinstance(eps, bool | np.bool_) or not isinstance(eps, numbers.Real):
        raise TypeError(f"eps must be a small non-negative number, not the {type(eps).__name__} {eps!r}.")
    value = float(eps)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"eps must be a small non-negative number, but it is {eps!r}.")
    return value
