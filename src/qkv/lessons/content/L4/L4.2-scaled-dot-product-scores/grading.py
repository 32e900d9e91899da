"""The hidden tests of L4.2's code exercise, with expected values from the ``qkv`` reference.

Every sentence of the Part 2 spec is covered: the scores on shapes where n_q, n_k and d_k all differ (so a
missing or misplaced transpose shows), a square K (where ``Q @ K`` runs but is wrong), one query, the
array type, the ValueError, d_k read from the arrays, and the spread for several sizes. Each hint names a
mistake learners make; the grader shows it when the failed result is what that mistake computes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from chapter import BY_DK, NO_TRANSPOSE, NOT_SCALED, TIMES_ROOT, Array, random_fractions, random_sizes
from chapter import MISMATCHED_TYPE_ERROR as TYPE_ERROR
from chapter import SCORES_TRANSPOSED as TRANSPOSED_RESULT

from qkv import attention_scores
from qkv.grading import (
    Close,
    Mismatch,
    Mistake,
    Raised,
    Raises,
    Returned,
    Suite,
    TestCase,
    by_keyword,
    called_again,
    check_raises,
    in_dtype,
)

FUNCTIONS = ("dot_scores", "scaled_scores", "score_spread")

# ---------------------------------------------------------------------------------------------- hints
BY_N_KEYS = (
    "You divided by the square root of the number of keys (K.shape[0]); d_k is the number of columns, "
    "K.shape[1] (or Q.shape[1])."
)
BY_N_QUERIES = (
    "You divided by the square root of the number of queries (Q.shape[0]); d_k is the number of columns, "
    "Q.shape[1]."
)
HARD_CODED = (
    "The scale looks fixed at √2, the lesson's example: read d_k from the arrays (Q.shape[1]) so it works "
    "for every size."
)
A_LIST = (
    "Your function returned a Python list; the tests expect a NumPy array. Return Q @ K.T (an array) "
    "instead of converting it with .tolist() or building a list."
)
TOO_STRICT = (
    "Q and K may have different numbers of rows (n_q queries, n_k keys); only their numbers of columns, "
    "d_k, must agree."
)
MISSING_CHECK = (
    "Raise ValueError when Q and K have different numbers of columns, naming both sizes: a query can only "
    "be dotted with a key of the same length."
)
SPREAD_LINEAR = "d_k is the variance of q·k; the spread (the standard deviation) is its square root, √d_k."
SPREAD_SCALED = (
    "1 is the spread after dividing by √d_k; score_spread asks for the spread of the raw dot product, √d_k."
)
SPREAD_INVERSE = "1/√d_k is the scale factor, not the spread: the spread of q·k grows with d_k, as √d_k."


# ------------------------------------------------------------------------------------- comparators
@dataclass(frozen=True)
class AnArray:
    """Like ``Close``, but the value must be a NumPy array (a list of the right numbers is not enough)."""

    close: Close = field(default_factory=Close)

    def mismatch(self, got: Any, want: Any, name: str | None = None) -> Mismatch | None:
        if not isinstance(got, np.ndarray):
            return Mismatch(f"Expected a NumPy array, but got a {type(got).__name__}.")
        return self.close.mismatch(got, want, name)

    def item(self, at: str | int) -> None:
        return None


# ---------------------------------------------------------------------------- mistakes, as computations
def _raw(Q: Any, K: Any) -> Any:
    return np.asarray(Q) @ np.asarray(K).T  # (n_q, n_k)


def _d_k(Q: Any) -> int:
    return int(np.asarray(Q).shape[-1])


SHARED_HINTS = [
    Mistake(NO_TRANSPOSE, lambda Q, K: np.asarray(Q) @ np.asarray(K)),
    Mistake(NO_TRANSPOSE, lambda Q, K: np.asarray(Q) @ np.asarray(K) / math.sqrt(_d_k(Q))),
    Mistake(TRANSPOSED_RESULT, lambda Q, K: _raw(Q, K).T),
    Mistake(TRANSPOSED_RESULT, lambda Q, K: _raw(Q, K).T / math.sqrt(_d_k(Q))),
    Raised(NO_TRANSPOSE, "ValueError", contains="matmul"),
    Raised(TOO_STRICT, "ValueError"),
]
SCALE_HINTS = [
    Mistake(NOT_SCALED, _raw),
    Mistake(BY_DK, lambda Q, K: _raw(Q, K) / _d_k(Q)),
    Mistake(TIMES_ROOT, lambda Q, K: _raw(Q, K) * math.sqrt(_d_k(Q))),
    Mistake(BY_N_KEYS, lambda Q, K: _raw(Q, K) / math.sqrt(np.asarray(K).shape[0])),
    Mistake(BY_N_QUERIES, lambda Q, K: _raw(Q, K) / math.sqrt(np.asarray(Q).shape[0])),
    Mistake(HARD_CODED, lambda Q, K: _raw(Q, K) / math.sqrt(2)),
    *SHARED_HINTS,
]
SPREAD_HINTS = [
    Mistake(SPREAD_LINEAR, lambda d_k: d_k),
    Mistake(SPREAD_SCALED, lambda d_k: 1.0),
    Mistake(SPREAD_INVERSE, lambda d_k: 1 / math.sqrt(d_k)),
]
LIST_HINTS = [Returned(A_LIST, when=lambda got, *args: isinstance(got, list | tuple))]
# A ValueError that fails a test expecting one is NumPy's own (Q @ K.T on the wrong sizes): no check ran.
RAISE_HINTS = [Returned(MISSING_CHECK), Raised(MISSING_CHECK, "ValueError"), Raised(TYPE_ERROR, "TypeError")]


# ------------------------------------------------------------------------------------ input generators
def _all_differ(rng: np.random.Generator) -> tuple[Array, Array]:
    n_q, n_k, d_k = random_sizes(rng, 3, 3, 7)
    return random_fractions(rng, n_q, d_k), random_fractions(rng, n_k, d_k)


def _square_keys(rng: np.random.Generator) -> tuple[Array, Array]:
    """n_k = d_k, so that Q @ K (no transpose) runs and gives wrong numbers."""
    n_q, d_k = random_sizes(rng, 2, 3, 6)
    return random_fractions(rng, n_q, d_k), random_fractions(rng, d_k, d_k)


def _one_query(rng: np.random.Generator) -> tuple[Array, Array]:
    n_k, d_k = random_sizes(rng, 2, 3, 7)
    return random_fractions(rng, 1, d_k), random_fractions(rng, n_k, d_k)


def _wide(rng: np.random.Generator) -> tuple[Array, Array]:
    """A larger head (d_k from 9 to 16), far from the lesson's d_k = 2."""
    n_q, n_k = random_sizes(rng, 2, 3, 6)  # never 2, where √n would pass for the lesson's √2
    d_k = int(rng.integers(9, 17))
    return random_fractions(rng, n_q, d_k), random_fractions(rng, n_k, d_k)


def _columns_differ(rng: np.random.Generator) -> tuple[Array, Array]:
    n_q, n_k, d_k = random_sizes(rng, 3, 2, 6)
    return random_fractions(rng, n_q, d_k), random_fractions(rng, n_k, d_k + 1)


THE_LESSON = (np.array([[1, 0], [0, 2]]), np.array([[1, 0], [0, 1]]))
COLUMNS = "Q and K have different numbers of columns (d_k)"


def _dot(Q: Any, K: Any) -> Any:
    return attention_scores(Q, K, scale=1.0)  # (n_q, n_k)


def _scaled(Q: Any, K: Any) -> Any:
    return attention_scores(Q, K)  # (n_q, n_k)


def _spread(d_k: int) -> float:
    return math.sqrt(d_k)


def _case(name: str, function: str, args: Any, **extra: Any) -> TestCase:
    reference = _dot if function == "dot_scores" else _scaled
    hints = extra.pop("hints", SHARED_HINTS if function == "dot_scores" else SCALE_HINTS)
    return TestCase(name, function, args, reference, extra.pop("compare", Close()), hints)


def _one_query_hints(function: str) -> list[Any]:
    """With n_q = 1, dividing by √n_q changes nothing: that slip and a missing scale look the same here, so
    neither is named in this test (the other tests tell them apart)."""
    if function == "dot_scores":
        return SHARED_HINTS
    return [hint for hint in SCALE_HINTS if getattr(hint, "message", None) not in (NOT_SCALED, BY_N_QUERIES)]


def _both(function: str) -> list[TestCase]:
    return [
        _case(f"{function} reproduces the lesson's example (q₁ = [1, 0], q₂ = [0, 2])", function, THE_LESSON),
        _case(f"{function} with n_q, n_k and d_k all different", function, _all_differ),
        _case(f"{function} with a square K (n_k = d_k)", function, _square_keys),
        _case(f"{function} with one query (n_q = 1)", function, _one_query, hints=_one_query_hints(function)),
        _case(f"{function} with a wider head (d_k from 9 to 16)", function, _wide),
        in_dtype(_case(f"{function} with n_q, n_k and d_k all different", function, _all_differ), "float32"),
        by_keyword(_case(f"{function} with n_q, n_k and d_k all different", function, _all_differ), "K"),
        _case(
            f"{function} returns a NumPy array",
            function,
            _all_differ,
            compare=AnArray(),
            hints=LIST_HINTS,
        ),
        TestCase(
            f"{function} raises ValueError when Q and K have different numbers of columns",
            function,
            _columns_differ,
            check_raises(_dot, Raises("ValueError", COLUMNS)),
            hints=RAISE_HINTS,
        ),
    ]


def _spread_case(name: str, args: Any) -> TestCase:
    return TestCase(name, "score_spread", args, _spread, Close(), SPREAD_HINTS)


# --------------------------------------------------------------------------------------------- the suite
functions = Suite(
    FUNCTIONS,
    [
        *_both("dot_scores"),
        *_both("scaled_scores"),
        *called_again(
            _case("scaled_scores with n_q, n_k and d_k all different", "scaled_scores", _all_differ)
        ),
        _spread_case("score_spread for d_k = 4 (spread 2)", (4,)),
        _spread_case("score_spread for d_k = 64", (64,)),
        _spread_case("score_spread for d_k = 512 (not a perfect square)", (512,)),
        _spread_case("score_spread for a random d_k", lambda rng: (int(rng.integers(2, 1000)),)),
        by_keyword(
            _spread_case("score_spread for a random d_k", lambda rng: (int(rng.integers(2, 1000)),)), "d_k"
        ),
    ],
)

SUITES = {"functions": functions}

# The reference each test compares with, by function name (the project's tests check it against PyTorch).
REFERENCE = {"dot_scores": _dot, "scaled_scores": _scaled, "score_spread": _spread}
