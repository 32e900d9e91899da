"""Known wrong answers to Part 2, each named in one sentence a learner understands.

When a result is wrong, the grader recomputes what each common mistake would have produced for the same
inputs; if the learner's result matches one, its hint is shown next to the failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

import numpy as np

from qkv.grading.values import numeric_array

__all__ = [
    "BIASES",
    "BY_COLUMNS",
    "ELEMENTWISE",
    "FIRST_ROW",
    "K_WITH_DV",
    "LOWERCASE_KEYS",
    "MISSING_COLUMN_CHECK",
    "MISSING_FUNCTION",
    "MISSING_MATRIX",
    "MISSING_ROW_CHECK",
    "NOT_A_TUPLE",
    "ORDER",
    "OUTPUT_SCORES",
    "OUTPUT_WITH_NK",
    "Q_TRANSPOSED",
    "SHAPE_NOT_TUPLE",
    "STUB",
    "THREE_DK",
    "TOO_STRICT",
    "TRUNCATION",
    "TYPE_ERROR",
    "V_TRANSPOSED",
    "exception_hint",
    "param_count_hint",
    "projection_hint",
    "returned_instead_of_raise_hint",
    "shape_hint",
]

STUB = "Your function still returns None: replace `pass` with a `return` statement that gives the result."
MISSING_FUNCTION = (
    "Keep all four functions of the starter code, with their names spelled exactly: "
    "project_qkv, qkv_shapes, output_shape and param_count."
)
BY_COLUMNS = (
    "It looks like the weights were applied by columns (X @ W.T): the lesson writes each matrix by rows, "
    "so every projection is simply X @ W."
)
ORDER = "Your Q, K and V are right but come back in another order: return them as (Q, K, V)."
NOT_A_TUPLE = "Return the three matrices together as the tuple (Q, K, V)."
ELEMENTWISE = (
    "It looks like `*` multiplied the matrices element by element; a projection is a matrix product, "
    "written X @ W."
)
FIRST_ROW = "Only the first row of X was projected: X @ W projects every token (every row of X) at once."
TRUNCATION = (
    "Your numbers look cut to whole numbers: keep the values as floats (no int(), astype(int) or dtype=int)."
)
MISSING_COLUMN_CHECK = (
    "Raise ValueError when Wq and Wk have different numbers of columns: every query is compared with every "
    "key, so both need the same d_k."
)
MISSING_ROW_CHECK = "Raise ValueError when a weight matrix does not have d_model rows (one per column of X)."
TYPE_ERROR = (
    "The spec asks for ValueError here, but your code raised TypeError: a matrix of the wrong size is a bad "
    "value, so raise ValueError."
)
TOO_STRICT = (
    "d_v may differ from d_k: only Wq and Wk must have the same number of columns, so accept a Wv of "
    "another width."
)
K_WITH_DV = "K has d_k columns, like Q, because each query is compared with each key; only V has d_v columns."
Q_TRANSPOSED = "Q has one row per token: its shape is (n, d_k), not (d_k, n)."
V_TRANSPOSED = "V has one row per token: its shape is (n, d_v), not (d_v, n)."
LOWERCASE_KEYS = 'Use the keys "Q", "K" and "V" exactly as written: dictionary keys are case-sensitive.'
SHAPE_NOT_TUPLE = "Give each shape as a tuple such as (2, 3), the way NumPy's .shape does, not as a list."
OUTPUT_WITH_NK = (
    "The output has one row per query, so its shape uses n_q, not n_k: the keys are averaged away."
)
OUTPUT_SCORES = (
    "(n_q, n_k) is the shape of the score matrix; the output has one row per query and d_v columns."
)
BIASES = "Count the weights only: these projections have no biases."
THREE_DK = (
    "Wv has d_v columns, which may differ from d_k, so the count is d_model·(2·d_k + d_v), not 3·d_model·d_k."
)
MISSING_MATRIX = "Count all three matrices: Wq and Wk have d_model·d_k weights each, and Wv has d_model·d_v."


def _close(got: Any, want: Any) -> bool:
    """Same shape and the same numbers (to float rounding)."""
    if not isinstance(got, np.ndarray) or not isinstance(want, np.ndarray) or got.shape != want.shape:
        return False
    if got.dtype.kind not in "biuf" or want.dtype.kind not in "biuf":
        return False
    return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-8))


def _try(compute: Callable[[], Any]) -> Any:
    try:
        with np.errstate(all="ignore"):
            return np.asarray(compute())
    except (ValueError, TypeError, IndexError):
        return None


def _projection_mistakes(X: Any, W: Any) -> list[tuple[str, Callable[[], Any]]]:
    """What each known mistake computes instead of ``X @ W``."""
    return [
        (BY_COLUMNS, lambda: X @ W.T),
        (ELEMENTWISE, lambda: X * W),
        (FIRST_ROW, lambda: X[:1] @ W),
        (FIRST_ROW, lambda: X[0] @ W),
        (TRUNCATION, lambda: np.trunc(X) @ np.trunc(W)),
        (TRUNCATION, lambda: np.trunc(X @ W)),
        (TRUNCATION, lambda: np.round(X @ W)),
    ]


def projection_hint(args: Sequence[Any], got: Any, expected: Sequence[Any]) -> str | None:
    """The misconception behind a wrong ``project_qkv`` result, if it is a known one.

    Examples
    --------
    >>> X, W = np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> right = (X @ W, X @ W, X @ W)
    >>> projection_hint((X, W, W, W), (X @ W.T, X @ W.T, X @ W.T), right) == BY_COLUMNS
    True
    >>> projection_hint((X, W, W, W), None, right) == STUB
    True
    """
    if got is None:
        return STUB
    if not isinstance(got, tuple | list) or len(got) != 3:
        return NOT_A_TUPLE
    arrays = [numeric_array(g) for g in got]
    for order in permutations(range(3)):
        if order != (0, 1, 2) and all(_close(arrays[i], expected[j]) for i, j in enumerate(order)):
            return ORDER
    X = np.asarray(args[0])
    weights = [np.asarray(w) for w in args[1:]]
    if not _close(arrays[1], expected[1]) and _close(arrays[1], _try(lambda: X @ weights[2])):
        return K_WITH_DV
    for index, W in enumerate(weights):
        if _close(arrays[index], expected[index]):
            continue
        for hint, compute in _projection_mistakes(X, W):
            if _close(arrays[index], _try(compute)):
                return hint
    return None


def exception_hint(tags: frozenset[str], exception: str, message: str) -> str | None:
    """The misconception behind an exception raised where a value was expected.

    Examples
    --------
    >>> exception_hint(frozenset({"dv_differs"}), "ValueError", "d_v must equal d_k") == TOO_STRICT
    True
    """
    if exception != "ValueError":
        return None
    if "broadcast" in message:
        return ELEMENTWISE
    if "matmul" in message:
        return BY_COLUMNS
    return TOO_STRICT if "dv_differs" in tags else None


def returned_instead_of_raise_hint(tags: frozenset[str], got: Any) -> str | None:
    """Why no ``ValueError`` came: the stub, a missing column check or a missing row check."""
    if got is None:
        return STUB
    if "columns_differ" in tags:
        return MISSING_COLUMN_CHECK
    return MISSING_ROW_CHECK


def shape_hint(function: str, args: Sequence[int], got: Any, key: str | None = None) -> str | None:
    """The misconception behind a wrong shape from ``qkv_shapes`` (one key) or ``output_shape``.

    Examples
    --------
    >>> shape_hint("output_shape", (3, 5, 4), (5, 4)) == OUTPUT_WITH_NK
    True
    >>> shape_hint("qkv_shapes", (2, 3, 4, 5), (4, 2), key="Q") == Q_TRANSPOSED
    True
    """
    if got is None:
        return STUB
    whole_numbers = isinstance(got, tuple | list) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in got
    )
    shape = tuple(got) if whole_numbers else None  # anything else may be unhashable or compare oddly
    if function == "output_shape":
        n_q, n_k, d_v = args
        return {(n_k, d_v): OUTPUT_WITH_NK, (n_q, n_k): OUTPUT_SCORES}.get(shape) if shape else None
    n, _, d_k, d_v = args
    if key == "K" and shape == (n, d_v):
        return K_WITH_DV
    if key in ("Q", "K") and shape == (d_k, n):
        return Q_TRANSPOSED
    if key == "V" and shape == (d_v, n):
        return V_TRANSPOSED
    return None


def param_count_hint(args: Sequence[int], got: Any) -> str | None:
    """The misconception behind a wrong ``param_count``.

    Examples
    --------
    >>> param_count_hint((4, 3, 2), 3 * 4 * 3) == THREE_DK
    True
    >>> param_count_hint((4, 3, 2), 4 * (2 * 3 + 2) + (2 * 3 + 2)) == BIASES
    True
    """
    if got is None:
        return STUB
    d_model, d_k, d_v = args
    weights = d_model * (2 * d_k + d_v)
    known = {
        weights + 2 * d_k + d_v: BIASES,
        weights + 3: BIASES,
        (d_model + 1) * (2 * d_k + d_v): BIASES,
        3 * d_model * d_k: THREE_DK,
        3 * d_model * d_v: THREE_DK,
        d_model * (d_k + d_v): MISSING_MATRIX,
        2 * d_model * d_k: MISSING_MATRIX,
    }
    known.pop(weights, None)  # when sizes coincide a mistake can give the right number
    return known.get(got) if isinstance(got, int) else None
