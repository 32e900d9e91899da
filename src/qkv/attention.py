"""The chapter's math for one attention head.

    S = Q Kᵀ / √d_k + M        scores, with the mask M (0 where allowed, -inf where excluded)
    A = softmax_rows(S)         weights: each query's row sums to 1 over the keys it may see
    O = A V                     output: a weighted average of the value vectors

A query whose keys are *all* masked has no defined softmax (0/0); ``attention`` applies an explicit
policy to such rows (see ``all_masked``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from qkv._blocked import blocked_attention, fits_one_tile, one_tile_attention
from qkv._validate import COMPUTE_DTYPES, as_float_arrays, as_numeric_array, check_size, shape_text

__all__ = ["attention", "attention_scores", "causal_mask", "softmax"]

AllMaskedPolicy = Literal["zero", "nan", "raise"]
CausalAlign = Literal["top-left", "bottom-right"]
FloatArray = npt.NDArray[np.floating[Any]]

_ALL_MASKED_POLICIES = ("zero", "nan", "raise")
_ALIGNS = ("top-left", "bottom-right")
_NDARRAY = np.ndarray  # (a global read, not a global's attribute: _one_small_head counts nanoseconds)


def attention_scores(Q: npt.ArrayLike, K: npt.ArrayLike, *, scale: float | None = None) -> FloatArray:
    """Scaled dot-product scores ``S = Q Kᵀ · scale`` (no mask, no softmax).

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
        Queries, one per row.
    K : array_like, shape (..., n_k, d_k)
        Keys, one per row. Leading (batch) dimensions broadcast with Q's.
    scale : float, optional
        Factor applied to the dot products; ``1 / sqrt(d_k)`` by default.

    Returns
    -------
    ndarray, shape (..., n_q, n_k)
        ``S[..., i, j]`` scores query ``i`` against key ``j``.

    Raises
    ------
    ValueError
        If Q and K have different ``d_k`` or their batch dimensions do not broadcast.
    TypeError
        If an input does not hold real numbers or ``scale`` is not a real number.

    Examples
    --------
    >>> attention_scores([[1, 0]], [[1, 0], [0, 1]])
    array([[0.70710678, 0.        ]])
    >>> attention_scores([[1, 0]], [[1, 0], [0, 1]], scale=1.0)
    array([[1., 0.]])
    """
    (q, k), out_dtype = as_float_arrays(("Q", Q), ("K", K))
    _check_qk(q, k)
    scale = _resolve_scale(scale, q.shape[-1])
    return _scores(q, k, scale).astype(out_dtype, copy=False)


def softmax(S: npt.ArrayLike, axis: int = -1) -> FloatArray:
    """Softmax along ``axis``: exponentiate, then normalise so each slice sums to 1.

    The maximum is subtracted first, so scores of ±1000 neither overflow nor underflow to 0/0.
    Entries of ``-inf`` get weight exactly 0. A slice that is entirely ``-inf`` has no defined
    softmax and comes out as NaN; ``attention`` decides what such rows mean.

    Parameters
    ----------
    S : array_like
        Scores.
    axis : int, default -1
        The axis to normalise over (the keys, for attention scores).

    Returns
    -------
    ndarray
        Same shape as ``S``; float32 stays float32, float16 is computed in float32, anything else
        becomes float64.

    Raises
    ------
    TypeError
        If ``S`` does not hold real numbers.

    Examples
    --------
    >>> softmax([1 / 2**0.5, 0.0])
    array([0.66976155, 0.33023845])
    >>> softmax([1000.0, -1000.0, -np.inf])
    array([1., 0., 0.])
    """
    (s,), out_dtype = as_float_arrays(("S", S))
    return _softmax(s, axis).astype(out_dtype, copy=False)


def causal_mask(n_q: int, n_k: int, *, align: CausalAlign = "top-left") -> npt.NDArray[np.bool_]:
    """Which keys each query may attend to under causal masking (True = may attend).

    Parameters
    ----------
    n_q, n_k : int
        Number of queries and keys.
    align : {"top-left", "bottom-right"}
        ``"top-left"`` lets query ``i`` see keys ``j <= i`` (PyTorch's ``is_causal``).
        ``"bottom-right"`` lines up the *last* query with the last key, ``j <= i + n_k - n_q``:
        the right choice when decoding new queries against a longer cache of keys.

    Returns
    -------
    ndarray of bool, shape (n_q, n_k)

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive int, or ``align`` is not one of the two names.

    Examples
    --------
    >>> causal_mask(2, 3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0]])
    >>> causal_mask(2, 3, align="bottom-right").astype(int)
    array([[1, 1, 0],
           [1, 1, 1]])
    """
    n_q = check_size("n_q", n_q)
    n_k = check_size("n_k", n_k)
    if align not in _ALIGNS:
        raise ValueError(f"align must be 'top-left' or 'bottom-right', not {align!r}.")
    return _causal_triangle(n_q, n_k, align)


def _causal_triangle(n_q: int, n_k: int, align: CausalAlign) -> npt.NDArray[np.bool_]:
    """``causal_mask`` for sizes already checked (0 allowed: a call with no queries has an empty one)."""
    offset = 0 if align == "top-left" else n_k - n_q
    query = np.arange(n_q)[:, None]  # (n_q, 1)
    key = np.arange(n_k)[None, :]  # (1, n_k)
    return key <= query + offset  # (n_q, n_k)


def attention(
    Q: npt.ArrayLike,
    K: npt.ArrayLike,
    V: npt.ArrayLike,
    *,
    mask: npt.ArrayLike | None = None,
    causal: bool | CausalAlign = False,
    scale: float | None = None,
    all_masked: AllMaskedPolicy = "zero",
    return_weights: bool = False,
) -> FloatArray | tuple[FloatArray, FloatArray]:
    """Scaled dot-product attention for one head: ``O = softmax(Q Kᵀ · scale + M) V``.

    Parameters
    ----------
    Q : array_like, shape (..., n_q, d_k)
    K : array_like, shape (..., n_k, d_k)
    V : array_like, shape (..., n_k, d_v)
        Leading (batch) dimensions broadcast against each other.
    mask : array_like, optional
        Broadcastable to ``(..., n_q, n_k)``. A bool mask says which keys each query may attend to
        (True = allowed). A float mask is *added* to the scores (0 to allow, ``-inf`` to exclude).
    causal : bool or {"top-left", "bottom-right"}, default False
        ``True`` (or ``"top-left"``) lets query ``i`` see keys ``j <= i``; ``"bottom-right"``
        aligns the last query with the last key. Combined with ``mask`` if both are given.
    scale : float, optional
        Factor on the dot products; ``1 / sqrt(d_k)`` by default.
    all_masked : {"zero", "nan", "raise"}, default "zero"
        What a query whose keys are all masked gets: ``"zero"`` gives zero weights and a zero
        output row (as PyTorch's ``scaled_dot_product_attention`` does); ``"nan"`` gives NaN, the
        mathematical 0/0; ``"raise"`` raises ``ValueError`` naming the rows.
    return_weights : bool, default False
        Also return the weights ``A``. This materialises the whole ``(..., n_q, n_k)`` matrix, so
        it always takes the plain path; without it, long sequences are computed block by block and
        never hold the score matrix (same result, see ``qkv._blocked``).

    Returns
    -------
    O : ndarray, shape (..., n_q, d_v)
        The output; returned alone unless ``return_weights``.
    A : ndarray, shape (..., n_q, n_k)
        The attention weights, when ``return_weights`` is true.

    float32 inputs give float32 results; float16 is computed with float32 accumulation and
    returned as float16; ints and bools are computed and returned as float64.

    Raises
    ------
    ValueError
        If the shapes disagree (``d_k`` of Q and K, ``n_k`` of K and V, batch dimensions, the mask),
        a policy name is unknown, or ``all_masked="raise"`` and some query has no allowed key.
    TypeError
        If an input is complex or not numeric, or ``scale`` is not a real number.

    Examples
    --------
    The chapter's worked example: one query, two keys, ``d_k = 2``.

    >>> q = [[1, 0]]
    >>> K = [[1, 0], [0, 1]]
    >>> V = [[2, 0], [0, 2]]
    >>> O, A = attention(q, K, V, return_weights=True)
    >>> A.round(6)
    array([[0.669762, 0.330238]])
    >>> O.round(6)
    array([[1.339523, 0.660477]])

    If only the first key is allowed, the output is the first value:

    >>> attention(q, K, V, mask=[[True, False]])
    array([[2., 0.]])
    """
    usual = mask is None and not return_weights and all_masked in _ALL_MASKED_POLICIES
    if usual and (O := _one_small_head(Q, K, V, causal, scale)) is not None:
        return O  # a small head without a mask, taken in a few attribute reads (see _one_small_head)
    (q, k, v), out_dtype = as_float_arrays(("Q", Q), ("K", K), ("V", V))
    _check_qk(q, k)
    _check_kv(k, v)
    n_q, n_k = q.shape[-2], k.shape[-2]
    batch = _broadcast_batch(q, k, v)
    scale = _resolve_scale(scale, q.shape[-1])
    if all_masked not in _ALL_MASKED_POLICIES:
        raise ValueError(f"all_masked must be 'zero', 'nan' or 'raise', not {all_masked!r}.")
    if n_k == 0:
        raise ValueError(
            f"K and V have no rows (K {shape_text(k.shape)}, V {shape_text(v.shape)}), so no query has "
            "a key to attend to; attention needs at least one key."
        )
    if not return_weights and n_q > 0:  # (no queries: the plain path has nothing to compute)
        O = _streamed(q, k, v, mask, causal, scale, all_masked, (*batch, n_q, n_k))
        return O.astype(out_dtype, copy=False)
    allowed, bias = _mask_parts(mask, causal, (*batch, n_q, n_k), q.dtype)

    S = _scores(q, k, scale)  # (..., n_q, n_k)
    if bias is not None:
        S = S + bias  # float mask: 0 keeps a score, -inf removes it
    if allowed is not None:
        S = np.where(allowed, S, -np.inf)  # bool mask and causal: excluded keys get -inf
    A = _softmax(S, axis=-1)  # (..., n_q, n_k); all-masked rows are NaN here
    if allowed is not None or bias is not None:  # without a mask no row can be all-masked
        A = _apply_all_masked_policy(A, S, all_masked)
    O = _weighted_values(A, v)  # (..., n_q, d_v)

    O = O.astype(out_dtype, copy=False)
    if return_weights:
        return O, A.astype(out_dtype, copy=False)
    return O


def _one_small_head(
    Q: npt.ArrayLike, K: npt.ArrayLike, V: npt.ArrayLike, causal: object, scale: object
) -> FloatArray | None:
    """``attention`` of the usual call without a mask, or None to have ``attention`` check and compute
    the call in full (and word its errors).

    The usual call: one head of float32 or float64 ndarrays of one dtype whose shapes agree, scores
    that fit one tile, ``causal`` a bool or an alignment, ``scale`` None or a finite float. On a few
    tokens the arithmetic is a handful of NumPy calls of a microsecond or two each, and the general
    checks with the layers between them and the tile (a few microseconds of Python) made qkv slower
    than the naive three lines (docs/performance.md); this accepts such calls in a few attribute reads.
    A head that the one tile cannot sum exactly (``one_tile_attention`` returns None) goes the general
    way, whose ``blocked_attention`` tries the tile once more before its blocks.
    """
    if not (type(Q) is _NDARRAY and type(K) is _NDARRAY and type(V) is _NDARRAY):
        return None
    dtype = Q.dtype
    if not (dtype is K.dtype is V.dtype and dtype in COMPUTE_DTYPES):
        return None
    q_shape, k_shape, v_shape = Q.shape, K.shape, V.shape
    if not (len(q_shape) == len(k_shape) == len(v_shape) == 2 and q_shape[1] == k_shape[1] > 0):
        return None
    (n_q, d_k), n_k = q_shape, k_shape[0]
    if v_shape[0] != n_k or n_q == 0 or n_k == 0 or not fits_one_tile(n_q, n_k):
        return None
    if causal is False:
        offset = None
    elif causal is True:
        offset = 0
    elif type(causal) is str and causal in _ALIGNS:
        offset = 0 if causal == "top-left" else n_k - n_q
    else:
        return None
    if scale is None:
        scale = 1.0 / math.sqrt(d_k)
    elif type(scale) is not float or not math.isfinite(scale):
        return None
    return one_tile_attention(Q, K, V, scale, None, None, offset)


def _streamed(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    mask: npt.ArrayLike | None,
    causal: bool | str,
    scale: float,
    all_masked: str,
    scores_shape: tuple[int, ...],
) -> FloatArray:
    """The same attention for long sequences, streamed through key blocks by ``qkv._blocked``."""
    n_q, n_k = scores_shape[-2:]
    align = _causal_align(causal)
    if mask is None and align is None:  # every query sees every key: none can be left without one
        return blocked_attention(q, k, v, scale=scale)[0]
    allowed, bias = _mask_parts(mask, False, scores_shape, q.dtype)  # causality is applied per block
    offset = None if align is None else (0 if align == "top-left" else n_k - n_q)
    O, dead = blocked_attention(q, k, v, scale=scale, allowed=allowed, bias=bias, causal_offset=offset)
    if mask is None and offset is not None and offset >= 0:
        return O  # causal alone, every query sees key 0: none is dead (and dead.any() costs 1 µs)
    if not dead.any():
        return O
    # Report dead rows in the scores' batch shape (V's batch dimensions play no part), as the plain
    # path does; the policy helper reads a row as dead when its scores are all -inf.
    parts = [q.shape[:-2], k.shape[:-2], *(m.shape[:-2] for m in (allowed, bias) if m is not None)]
    scores_batch = np.broadcast_shapes(*parts)
    extra = len(scores_shape) - 2 - len(scores_batch)
    pick = (0,) * extra + tuple(slice(None) if size > 1 else slice(0, 1) for size in scores_batch)
    return _apply_all_masked_policy(O, np.where(dead[pick], -np.inf, 0.0)[..., None], all_masked)


# -- the steps ---------------------------------------------------------------------------------------


def _scores(q: FloatArray, k: FloatArray, scale: float) -> FloatArray:
    # Scaling q rather than the product costs n_q·d_k multiplications instead of n_q·n_k.
    return (q * q.dtype.type(scale)) @ np.swapaxes(k, -1, -2)  # (..., n_q, n_k)


def _softmax(s: FloatArray, axis: int) -> FloatArray:
    peak = _peaks(s, axis)  # an all -inf slice gets 0, so it becomes 0/0
    weights = _shifted(s, peak)  # s - peak: a new array, the caller's s stays as it is
    _exp_in_place(weights)
    return _normalised(weights, axis)


def _peaks(s: FloatArray, axis: int) -> FloatArray:
    peak: FloatArray = s.max(axis=axis, keepdims=True, initial=-np.inf)  # -inf: no entries at all
    peak[~np.isfinite(peak)] = 0
    return peak


def _shifted(s: FloatArray, peak: FloatArray) -> FloatArray:
    return s - peak


def _exp_in_place(weights: FloatArray) -> None:
    np.exp(weights, out=weights)


def _normalised(weights: FloatArray, axis: int) -> FloatArray:
    total = weights.sum(axis=axis, keepdims=True)
    if total.all():
        weights /= total
    else:
        with np.errstate(invalid="ignore"):  # 0/0: a slice with no allowed entry is NaN
            weights /= total
    return weights


def _weighted_values(A: FloatArray, v: FloatArray) -> FloatArray:
    return A @ v  # (..., n_q, d_v)


def _apply_all_masked_policy(A: FloatArray, S: FloatArray, policy: str) -> FloatArray:
    dead = np.all(np.isneginf(S), axis=-1)  # (..., n_q): queries with no key left
    if not dead.any():
        return A
    if policy == "raise":
        rows = [index[0] if len(index) == 1 else tuple(index) for index in np.argwhere(dead).tolist()]
        shown = ", ".join(map(str, rows[:10])) + (" …" if len(rows) > 10 else "")
        raise ValueError(
            f"Every key is masked for query row{'s' if len(rows) > 1 else ''} {shown}; "
            "such a query has no defined attention (pass all_masked='zero' or 'nan' to allow it)."
        )
    fill = 0.0 if policy == "zero" else np.nan
    return np.where(dead[..., None], A.dtype.type(fill), A)


# -- inputs ------------------------------------------------------------------------------------------


def _check_qk(q: FloatArray, k: FloatArray) -> None:
    for name, array, layout in (("Q", q, "(..., n_q, d_k)"), ("K", k, "(..., n_k, d_k)")):
        if array.ndim < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions {layout}, "
                f"but its shape is {shape_text(array.shape)}."
            )
    if k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"K has d_k = {k.shape[-1]} columns but Q has {q.shape[-1]} "
            f"(Q {shape_text(q.shape)}, K {shape_text(k.shape)}); queries and keys must share d_k."
        )


def _check_kv(k: FloatArray, v: FloatArray) -> None:
    if v.ndim < 2:
        raise ValueError(
            f"V must have at least 2 dimensions (..., n_k, d_v), but its shape is {shape_text(v.shape)}."
        )
    if v.shape[-2] != k.shape[-2]:
        raise ValueError(
            f"V has {v.shape[-2]} rows but K has {k.shape[-2]} "
            f"(K {shape_text(k.shape)}, V {shape_text(v.shape)}); every key needs exactly one value."
        )


def _broadcast_batch(q: FloatArray, k: FloatArray, v: FloatArray) -> tuple[int, ...]:
    if q.ndim == k.ndim == v.ndim == 2:
        return ()  # one head, the usual case: no tuples to slice and compare
    if q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
        return q.shape[:-2]  # nothing to broadcast (np.broadcast_shapes costs microseconds)
    try:
        return tuple(np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    except ValueError:
        raise ValueError(
            f"The batch dimensions of Q {shape_text(q.shape)}, K {shape_text(k.shape)} and "
            f"V {shape_text(v.shape)} do not broadcast together."
        ) from None


def _resolve_scale(scale: object, d_k: int) -> float:
    if scale is None:
        if d_k == 0:
            raise ValueError(
                "Q and K have d_k = 0 columns, so the default scale 1/√d_k is undefined; "
                "pass scale= to score them (every dot product is then 0)."
            )
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool | np.bool_) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number, not the {type(scale).__name__} {scale!r}.")
    if not math.isfinite(float(scale)):
        raise ValueError(f"scale must be a finite number, but it is {scale!r}.")
    return float(scale)


def _causal_align(causal: object) -> CausalAlign | None:
    """The alignment that ``causal`` asks for, or None for no causal mask."""
    if causal is False:
        return None
    if causal is True:
        return "top-left"
    if isinstance(causal, str) and causal in _ALIGNS:
        return "top-left" if causal == "top-left" else "bottom-right"
    raise ValueError(f"causal must be False, True, 'top-left' or 'bottom-right', not {causal!r}.")


def _mask_parts(
    mask: npt.ArrayLike | None,
    causal: bool | str,
    scores_shape: tuple[int, ...],
    dtype: np.dtype[Any],
) -> tuple[npt.NDArray[np.bool_] | None, FloatArray | None]:
    """Split mask and causal into a bool "allowed" array and a float bias (either may be None)."""
    allowed: npt.NDArray[np.bool_] | None = None
    bias: FloatArray | None = None
    if mask is not None:
        m = as_numeric_array("mask", mask)
        try:
            fits = np.broadcast_shapes(m.shape, scores_shape) == scores_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"mask has shape {shape_text(m.shape)}, which does not broadcast to the scores' shape "
                f"{shape_text(scores_shape)} (..., n_q, n_k)."
            )
        if m.dtype == np.bool_:
            allowed = m
        else:
            if np.isnan(m).any() or np.isposinf(m).any():
                raise ValueError(
                    "A float mask is added to the scores, so it may hold finite numbers or -inf, "
                    "but this one holds NaN or +inf."
                )
            bias = m.astype(dtype, copy=False)
    align = _causal_align(causal)
    if align is not None:
        n_q, n_k = scores_shape[-2:]
        triangle = _causal_triangle(n_q, n_k, align)
        allowed = triangle if allowed is None else (allowed & triangle)
    return allowed, bias
