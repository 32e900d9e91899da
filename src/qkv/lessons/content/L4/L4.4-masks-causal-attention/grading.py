"""The hidden tests of L4.4's code exercise, with expected values from the ``qkv`` library.

``causal_mask`` is ``qkv.causal_mask`` (top-left aligned, as PyTorch's ``is_causal``);
``masked_attention`` is ``qkv.attention`` with a bool mask, the zero policy for fully-masked rows and
the weights returned; ``padding_mask`` is written out below. Each hint names a mistake; the grader
shows it when the failed result is what that mistake computes for the same inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from chapter import (
    AFTER_SOFTMAX,
    BOTTOM_RIGHT,
    BY_DK,
    DIAGONAL_EXCLUDED,
    MULTIPLIED,
    NO_KEEPDIMS,
    NOT_A_PAIR,
    RENORMALISED,
    SCORES_TRANSPOSED,
    WEIGHTS_TRANSPOSED,
    ZERO_BY_ZERO,
    Array,
    Crashed,
    attention_with,
    random_decimals,
    random_sizes,
    renormalised_underflow,
)
from chapter import NOT_SCALED as NO_SCALING
from chapter import SOFTMAX_AXIS as SOFTMAX_OVER_QUERIES
from chapter import TRIU as TRANSPOSED

from qkv import attention, causal_mask, softmax
from qkv.grading import (
    Close,
    Items,
    Mistake,
    Returned,
    Suite,
    TestCase,
    Warned,
    by_keyword,
    called_again,
    fully_masked_row,
    in_dtype,
    missing_function_hint,
    writes_number,
)

FUNCTIONS = ("causal_mask", "masked_attention", "padding_mask")
# ---------------------------------------------------------------------------------------------- hints
MISSING_FUNCTION = missing_function_hint(FUNCTIONS)
TRUE_MEANS_MASKED = (
    "True was read as masked: your mask is the exact opposite. True means the query may attend that key."
)
NOT_BOOL = (
    "Return a bool array (True = may attend), not numbers: build it with a comparison such as "
    "j <= i, or np.tril(np.ones((n_q, n_k), dtype=bool))."
)
MASK_TRANSPOSED = (
    "The mask was used transposed (mask.T): row i of the mask belongs to query i and column j to key j, "
    "the same layout as the scores Q @ K.T."
)
NAN_ROWS = (
    "A query whose keys are all masked came back as NaN: its softmax is 0/0. Give such a row zero "
    "weights and a zero output, for example by dividing only where the row's sum is not 0."
)
LARGE_NEGATIVE = (
    "A fully-masked row got nonzero weights: a finite fill such as -1e9 instead of -inf leaves every key "
    "of that row with the same score, so softmax spreads the weight over all of them (uniformly, the mean "
    "of V). Give such a row zero weights and a zero output."
)
ORDER = "Your O and A are right but come back in the other order: return (O, A), the output first."
PADDING_OFF_BY_ONE = (
    "Padding is off by one: row b allows the keys 0 … lengths[b] − 1, that is lengths[b] keys, "
    "so the test is j < lengths[b]."
)
PADDING_TRANSPOSED = (
    "The padding mask came out transposed: it has one row per sequence (len(lengths) rows) and one "
    "column per key (n_k columns)."
)

# ------------------------------------------------------------------------------------- references


def masked_attention(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    """The reference: qkv's attention with a bool mask, zero rows for fully-masked queries, and A."""
    O, A = attention(Q, K, V, mask=mask, all_masked="zero", return_weights=True)  # (n_q, d_v), (n_q, n_k)
    return O, A


def padding_mask(lengths: Any, n_k: int) -> Array:
    """The reference: row b allows keys 0 … lengths[b] − 1."""
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]  # (len(lengths), n_k)


# ---------------------------------------------------------------------------- mistakes, as computations


def _softmax_rows(S: Array) -> Array:
    """A softmax that leaves 0/0 as it is (NaN), as a plain one written by hand does."""
    with np.errstate(all="ignore"):
        return softmax(S)


def _scores(Q: Array, K: Array) -> Array:
    return np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T / np.sqrt(np.shape(Q)[-1])  # (n_q, n_k)


def _zero_dead(A: Array, mask: Array) -> Array:
    dead = ~np.broadcast_to(mask, A.shape).any(axis=-1)  # (n_q,)
    return np.where(dead[:, None], 0.0, A)


def _pair(A: Array, V: Array) -> tuple[Array, Array]:
    return A @ V, A  # (n_q, d_v), (n_q, n_k)


def _after_softmax(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return _pair(softmax(_scores(Q, K)) * mask, V)


def _multiplied(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return _pair(softmax(_scores(Q, K) * mask), V)


def _transposed(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return masked_attention(Q, K, V, np.asarray(mask).T)


def _inverted(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return masked_attention(Q, K, V, ~np.asarray(mask, dtype=bool))


def _filled(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return _pair(softmax(np.where(mask, _scores(Q, K), -1e9)), V)


def _added(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    return _pair(softmax(_scores(Q, K) + np.where(mask, 0.0, -1e9)), V)


def _over_queries(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    """The softmax over axis 0 of the masked scores; a column with no allowed query gets zeros."""
    allowed = np.broadcast_to(np.asarray(mask, dtype=bool), (np.shape(Q)[0], np.shape(K)[0]))  # (n_q, n_k)
    A = np.nan_to_num(_softmax_rows(np.where(allowed, _scores(Q, K), -np.inf).T).T)  # (n_q, n_k)
    return _pair(A, V)


def _unscaled(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    O, A = attention(Q, K, V, mask=mask, scale=1.0, return_weights=True)
    return O, A


def _swapped(Q: Array, K: Array, V: Array, mask: Array) -> tuple[Array, Array]:
    O, A = masked_attention(Q, K, V, mask)
    return A, O


def _slipped(**slips: Any) -> Any:
    """masked_attention with the slips of chapter.attention_with (a fully masked row: zero where the
    masking is right)."""
    return lambda Q, K, V, mask: attention_with(Q, K, V, mask, **slips)


def _renormalised(got: Any, Q: Any, K: Any, V: Any, mask: Any) -> bool:
    """The weights are right but for the rows that underflow when the softmax runs over every key and is
    masked and renormalised after: those are 0 or NaN (0/0)."""
    try:
        A = np.asarray(got[1], dtype=float)
    except (TypeError, ValueError, IndexError, KeyError):
        return False
    _, right = masked_attention(Q, K, V, mask)
    lost = renormalised_underflow(Q, K, mask)
    if A.shape != right.shape or not lost.any():
        return False
    kept = ~lost
    gone = np.all(np.isnan(A[lost]) | (A[lost] == 0))
    return bool(gone and np.allclose(A[kept], right[kept], atol=1e-6))


def _has_nan(got: Any, *args: Any) -> bool:
    try:
        return bool(any(np.isnan(np.asarray(item, dtype=float)).any() for item in got))
    except (TypeError, ValueError):
        return False


def _not_a_pair(got: Any, *args: Any) -> bool:
    return not isinstance(got, tuple | list) or len(got) != 2


def _not_bool(got: Any, *args: Any) -> bool:
    return isinstance(got, np.ndarray) and got.dtype != np.bool_


CAUSAL_HINTS = [
    Mistake(TRANSPOSED, lambda n_q, n_k: np.triu(np.ones((n_q, n_k), dtype=bool))),
    Mistake(TRANSPOSED, lambda n_q, n_k: causal_mask(n_k, n_q).T),
    # Bottom-right first: with one query more than keys it is the diagonal excluded, and the tests draw
    # at least two more (the square tests name the missing diagonal on its own).
    Mistake(BOTTOM_RIGHT, lambda n_q, n_k: causal_mask(n_q, n_k, align="bottom-right")),
    Mistake(DIAGONAL_EXCLUDED, lambda n_q, n_k: np.tril(np.ones((n_q, n_k), dtype=bool), k=-1)),
    Mistake(TRUE_MEANS_MASKED, lambda n_q, n_k: ~causal_mask(n_q, n_k)),
]
# The causes these hints name need a query whose keys are all masked (the mask is the fourth argument).
DEAD_ROW = fully_masked_row(3)
# A finite fill is a cause the code must write: a large negative number, or np.finfo's smallest.
FINITE_FILL = writes_number(lambda value: value <= -1e3, names=("finfo",))
ATTENTION_HINTS = [
    Returned(NOT_A_PAIR, when=_not_a_pair),
    Returned(RENORMALISED, when=_renormalised),
    Returned(NAN_ROWS, when=_has_nan, requires=DEAD_ROW),
    Mistake(ORDER, _swapped),
    Mistake(AFTER_SOFTMAX, _after_softmax),
    Mistake(MULTIPLIED, _multiplied),
    Mistake(MASK_TRANSPOSED, _transposed),
    Mistake(TRUE_MEANS_MASKED, _inverted),
    Mistake(LARGE_NEGATIVE, _filled, requires=DEAD_ROW, shows=FINITE_FILL),
    Mistake(LARGE_NEGATIVE, _added, requires=DEAD_ROW, shows=FINITE_FILL),
    Mistake(NO_SCALING, _unscaled),
    Mistake(SOFTMAX_OVER_QUERIES, _over_queries),
    Mistake(BY_DK, _slipped(scale="d_k")),
    Mistake(SCORES_TRANSPOSED, _slipped(scores="KQ")),
    Mistake(WEIGHTS_TRANSPOSED, _slipped(output="ATV")),
    Mistake(NO_KEEPDIMS, _slipped(keepdims=False)),
    Crashed(MASK_TRANSPOSED, lambda Q, K, V, mask: np.where(np.asarray(mask).T, _scores(Q, K), -np.inf)),
    # the transposed mask broadcast to the scores' shape first, as a mask of one row must be
    Crashed(MASK_TRANSPOSED, lambda Q, K, V, mask: np.broadcast_to(np.asarray(mask).T, (len(Q), len(K)))),
    Crashed(SCORES_TRANSPOSED, _slipped(scores="KQ")),
    Crashed(WEIGHTS_TRANSPOSED, _slipped(output="ATV")),
    Crashed(NO_KEEPDIMS, _slipped(keepdims=False)),
    Warned(ZERO_BY_ZERO, "RuntimeWarning", contains="invalid value", requires=DEAD_ROW),
]
PADDING_HINTS = [
    Mistake(PADDING_OFF_BY_ONE, lambda lengths, n_k: np.arange(n_k)[None, :] <= np.asarray(lengths)[:, None]),
    Mistake(
        PADDING_OFF_BY_ONE, lambda lengths, n_k: np.arange(n_k)[None, :] < np.asarray(lengths)[:, None] - 1
    ),
    Mistake(TRUE_MEANS_MASKED, lambda lengths, n_k: ~padding_mask(lengths, n_k)),
    Mistake(PADDING_TRANSPOSED, lambda lengths, n_k: padding_mask(lengths, n_k).T),
]

# ------------------------------------------------------------------------------------ comparators
OUTPUT_AND_WEIGHTS = Items(
    [Close(), Close()], names=("O", "A"), description="(O, A), the output and the weights"
)
MASK = Close()
BOOL_MASK = Close(dtype="bool")

# ------------------------------------------------------------------------------------ input generators


def _qkv(rng: np.random.Generator, n_q: int, n_k: int) -> tuple[Array, Array, Array]:
    d_k, d_v = random_sizes(rng, 2, 2, 4)
    return random_decimals(rng, n_q, d_k), random_decimals(rng, n_k, d_k), random_decimals(rng, n_k, d_v)


def _random_mask(rng: np.random.Generator, n_q: int, n_k: int) -> Array:
    """A mask that leaves every query at least one key, and masks at least one key of some query."""
    while True:
        mask = rng.random((n_q, n_k)) < 0.6  # (n_q, n_k)
        if mask.any(axis=1).all() and not mask.all(axis=1).all():
            return mask


def _rectangular(rng: np.random.Generator) -> tuple[Array, ...]:
    n_q, n_k = random_sizes(rng, 2, 2, 5)
    return (*_qkv(rng, n_q, n_k), _random_mask(rng, n_q, n_k))


def _causal(rng: np.random.Generator) -> tuple[Array, ...]:
    n = int(rng.integers(3, 6))
    return (*_qkv(rng, n, n), causal_mask(n, n))


def _key_padding(rng: np.random.Generator) -> tuple[Array, ...]:
    n_q, n_k = int(rng.integers(2, 5)), int(rng.integers(3, 6))
    keep = np.arange(n_k) < int(rng.integers(1, n_k))  # (n_k,)
    return (*_qkv(rng, n_q, n_k), keep[None, :])  # (1, n_k): broadcast over the queries


def _one_dimensional(rng: np.random.Generator) -> tuple[Array, ...]:
    Q, K, V, row = _key_padding(rng)
    return Q, K, V, row[0]  # (n_k,)


def _one_dead_row(rng: np.random.Generator) -> tuple[Array, ...]:
    n_q, n_k = int(rng.integers(3, 5)), int(rng.integers(2, 5))
    mask = _random_mask(rng, n_q, n_k)
    mask[int(rng.integers(0, n_q))] = False  # this query may attend no key
    return (*_qkv(rng, n_q, n_k), mask)


def _all_dead(rng: np.random.Generator) -> tuple[Array, ...]:
    n_q, n_k = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    return (*_qkv(rng, n_q, n_k), np.zeros((n_q, n_k), dtype=bool))


def _no_diagonal_dead(rng: np.random.Generator) -> tuple[Array, ...]:
    """The strict lower triangle (j < i): query 0 has no key, the others do."""
    n = int(rng.integers(3, 5))
    return (*_qkv(rng, n, n), np.tril(np.ones((n, n), dtype=bool), k=-1))


def _lengths(rng: np.random.Generator) -> tuple[list[int], int]:
    n_k = int(rng.integers(4, 8))
    count = int(rng.integers(2, 5))
    lengths = [int(n) for n in rng.integers(1, n_k, size=count)]  # each 1 … n_k − 1
    lengths[0] = n_k  # one sequence fills every position
    return lengths, n_k


def _more_queries(rng: np.random.Generator) -> tuple[int, int]:
    """At least two queries more than keys: with one more, bottom-right alignment is the diagonal
    excluded, and a hint could not say which."""
    n_k = int(rng.integers(2, 5))
    return n_k + int(rng.integers(2, 4)), n_k


def _one_key_each(rng: np.random.Generator) -> tuple[Array, ...]:
    """Nearly every key masked: each query may see one key only, and every score is far below zero (near
    -1000, a few apart), so that an exponential taken without subtracting the row's maximum is 0 for
    every key; the allowed key must still take the whole weight."""
    n_q, n_k, d_v = int(rng.integers(2, 4)), int(rng.integers(3, 5)), int(rng.integers(2, 4))
    Q = np.round(rng.uniform(20, 30, size=(n_q, 2)), 2)
    K = -np.round(30 + rng.uniform(-0.1, 0.1, size=(n_k, 2)), 2)  # scores near -1000 for every key
    mask = np.zeros((n_q, n_k), dtype=bool)
    mask[:, 0] = True
    return Q, K, random_decimals(rng, n_k, d_v), mask


def _huge_masked_keys(rng: np.random.Generator) -> tuple[Array, ...]:
    """Masked keys that score far above the allowed ones for some queries (a query of positive entries
    meets a key of 1500s) and far below for others: a softmax over every key, masked and renormalised
    after, underflows to 0/0 on the first kind; the mask after the softmax shows on the second."""
    n_q, d_k, d_v = int(rng.integers(3, 5)), 2, int(rng.integers(2, 4))
    signs = np.where(np.arange(n_q) % 2 == 0, 1.0, -1.0)[:, None]  # (n_q, 1)
    Q = signs * np.round(rng.uniform(0.5, 1.5, size=(n_q, d_k)), 2)
    K = random_decimals(rng, 4, d_k)
    K[2] = 1500 + random_decimals(rng, d_k)  # masked: huge for the positive queries
    mask = np.zeros((n_q, 4), dtype=bool)
    mask[:, :2] = True  # keys 2 and 3 masked for every query
    return Q, K, random_decimals(rng, 4, d_v), mask


THE_LESSON = (
    np.array([[1.0, 0.0]]),
    np.array([[1.0, 0.0], [0.0, 1.0]]),
    np.array([[2.0, 0.0], [0.0, 2.0]]),
    np.array([[True, False]]),
)


def _causal_case(name: str, args: Any, compare: Any = MASK, hints: Any = CAUSAL_HINTS) -> TestCase:
    return TestCase(name, "causal_mask", args, causal_mask, compare, hints)


def _attention_case(name: str, args: Any, hints: Any = ATTENTION_HINTS) -> TestCase:
    return TestCase(name, "masked_attention", args, masked_attention, OUTPUT_AND_WEIGHTS, hints)


def _padding_case(name: str, args: Any, compare: Any = MASK, hints: Any = PADDING_HINTS) -> TestCase:
    return TestCase(name, "padding_mask", args, padding_mask, compare, hints)


# --------------------------------------------------------------------------------------------- the suite
functions = Suite(
    FUNCTIONS,
    [
        _causal_case("causal_mask for a sequence of 4 (the lesson's example)", (4, 4)),
        _causal_case("causal_mask for a random square size", lambda rng: [int(rng.integers(2, 8))] * 2),
        _causal_case(
            "causal_mask with fewer queries than keys (top-left aligned)",
            lambda rng: sorted(random_sizes(rng, 2)),
        ),
        _causal_case(
            "causal_mask with more queries than keys",
            _more_queries,
        ),
        by_keyword(_causal_case("causal_mask with more queries than keys", _more_queries), "n_q", "n_k"),
        _causal_case(
            "causal_mask returns a bool array",
            lambda rng: random_sizes(rng, 2),
            BOOL_MASK,
            [Returned(NOT_BOOL, when=_not_bool)],
        ),
        _attention_case("masked_attention on the worked example with key 1 masked", THE_LESSON),
        _attention_case("masked_attention with a causal mask", _causal),
        _attention_case("masked_attention with a random mask, n_q ≠ n_k and d_v ≠ d_k", _rectangular),
        *called_again(
            _attention_case("masked_attention with a random mask, n_q ≠ n_k and d_v ≠ d_k", _rectangular)
        ),
        in_dtype(
            _attention_case("masked_attention with a random mask, n_q ≠ n_k and d_v ≠ d_k", _rectangular),
            "float32",
        ),
        by_keyword(
            _attention_case("masked_attention with a random mask, n_q ≠ n_k and d_v ≠ d_k", _rectangular),
            "mask",
        ),
        in_dtype(
            _attention_case(
                "masked_attention gives a fully-masked query zero weights and a zero output", _one_dead_row
            ),
            "float32",
        ),
        _attention_case(
            "masked_attention with a (1, n_k) padding mask broadcast over the queries", _key_padding
        ),
        _attention_case("masked_attention with a 1-D mask of n_k entries", _one_dimensional),
        _attention_case(
            "masked_attention gives a fully-masked query zero weights and a zero output", _one_dead_row
        ),
        _attention_case(
            "masked_attention when query 0 has no key (the diagonal excluded)", _no_diagonal_dead
        ),
        _attention_case("masked_attention with huge scores on masked keys", _huge_masked_keys),
        _attention_case(
            "masked_attention when each query may see one key, scored far below zero", _one_key_each
        ),
        # Here -1e9 and scores times the mask both give uniform rows, so neither hint can be told apart.
        _attention_case(
            "masked_attention when every key of every query is masked", _all_dead, ATTENTION_HINTS[:4]
        ),
        _padding_case("padding_mask for lengths [3, 1] and 4 keys", ([3, 1], 4)),
        _padding_case("padding_mask for random lengths, one of them full", _lengths),
        _padding_case("padding_mask with a single sequence", lambda rng: ([int(rng.integers(1, 6))], 6)),
        by_keyword(_padding_case("padding_mask for random lengths, one of them full", _lengths), "n_k"),
        _padding_case(
            "padding_mask returns a bool array",
            _lengths,
            BOOL_MASK,
            [Returned(NOT_BOOL, when=_not_bool)],
        ),
    ],
    refuse_warnings=True,  # Part 2 promises a fully masked row "no NaN, and no warning"
)

SUITES = {"functions": functions}
