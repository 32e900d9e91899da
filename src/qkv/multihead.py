"""Multi-head attention: the model dimension cut into ``h`` heads that attend side by side.

    Q, K, V = X Wq, X Wk, X Wv                 (..., n, d_model) each
    Qᵢ, Kᵢ, Vᵢ = the i-th block of columns     (..., h, n, d_head), d_head = d_model / h
    headᵢ = softmax(Qᵢ Kᵢᵀ / √d_head) Vᵢ        one ``qkv.attention`` call attends in every head at once
    O = concat(head₀ … head_{h-1}) Wo           (..., n, d_out)

Every head sees every token but only its own slice of the features; ``Wo`` mixes the heads again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from qkv._validate import as_float_arrays, as_numeric_array, check_shared_d_k, check_size, shape_text
from qkv.attention import attention

__all__ = ["merge_heads", "multi_head_attention", "split_heads"]

FloatArray = npt.NDArray[np.floating[Any]]


def split_heads(X: npt.ArrayLike, h: int) -> npt.NDArray[Any]:
    """Cut the last axis of ``X`` into ``h`` equal heads: ``(..., n, d_model) → (..., h, n, d_model / h)``.

    Head ``i`` gets columns ``i·d_head … (i + 1)·d_head − 1`` of every row.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        Rows of features (one row per token); leading dimensions are kept in front.
    h : int
        The number of heads; it must divide ``d_model``.

    Returns
    -------
    ndarray, shape (..., h, n, d_model // h)
        The heads, with the dtype of ``X``.

    Raises
    ------
    ValueError
        If ``X`` has fewer than 2 dimensions, or ``h`` is not positive or does not divide ``d_model``.
    TypeError
        If ``h`` is not an int, or ``X`` does not hold real numbers.

    Examples
    --------
    >>> split_heads(np.arange(8).reshape(2, 4), 2)[1]  # head 1: the last two columns of each row
    array([[2, 3],
           [6, 7]])
    >>> split_heads(np.zeros((3, 6)), 4)
    Traceback (most recent call last):
    ...
    ValueError: h = 4 does not divide d_model = 6 (X has shape (3, 6)), so the heads cannot be equal.
    """
    array = as_numeric_array("X", X)
    heads = check_size("h", h)
    if array.ndim < 2:
        raise ValueError(
            "X must have at least 2 dimensions (..., n, d_model), "
            f"but it has shape {shape_text(array.shape)}."
        )
    *lead, n, d_model = array.shape
    if d_model % heads:
        raise ValueError(
            f"h = {heads} does not divide d_model = {d_model} (X has shape {shape_text(array.shape)}), "
            "so the heads cannot be equal."
        )
    d_head = d_model // heads
    split = array.reshape(*lead, n, heads, d_head)  # (..., n, h, d_head): each row cut into h pieces
    return np.swapaxes(split, -3, -2)  # (..., h, n, d_head)


def merge_heads(H: npt.ArrayLike) -> npt.NDArray[Any]:
    """Put the heads side by side again: ``(..., h, n, d_head) → (..., n, h·d_head)``; undoes ``split_heads``.

    Parameters
    ----------
    H : array_like, shape (..., h, n, d_head)
        One ``(n, d_head)`` block per head.

    Returns
    -------
    ndarray, shape (..., n, h * d_head)
        Row ``t`` holds head 0's row ``t``, then head 1's, and so on; the dtype of ``H``.

    Raises
    ------
    ValueError
        If ``H`` has fewer than 3 dimensions.
    TypeError
        If ``H`` does not hold real numbers.

    Examples
    --------
    >>> X = np.arange(8).reshape(2, 4)
    >>> merge_heads(split_heads(X, 2))
    array([[0, 1, 2, 3],
           [4, 5, 6, 7]])
    """
    array = as_numeric_array("H", H)
    if array.ndim < 3:
        raise ValueError(
            "H must have at least 3 dimensions (..., h, n, d_head), "
            f"but it has shape {shape_text(array.shape)}."
        )
    *lead, heads, n, d_head = array.shape
    rows = np.swapaxes(array, -3, -2)  # (..., n, h, d_head)
    return rows.reshape(*lead, n, heads * d_head)  # (..., n, h·d_head)


def multi_head_attention(
    X: npt.ArrayLike,
    Wq: npt.ArrayLike,
    Wk: npt.ArrayLike,
    Wv: npt.ArrayLike,
    Wo: npt.ArrayLike,
    h: int,
    causal: bool = False,
) -> FloatArray:
    """Self-attention in ``h`` heads: project, split, attend in each head (scaled by √d_head), merge, mix.

    No biases, as the chapter teaches it; PyTorch's ``nn.MultiheadAttention(d_model, h, bias=False)`` with
    ``in_proj_weight = [Wqᵀ; Wkᵀ; Wvᵀ]`` and ``out_proj.weight = Woᵀ`` computes the same.

    Parameters
    ----------
    X : array_like, shape (..., n, d_model)
        The tokens; leading dimensions are a batch.
    Wq, Wk : array_like, shape (d_model, d_k)
        Query and key projections; ``h`` must divide ``d_k`` (usually ``d_k = d_model``).
    Wv : array_like, shape (d_model, d_v)
        Value projection; ``h`` must divide ``d_v``.
    Wo : array_like, shape (d_v, d_out)
        Mixes the merged heads.
    h : int
        The number of heads.
    causal : bool, default False
        Token ``i`` attends only to tokens ``0 … i`` in every head.

    Returns
    -------
    ndarray, shape (..., n, d_out)
        float32 for float32 inputs (float16 comes back as float16); float64 otherwise.

    Raises
    ------
    ValueError
        If a matrix's shape does not fit ``X`` or the others, or ``h`` does not divide ``d_k`` or ``d_v``.
    TypeError
        If ``h`` is not an int, ``causal`` not a bool, or an input does not hold real numbers.

    Examples
    --------
    Two tokens, identity projections: head 0 sees features 0–1, head 1 features 2–3.

    >>> I = np.eye(4)
    >>> X = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> multi_head_attention(X, I, I, I, I, 2, causal=True).round(2)
    array([[1.  , 0.  , 2.  , 0.  ],
           [0.33, 0.67, 0.66, 0.67]])
    """
    (x, wq, wk, wv, wo), out_dtype = as_float_arrays(("X", X), ("Wq", Wq), ("Wk", Wk), ("Wv", Wv), ("Wo", Wo))
    heads = check_size("h", h)
    if not isinstance(causal, bool | np.bool_):
        raise TypeError(f"causal must be True or False, not the {type(causal).__name__} {causal!r}.")
    _check_projections(x, wq, wk, wv, wo, heads)
    Q, K, V = (split_heads(x @ w, heads) for w in (wq, wk, wv))  # (..., h, n, d_head) each
    attended = attention(Q, K, V, causal=bool(causal))  # (..., h, n, d_v / h)
    O: FloatArray = merge_heads(attended) @ wo  # (..., n, d_out)
    return O.astype(out_dtype, copy=False)


def _check_projections(
    x: FloatArray, wq: FloatArray, wk: FloatArray, wv: FloatArray, wo: FloatArray, heads: int
) -> None:
    """Sentences for every way the five matrices can disagree, before any of them is multiplied."""
    if x.ndim < 2:
        raise ValueError(
            f"X must have at least 2 dimensions (..., n, d_model), but it has shape {shape_text(x.shape)}."
        )
    d_model = x.shape[-1]
    for name, w in (("Wq", wq), ("Wk", wk), ("Wv", wv), ("Wo", wo)):
        if w.ndim != 2:
            raise ValueError(f"{name} must be a matrix, but it has shape {shape_text(w.shape)}.")
    for name, w in (("Wq", wq), ("Wk", wk), ("Wv", wv)):
        if w.shape[0] != d_model:
            raise ValueError(
                f"{name} has {w.shape[0]} rows but X has d_model = {d_model} columns "
                f"(X {shape_text(x.shape)}, {name} {shape_text(w.shape)})."
            )
    check_shared_d_k(wq, wk)
    if wo.shape[0] != wv.shape[1]:
        raise ValueError(
            f"Wo has {wo.shape[0]} rows but the merged heads have d_v = {wv.shape[1]} columns "
            f"(Wv {shape_text(wv.shape)}, Wo {shape_text(wo.shape)})."
        )
    for what, width in (("d_k", wq.shape[1]), ("d_v", wv.shape[1])):
        if width % heads:
            raise ValueError(f"h = {heads} does not divide {what} = {width}, so the heads cannot be equal.")
