"""The hidden tests of L4.3's code exercise, with expected values from the ``qkv`` reference.

Every sentence of the Part 2 spec is covered: softmax on one row, on a matrix and with leading dimensions,
on scores of ±1000 and on a row far below another (where only a per-row maximum keeps it finite); the
weights and the output on the lesson's example and on shapes where every size differs; a square case where
the wrong products (V @ A, A @ K) run; and both ValueErrors. Each hint names a mistake learners make.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from chapter import (
    BY_DK,
    NO_KEEPDIMS,
    NOT_A_PAIR,
    SCORES_IN_PLACE,
    SCORES_TRANSPOSED,
    WEIGHTS_TRANSPOSED,
    Array,
    Crashed,
    attention_with,
    random_fractions,
    random_sizes,
    softmax_with,
)
from chapter import MISMATCHED_TYPE_ERROR as TYPE_ERROR
from chapter import NOT_SCALED as NO_SCALING

from qkv import attention, attention_scores
from qkv import softmax as reference_softmax
from qkv.grading import (
    Close,
    Items,
    Mistake,
    Mutated,
    Raised,
    Raises,
    Returned,
    Suite,
    TestCase,
    by_keyword,
    called_again,
    check_raises,
    exp_overflows,
    in_dtype,
    row_far_below_max,
)

FUNCTIONS = ("softmax", "attention_weights", "attend")

# ---------------------------------------------------------------------------------------------- hints
WRONG_AXIS = (
    "The softmax ran over the wrong axis, so each column (not each row) sums to 1: normalise over the "
    "last axis, axis=-1, with keepdims=True."
)
AXIS_ONE = (
    "Normalise over axis=-1, not axis=1: axis 1 is the last axis only for a matrix. A single row has no "
    "axis 1, and with a leading batch dimension axis 1 runs down the columns."
)
NO_MAX = (
    "Your result is not finite for large scores: e^1000 overflows to inf and inf/inf is NaN. Subtract each "
    "row's maximum before np.exp; the weights do not change."
)
GLOBAL_MAX = (
    "You subtracted the maximum of the whole matrix, so a row far below it underflows to 0/0 = NaN. "
    "Subtract each row's own maximum: S.max(axis=-1, keepdims=True)."
)
NO_EXP = (
    "You divided the scores by their sum without exponentiating: softmax normalises np.exp(S), which keeps "
    "every weight positive."
)
EXP_ONLY = "Your weights do not sum to 1: after np.exp, divide each row by its sum."
SCORES_AS_WEIGHTS = (
    "Those are the scaled scores, not weights: scores become weights only through the softmax."
)
V_AT_A = "The output is A @ V (weights first, shape (n_q, d_v)), not V @ A."
A_AT_K = "You averaged the keys (A @ K): the weights average the values, so the output is A @ V."
ORDER = "Your O and A are right but come back in the other order: return them as (O, A)."
MISSING_KV_CHECK = (
    "Raise ValueError when K and V have different numbers of rows, naming both sizes: every key needs "
    "exactly one value."
)
MISSING_QK_CHECK = (
    "Raise ValueError when Q and K have different numbers of columns, naming both sizes: a query can only "
    "be compared with a key of the same length."
)

Softmax = Callable[[Array], Array]


# ---------------------------------------------------------------------------- mistakes, as computations
def _no_exp(S: Array) -> Array:
    return S / S.sum(axis=-1, keepdims=True)


def _no_exp_shifted(S: Array) -> Array:
    shifted = S - S.max(axis=-1, keepdims=True)
    return shifted / shifted.sum(axis=-1, keepdims=True)


def _exp_only(S: Array) -> Array:
    return np.exp(S)


def _exp_only_shifted(S: Array) -> Array:
    return np.exp(S - S.max(axis=-1, keepdims=True))


def _axis(axis: int) -> Softmax:
    def wrong(S: Array) -> Array:
        if S.ndim < 2 or axis % S.ndim == S.ndim - 1:
            raise ValueError("that axis is the right one for this input")
        return reference_softmax(S, axis=axis)

    return wrong


SLIPS: list[tuple[str, Softmax]] = [
    (WRONG_AXIS, _axis(0)),
    (AXIS_ONE, _axis(1)),
    (WRONG_AXIS, _axis(-2)),
    (NO_EXP, _no_exp),
    (NO_EXP, _no_exp_shifted),
    (EXP_ONLY, _exp_only),
    (EXP_ONLY, _exp_only_shifted),
]


def _plain(S: Array) -> Array:
    with np.errstate(all="ignore"):
        return np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)


def _global(S: Array) -> Array:
    with np.errstate(all="ignore"):
        E = np.exp(S - S.max())
        return E / E.sum(axis=-1, keepdims=True)


def _pattern(values: Any) -> Array | None:
    try:
        return np.isfinite(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        return None


def _breaks_like(formula: Softmax, other: Softmax, scores: Callable[..., Array]) -> Callable[..., bool]:
    """The result is non-finite exactly where ``formula`` is (and ``other`` is not), and equal to it
    elsewhere: that formula's slip."""

    def when(got: Any, *args: Any) -> bool:
        S = np.asarray(scores(*args), dtype=float)
        seen, mine, theirs = _pattern(got), np.isfinite(formula(S)), np.isfinite(other(S))
        if seen is None or seen.shape != mine.shape or mine.all():
            return False
        if not ((seen == mine).all() and not (mine == theirs).all()):
            return False
        # Where the formula stays finite, the result holds its values too (another slip that breaks on
        # the same entries, such as a maximum subtracted from the numerator only, is not this one).
        with np.errstate(all="ignore"):
            values, wanted = np.asarray(got, dtype=float), formula(S)
            return bool(np.allclose(values[mine], wanted[mine], rtol=1e-6, atol=1e-9))

    return when


def _axis_zero_plain(S: Array) -> Array:
    """The textbook formula over axis 0 with no maximum subtracted: NaN where the scores are large."""
    with np.errstate(all="ignore"):
        return np.exp(S) / np.exp(S).sum(axis=0, keepdims=True)


def _like_axis_zero(scores: Callable[..., Array]) -> Callable[..., bool]:
    """The result is the softmax down each column, with NaN exactly where e^S overflowed: two slips at
    once, which no single computed mistake reproduces (NaN never equals NaN)."""

    def when(got: Any, *args: Any) -> bool:
        S = np.asarray(scores(*args), dtype=float)
        if S.ndim != 2 or S.shape[0] < 2:
            return False
        wrong, seen = _axis_zero_plain(S), _pattern(got)
        finite = np.isfinite(wrong)
        if seen is None or seen.shape != wrong.shape or finite.all() or not (seen == finite).all():
            return False
        return bool(np.allclose(np.asarray(got, dtype=float)[finite], wrong[finite]))

    return when


def _non_finite_hints(
    scores: Callable[..., Array], picked: Callable[[Any], Any] = lambda got: got
) -> list[Any]:
    return [
        Returned(
            NO_MAX,
            when=lambda got, *args: _breaks_like(_plain, _global, scores)(picked(got), *args),
            requires=exp_overflows(scores),
        ),
        Returned(
            GLOBAL_MAX,
            when=lambda got, *args: _breaks_like(_global, _plain, scores)(picked(got), *args),
            requires=row_far_below_max(scores),
        ),
    ]


def _scaled(Q: Any, K: Any) -> Array:
    return attention_scores(Q, K)  # (n_q, n_k)


def _raw(Q: Any, K: Any) -> Array:
    return attention_scores(Q, K, scale=1.0)  # (n_q, n_k)


def _scores_of(*args: Any) -> Array:
    """The scores a test's arguments stand for: S itself, or the scaled scores of Q and K."""
    return _as_array(args[0]) if len(args) == 1 else _scaled(args[0], args[1])


def _weights_with(**slips: Any) -> Callable[..., Array]:
    """The weights of attention with ``slips``; the values are zeros that fit them (K Qᵀ makes one column
    per query), so that computing the weights never fails on the output's shapes."""

    def weights(Q: Any, K: Any, *V: Any) -> Array:
        columns = np.shape(Q)[0] if slips.get("scores") == "KQ" else np.shape(K)[0]
        return attention_with(Q, K, np.zeros((columns, 1)), **slips)[1]

    return weights


def _softmax(S: Any) -> Array:
    return reference_softmax(S, axis=-1)


def _as_array(S: Any) -> Array:
    return np.asarray(S, dtype=float)


SOFTMAX_HINTS = [
    Mutated(SCORES_IN_PLACE, argument=0),
    *[Mistake(message, lambda S, slip=slip: slip(_as_array(S))) for message, slip in SLIPS],
    Mistake(NO_KEEPDIMS, lambda S: softmax_with(S, keepdims=False)),
    Crashed(NO_KEEPDIMS, lambda S: softmax_with(S, keepdims=False)),
    Crashed(AXIS_ONE, lambda *args: softmax_with(_scores_of(*args), axis=1)),
    *_non_finite_hints(_as_array),
]
WEIGHTS_HINTS = [
    Mistake(NO_SCALING, lambda Q, K: _softmax(_raw(Q, K))),
    Mistake(SCORES_AS_WEIGHTS, _scaled),
    *[Mistake(message, lambda Q, K, slip=slip: slip(_scaled(Q, K))) for message, slip in SLIPS],
    Mistake(BY_DK, _weights_with(scale="d_k")),
    Mistake(SCORES_TRANSPOSED, _weights_with(scores="KQ")),
    Crashed(AXIS_ONE, lambda *args: softmax_with(_scores_of(*args), axis=1)),
    Returned(WRONG_AXIS, when=_like_axis_zero(_scaled)),
    *_non_finite_hints(_scaled),
]


def _attend(Q: Any, K: Any, V: Any) -> tuple[Array, Array]:
    O, A = attention(Q, K, V, return_weights=True)  # (n_q, d_v), (n_q, n_k)
    return O, A


def _slip_pair(message: str, weights: Callable[[Any, Any], Array]) -> list[Mistake]:
    return [
        Mistake(message, lambda Q, K, V: weights(Q, K), at="A"),
        Mistake(message, lambda Q, K, V: weights(Q, K) @ np.asarray(V, dtype=float), at="O"),
    ]


def _pair_problem(got: Any, *args: Any) -> bool:
    return not isinstance(got, tuple | list) or len(got) != 2


ATTEND_HINTS = [
    Returned(NOT_A_PAIR, when=_pair_problem),
    Mistake(ORDER, lambda Q, K, V: _attend(Q, K, V)[::-1]),
    Mistake(V_AT_A, lambda Q, K, V: np.asarray(V, dtype=float) @ _attend(Q, K, V)[1], at="O"),
    Mistake(A_AT_K, lambda Q, K, V: _attend(Q, K, V)[1] @ np.asarray(K, dtype=float), at="O"),
    Crashed(V_AT_A, lambda Q, K, V: np.asarray(V, dtype=float) @ _attend(Q, K, V)[1]),
    Mistake(WEIGHTS_TRANSPOSED, lambda Q, K, V: attention_with(Q, K, V, output="ATV")),
    Crashed(WEIGHTS_TRANSPOSED, lambda Q, K, V: attention_with(Q, K, V, output="ATV")),
    Mistake(BY_DK, lambda Q, K, V: attention_with(Q, K, V, scale="d_k")),
    Mistake(SCORES_TRANSPOSED, lambda Q, K, V: attention_with(Q, K, V, scores="KQ")),
    *_slip_pair(NO_SCALING, lambda Q, K: _softmax(_raw(Q, K))),
    *_slip_pair(SCORES_AS_WEIGHTS, _scaled),
    *[
        mistake
        for message, slip in SLIPS
        for mistake in _slip_pair(message, lambda Q, K, slip=slip: slip(_scaled(Q, K)))
    ],
    Crashed(AXIS_ONE, lambda *args: softmax_with(_scores_of(*args), axis=1)),
    Returned(
        WRONG_AXIS,
        when=lambda got, Q, K, V: not _pair_problem(got) and _like_axis_zero(_scaled)(got[1], Q, K),
    ),
    *_non_finite_hints(
        lambda Q, K, V: _scaled(Q, K), picked=lambda got: got[1] if not _pair_problem(got) else got
    ),
]
OUTPUT_AND_WEIGHTS = Items([Close(), Close()], names=("O", "A"), description="the tuple (O, A)")

# ------------------------------------------------------------------------------------ input generators


def _matrix(rng: np.random.Generator) -> tuple[Array]:
    n_q, n_k = random_sizes(rng, 2, 2, 6)
    return (random_fractions(rng, n_q, n_k) * 2,)


def _batched(rng: np.random.Generator) -> tuple[Array]:
    b, n_q, n_k = random_sizes(rng, 3, 2, 5)
    return (random_fractions(rng, b, n_q, n_k) * 2,)


def _qk(rng: np.random.Generator) -> tuple[Array, Array]:
    n_q, n_k, d_k = random_sizes(rng, 3, 2, 7)
    return random_fractions(rng, n_q, d_k), random_fractions(rng, n_k, d_k)


def _qkv(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    n_q, n_k, d_k, d_v = random_sizes(rng, 4, 2, 7)
    return random_fractions(rng, n_q, d_k), random_fractions(rng, n_k, d_k), random_fractions(rng, n_k, d_v)


def _square(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    """n_q = n_k = d_k = d_v, so that V @ A and A @ K run and give wrong numbers."""
    d = int(rng.integers(2, 5))
    return random_fractions(rng, d, d), random_fractions(rng, d, d), random_fractions(rng, d, d)


def _kv_rows_differ(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    n_q, n_k, d_k, d_v = random_sizes(rng, 4, 2, 6)
    return (
        random_fractions(rng, n_q, d_k),
        random_fractions(rng, n_k, d_k),
        random_fractions(rng, n_k + 1, d_v),
    )


def _qk_columns_differ(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    n_q, n_k, d_k, d_v = random_sizes(rng, 4, 2, 6)
    return (
        random_fractions(rng, n_q, d_k),
        random_fractions(rng, n_k, d_k + 1),
        random_fractions(rng, n_k, d_v),
    )


THE_ROW = (np.array([1 / math.sqrt(2), 0.0]),)
HUGE_ROW = (np.array([1000.0, -1000.0, 0.0]),)
HUGE_ROWS = (np.array([[1000.0, -1000.0], [-1000.0, 1000.0]]),)
FAR_BELOW = (np.array([[1000.0, 999.0], [-1000.0, -1001.0]]),)
THE_EXAMPLE = (np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
THE_EXAMPLE_V = (*THE_EXAMPLE, np.array([[2.0, 0.0], [0.0, 2.0]]))
# Scores in the thousands, one query far above the other: only a per-row maximum keeps both finite.
LARGE_QK = (np.array([[30.0, 30.0], [-30.0, -30.0]]), np.array([[30.0, 30.0], [29.0, 29.0]]))
LARGE_QKV = (*LARGE_QK, np.array([[1.0, 2.0], [3.0, -1.0]]))
# Inputs that probe (the spec: any row gives finite weights): rows near ±1e8, where only the gaps count
# and a formula that exponentiates the scores themselves overflows or loses every digit; and scores far
# below zero, where e^S underflows to 0 for every key unless the row's maximum is subtracted.
OFFSET_ROWS = (np.array([[1e8 + 0.5, 1e8, 1e8 - 1.25], [-1e8, -1e8 + 2.0, -1e8 - 0.5]]),)
FAR_BELOW_ZERO = (np.array([[-1e4, -1e4 - 1.5, -1e4 + 0.25], [-5e3, -5e3 - 0.75, -5e3 - 2.0]]),)


def _one_query(rng: np.random.Generator) -> tuple[Array, Array, Array]:
    """n_q = 1: one row of weights, over keys and values of sizes that all differ."""
    n_k, d_k, d_v = random_sizes(rng, 3, 2, 6)
    return random_fractions(rng, 1, d_k), random_fractions(rng, n_k, d_k), random_fractions(rng, n_k, d_v)


def _softmax_case(name: str, args: Any) -> TestCase:
    return TestCase(name, "softmax", args, _softmax, Close(), SOFTMAX_HINTS)


def _weights_case(name: str, args: Any) -> TestCase:
    return TestCase(
        name, "attention_weights", args, lambda Q, K: _softmax(_scaled(Q, K)), Close(), WEIGHTS_HINTS
    )


def _attend_case(name: str, args: Any) -> TestCase:
    return TestCase(name, "attend", args, _attend, OUTPUT_AND_WEIGHTS, ATTEND_HINTS)


def _rejects(reason: str, hint: str, args: Any) -> TestCase:
    return TestCase(
        f"attend raises ValueError when {reason}",
        "attend",
        args,
        check_raises(attention, Raises("ValueError", reason)),
        # A ValueError that fails this test is NumPy's own, from the products: no check ran.
        hints=[Returned(hint), Raised(hint, "ValueError"), Raised(TYPE_ERROR, "TypeError")],
    )


# --------------------------------------------------------------------------------------------- the suite
functions = Suite(
    FUNCTIONS,
    [
        _softmax_case("softmax of the lesson's row [0.707107, 0]", THE_ROW),
        _softmax_case("softmax of a matrix: each row sums to 1", _matrix),
        *called_again(_softmax_case("softmax of a matrix: each row sums to 1", _matrix)),
        _softmax_case("softmax with a leading (batch) dimension", _batched),
        _softmax_case("softmax of the row [1000, -1000, 0] is finite", HUGE_ROW),
        _softmax_case("softmax of rows of ±1000 is finite", HUGE_ROWS),
        _softmax_case("softmax of a row far below another row is finite", FAR_BELOW),
        _softmax_case("softmax of rows near ±1e8 (a large offset) is finite", OFFSET_ROWS),
        _softmax_case("softmax of scores far below zero is finite", FAR_BELOW_ZERO),
        # S is any array of scores: float32 (±1000 too) and integers as well as float64.
        in_dtype(_softmax_case("softmax of a matrix: each row sums to 1", _matrix), "float32"),
        in_dtype(_softmax_case("softmax of rows of ±1000 is finite", HUGE_ROWS), "float32"),
        in_dtype(
            _softmax_case("softmax of a matrix: each row sums to 1", _matrix),
            "int64",
            name="softmax of a matrix of integer scores",
        ),
        by_keyword(_softmax_case("softmax of a matrix: each row sums to 1", _matrix), "S"),
        _weights_case("attention_weights on the lesson's example", THE_EXAMPLE),
        _weights_case("attention_weights with n_q, n_k and d_k all different", _qk),
        _weights_case("attention_weights with scores in the thousands", LARGE_QK),
        in_dtype(_weights_case("attention_weights with n_q, n_k and d_k all different", _qk), "float32"),
        by_keyword(_weights_case("attention_weights with n_q, n_k and d_k all different", _qk), "K"),
        _attend_case("attend reproduces the lesson's example", THE_EXAMPLE_V),
        _attend_case("attend with n_q, n_k, d_k and d_v all different", _qkv),
        *called_again(_attend_case("attend with n_q, n_k, d_k and d_v all different", _qkv)),
        _attend_case("attend with every size equal (square matrices)", _square),
        _attend_case("attend with scores in the thousands", LARGE_QKV),
        _attend_case("attend with one query (n_q = 1)", _one_query),
        in_dtype(_attend_case("attend with n_q, n_k, d_k and d_v all different", _qkv), "float32"),
        by_keyword(_attend_case("attend with n_q, n_k, d_k and d_v all different", _qkv), "K", "V"),
        _rejects("K and V have different numbers of rows", MISSING_KV_CHECK, _kv_rows_differ),
        _rejects("Q and K have different numbers of columns", MISSING_QK_CHECK, _qk_columns_differ),
    ],
    refuse_warnings=True,  # Part 2 promises "no overflow, no warning, no NaN"
)

SUITES = {"functions": functions}

# The reference each test compares with, by function name (the project's tests check it against PyTorch).
REFERENCE = {
    "softmax": _softmax,
    "attention_weights": lambda Q, K: _softmax(_scaled(Q, K)),
    "attend": _attend,
}
