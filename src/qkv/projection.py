"""The lesson's Part 2: project hidden vectors into queries, keys and values, and the shapes involved.

Every token's hidden vector ``x`` (a row of ``X``) is multiplied by three learned matrices::

    Q = X @ Wq    # (n, d_k)  what each position is looking for
    K = X @ Wk    # (n, d_k)  what each position offers to be matched
    V = X @ Wv    # (n, d_v)  what each position passes along if chosen
"""

from __future__ import annotations

from typing import Any

import numpy.typing as npt

from qkv._validate import as_numeric_array, check_shared_d_k, check_size, shape_text

__all__ = ["output_shape", "param_count", "project_qkv", "qkv_shapes"]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _as_matrix(name: str, value: npt.ArrayLike, layout: str) -> npt.NDArray[Any]:
    array = as_numeric_array(name, value)
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array {layout}, but it has {array.ndim} dimension"
            f"{'' if array.ndim == 1 else 's'} (shape {shape_text(array.shape)})."
        )
    return array


def project_qkv(
    X: npt.ArrayLike, Wq: npt.ArrayLike, Wk: npt.ArrayLike, Wv: npt.ArrayLike
) -> tuple[npt.NDArray[Any], npt.NDArray[Any], npt.NDArray[Any]]:
    """Project hidden vectors into queries, keys and values.

    Parameters
    ----------
    X : array_like, shape (n, d_model)
        One hidden vector per row (per token).
    Wq, Wk : array_like, shape (d_model, d_k)
        Query and key weights. They must have the same number of columns, because every query is
        compared with every key by a dot product.
    Wv : array_like, shape (d_model, d_v)
        Value weights; ``d_v`` may differ from ``d_k``.

    Returns
    -------
    tuple of ndarray
        ``(Q, K, V) = (X @ Wq, X @ Wk, X @ Wv)`` with shapes ``(n, d_k)``, ``(n, d_k)``, ``(n, d_v)``.
        The inputs are not modified.

    Raises
    ------
    ValueError
        If ``X`` or a weight matrix is not 2-D, a weight matrix does not have ``d_model`` rows, or
        ``Wq`` and ``Wk`` have different numbers of columns.
    TypeError
        If an argument does not hold real numbers.

    Examples
    --------
    The lesson's token ``x = [1, 2]``:

    >>> Q, K, V = project_qkv([[1, 2]], [[1, 0], [1, 1]], [[0, 1], [1, 0]], [[2, 0], [0, 2]])
    >>> Q, K, V
    (array([[3, 2]]), array([[2, 1]]), array([[2, 4]]))
    >>> project_qkv([[1, 2]], [[1, 0], [1, 1]], [[0, 1, 0], [1, 0, 0]], [[2, 0], [0, 2]])
    Traceback (most recent call last):
    ...
    ValueError: Wk has 3 columns but Wq has 2; queries and keys must share d_k.
    """
    X = _as_matrix("X", X, "(n, d_model)")
    Wq = _as_matrix("Wq", Wq, "(d_model, d_k)")
    Wk = _as_matrix("Wk", Wk, "(d_model, d_k)")
    Wv = _as_matrix("Wv", Wv, "(d_model, d_v)")
    d_model = X.shape[1]
    for name, weight in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if weight.shape[0] != d_model:
            raise ValueError(
                f"{name} has {_count(weight.shape[0], 'row')} but X has d_model = {d_model} columns; "
                f"every weight matrix needs one row per hidden feature."
            )
    check_shared_d_k(Wq, Wk)
    return X @ Wq, X @ Wk, X @ Wv  # (n, d_k), (n, d_k), (n, d_v)


def qkv_shapes(n: int, d_model: int, d_k: int, d_v: int) -> dict[str, tuple[int, int]]:
    """The shapes of Q, K and V for ``n`` tokens.

    Parameters
    ----------
    n : int
        Number of tokens (rows of ``X``).
    d_model : int
        Width of the hidden vectors. It does not appear in the result (the projections replace it)
        but must still be a valid size.
    d_k, d_v : int
        Columns of the query/key weights and of the value weights.

    Returns
    -------
    dict
        ``{"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}``.

    Raises
    ------
    TypeError
        If a size is not an int (a bool or a float, say).
    ValueError
        If a size is zero or negative.

    Examples
    --------
    >>> qkv_shapes(5, 16, 8, 4)
    {'Q': (5, 8), 'K': (5, 8), 'V': (5, 4)}
    """
    n, _, d_k, d_v = (
        check_size(name, value)
        for name, value in (("n", n), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v))
    )
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q: int, n_k: int, d_v: int) -> tuple[int, int]:
    """The shape of the attention output: one row per query, ``d_v`` columns.

    Parameters
    ----------
    n_q, n_k : int
        Number of queries and of keys. The keys are averaged away, so ``n_k`` does not appear.
    d_v : int
        Width of the value vectors.

    Returns
    -------
    tuple of int
        ``(n_q, d_v)``.

    Raises
    ------
    TypeError
        If a size is not an int.
    ValueError
        If a size is zero or negative.

    Examples
    --------
    >>> output_shape(3, 7, 4)
    (3, 4)
    """
    n_q, _, d_v = (check_size(name, value) for name, value in (("n_q", n_q), ("n_k", n_k), ("d_v", d_v)))
    return (n_q, d_v)


def param_count(d_model: int, d_k: int, d_v: int) -> int:
    """The number of weights in Wq, Wk and Wv together (no biases).

    Parameters
    ----------
    d_model, d_k, d_v : int
        ``Wq`` and ``Wk`` are ``(d_model, d_k)``; ``Wv`` is ``(d_model, d_v)``.

    Returns
    -------
    int
        ``d_model * (2 * d_k + d_v)``.

    Raises
    ------
    TypeError
        If a size is not an int.
    ValueError
        If a size is zero or negative.

    Examples
    --------
    >>> param_count(2, 2, 2)
    12
    >>> param_count(512, 64, 64)
    98304
    """
    d_model, d_k, d_v = (
        check_size(name, value) for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v))
    )
    return d_model * d_k + d_model * d_k + d_model * d_v  # Wq + Wk + Wv
