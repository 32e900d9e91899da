"""What the lessons of chapter L4 share: its worked example, drawing variants, rounding, hint sentences,
the catalogue of attention mistakes and the random inputs of the hidden tests.

The lesson engine lets this chapter's ``lesson.py`` and ``grading.py`` files import this module as
``chapter`` (``from chapter import WORKED``). Every number here comes from the ``qkv`` library.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from qkv import attention, attention_scores, gelu
from qkv.grading import Mistake

Array = np.ndarray[Any, np.dtype[Any]]
Numbers = TypeVar("Numbers")

# ------------------------------------------------------------------------------------ the worked example
# The chapter reference's worked example (reference.md, on every page of the chapter): one query, two keys
# and two values, with d_k = 2. A test holds these numbers, and the results below, equal to reference.md.
WORKED: dict[str, Any] = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}


def worked_example() -> dict[str, Any]:
    """The worked example's numbers and every result the chapter reference shows for it, from ``qkv``.

    Returns
    -------
    dict
        ``q``, ``K``, ``V`` and ``d_k`` as written; ``raw_scores`` (q·kᵢ), ``scores`` (divided by √d_k),
        ``weights`` and ``output`` of the one query; ``first_key_output``, its output when a causal mask
        lets it see the first key only. Each result is a plain list, one entry per key or value column.

    Examples
    --------
    >>> example = worked_example()
    >>> [round(w, 6) for w in example["weights"]], [round(o, 6) for o in example["output"]]
    ([0.669762, 0.330238], [1.339523, 0.660477])
    >>> example["raw_scores"], example["first_key_output"]
    ([1.0, 0.0], [2.0, 0.0])
    """
    q, K, V = [WORKED["q"]], WORKED["K"], WORKED["V"]  # (1, d_k), (n_k, d_k), (n_k, d_v)
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    first_key = attention(q, K, V, mask=[[True, False]])  # (1, d_v)
    return {
        "q": WORKED["q"],
        "K": K,
        "V": V,
        "d_k": len(WORKED["q"]),
        "raw_scores": attention_scores(q, K, scale=1.0)[0].tolist(),  # (n_k,)
        "scores": attention_scores(q, K)[0].tolist(),  # (n_k,)
        "weights": weights[0].tolist(),
        "output": output[0].tolist(),
        "first_key_output": first_key[0].tolist(),
    }


# ------------------------------------------------------------------------------------- drawing variants
# A distinctness test that no draw passes would otherwise hang the page: this many draws is far more than
# any lesson of the chapter needs (a few hundred at most), so reaching it means the test is wrong.
MAX_DRAWS = 100_000


def draw_until(
    rng: random.Random, draw: Callable[[random.Random], Numbers], distinguishable: Callable[[Numbers], bool]
) -> Numbers:
    """Draw numbers from ``rng`` until ``distinguishable`` accepts them, so feedback is never ambiguous.

    Parameters
    ----------
    rng : random.Random
        Seeded by the variant's seed: the same seed always gives the same numbers.
    draw : callable
        One candidate from ``rng``.
    distinguishable : callable
        Whether the candidate's answers and named mistakes all tell apart (and whatever else the lesson
        asks of its numbers).

    Raises
    ------
    RuntimeError
        If no candidate passes in ``MAX_DRAWS`` draws.

    Examples
    --------
    >>> draw_until(random.Random(1), lambda rng: rng.randint(1, 6), lambda n: n % 2 == 0)
    2
    """
    for _ in range(MAX_DRAWS):
        numbers = draw(rng)
        if distinguishable(numbers):
            return numbers
    test = getattr(distinguishable, "__name__", "the distinctness test")
    raise RuntimeError(f"No draw passed {test} in {MAX_DRAWS} tries.")


def variant_numbers(
    seed: int | None,
    seed_page: dict[str, Any],
    draw: Callable[[random.Random], dict[str, Any]],
    distinguishable: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """The printed page's own numbers for ``seed`` None; otherwise numbers drawn from the seed.

    Examples
    --------
    >>> variant_numbers(None, {"n": 3}, lambda rng: {"n": rng.randint(4, 9)}, lambda numbers: True)
    {'n': 3}
    >>> variant_numbers(2, {"n": 3}, lambda rng: {"n": rng.randint(4, 9)}, lambda numbers: True)
    {'n': 4}
    """
    return seed_page if seed is None else draw_until(random.Random(seed), draw, distinguishable)


# ---------------------------------------------------------------------------------------------- rounding
def rounded(value: Any) -> float:
    """A number to the 6 decimals a page writes, with no negative zero.

    Examples
    --------
    >>> rounded(2 / 3), rounded(-1e-9)
    (0.666667, 0.0)
    """
    return round(float(value), 6) + 0.0  # + 0.0 turns -0.0 into 0.0: the two are one number on a page


def rounded_all(values: Any) -> list[float]:
    """Every number of ``values`` (any shape, read row by row) to 6 decimals.

    Examples
    --------
    >>> rounded_all([[1 / 3, 2], [-0.0, 0.5]])
    [0.333333, 2.0, 0.0, 0.5]
    """
    return [rounded(value) for value in np.ravel(values)]


def apart(vectors: Iterable[list[float]], tolerance: float = 0.02) -> bool:
    """Whether no two vectors are within ``tolerance`` of each other, in the same order or reversed.

    Numbers typed to two or three decimals are told apart by feedback only when no two answers (or an
    answer and a named mistake) are this close; reversed, because a learner may type a pair backwards.

    Examples
    --------
    >>> apart([[0.2, 0.8], [0.81, 0.19]]), apart([[0.2, 0.8], [0.5, 0.5]])
    (False, True)
    """
    listed = list(vectors)
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            if np.allclose(a, b, atol=tolerance) or np.allclose(a, b[::-1], atol=tolerance):
                return False
    return True


# ---------------------------------------------------------------------------------------- hint sentences
def type_error_hint(why: str | None = None) -> str:
    """The hint for code that raised TypeError where the spec asks for ValueError, with the reason why.

    Examples
    --------
    >>> type_error_hint("a matrix of the wrong size is a bad value")
    '... raised TypeError: a matrix of the wrong size is a bad value, so raise ValueError.'
    >>> type_error_hint()
    'The spec asks for ValueError here, but your code raised TypeError: raise ValueError.'
    """
    reason = f"{why}, so raise ValueError" if why else "raise ValueError"
    return f"The spec asks for ValueError here, but your code raised TypeError: {reason}."


MISMATCHED_TYPE_ERROR = type_error_hint("arrays of mismatched sizes are bad values")
NOT_A_PAIR = "Return the output and the weights together as the tuple (O, A)."


# -------------------------------------------------------------------------------- inputs of hidden tests
def random_decimals(rng: np.random.Generator, *shape: int, spread: float = 2.0) -> Array:
    """Random entries from -spread to spread with two decimals, readable in feedback.

    Examples
    --------
    >>> random_decimals(np.random.default_rng(0), 2, 3).shape
    (2, 3)
    """
    return np.round(rng.uniform(-spread, spread, size=shape), 2)


def random_fractions(rng: np.random.Generator, *shape: int, spread: float = 2.0) -> Array:
    """Like :func:`random_decimals`, but never a whole number: one would hide truncation to int or a
    hard-coded size.

    Examples
    --------
    >>> values = random_fractions(np.random.default_rng(0), 50)
    >>> bool(np.all(values != np.round(values)))
    True
    """
    values = random_decimals(rng, *shape, spread=spread)
    values[values == np.round(values)] += 0.25
    return values


def random_sizes(rng: np.random.Generator, count: int, low: int = 2, high: int = 7) -> list[int]:
    """``count`` different sizes from ``low`` to ``high``, so that a swapped pair of sizes shows.

    Examples
    --------
    >>> sizes = random_sizes(np.random.default_rng(0), 3)
    >>> len(set(sizes)), all(2 <= n <= 7 for n in sizes)
    (3, True)
    """
    return [int(n) for n in rng.choice(np.arange(low, high + 1), size=count, replace=False)]


# -------------------------------------------------------------------------- the catalogue of mistakes
# Each typical mistake of attention code is written here once: the sentence that names it (a constant)
# and what it computes (a keyword of one of the functions below, which do the right computation unless
# told to slip). Every lesson whose functions can make a mistake names it with these, in its grading.py
# (a hint is plain text: no Markdown). Where a lesson's test can tell two mistakes apart, pair_rules()
# names both at once.
#
# The grader's generic checks: every call must leave its inputs unchanged (qkv.grading's default, named
# below where a lesson's function is tempted to write into them), and the lessons that promise "no
# warning" (the softmax and the masked softmax) refuse warnings in their suites.

# The scale of the scores.
BY_DK = (
    "You divided the scores by d_k itself; the scale is its square root, so divide by np.sqrt(d_k) "
    "(d_k is the length of one query or key, d_head inside a head)."
)
NOT_SCALED = (
    "The scores were not scaled: divide Q @ K.T by √d_k before the softmax (d_k is the length of one "
    "query or key, d_head inside a head)."
)
TIMES_ROOT = "You multiplied by √d_k; the scores must be divided by it, which makes them smaller."
# Transposes.
SCORES_TRANSPOSED = (
    "Your scores come out transposed, as K @ Q.T: they need one row per query and one column per key, "
    "shape (n_q, n_k), which is Q @ K.T."
)
NO_TRANSPOSE = (
    "It looks like you multiplied Q @ K without transposing K: each key is a row of K, so the scores are "
    "Q @ K.T, one row per query and one column per key."
)
WEIGHTS_TRANSPOSED = (
    "The weights were transposed before the product (A.T @ V): A has one row per query, so the output is "
    "A @ V, each query's weights times the values."
)
BY_COLUMNS = (
    "It looks like the weights were applied by columns (X @ W.T): this chapter writes each weight matrix "
    "with one row per input feature, so every projection is simply X @ W."
)
# The softmax.
SOFTMAX_AXIS = (
    "The softmax ran down the columns (over the queries) instead of along each row (over the keys): each "
    "query's weights must sum to 1, so normalise over the last axis, axis=-1."
)
NO_KEEPDIMS = (
    "The row maximum or the row sum lost its axis (no keepdims=True), so it was lined up with the "
    "columns instead of the rows: write S.max(axis=-1, keepdims=True) and E.sum(axis=-1, keepdims=True)."
)
# Masks.
TRIU = (
    "The mask looks transposed: the upper triangle (j ≥ i) lets each query see the keys after it. "
    "Causal is the lower triangle, query i attends key j when j ≤ i: np.tril, not np.triu."
)
DIAGONAL_EXCLUDED = (
    "The diagonal is missing: query i may attend key j when j ≤ i, itself included "
    "(np.tril with k=0, not k=-1). Without it query 0 has no key at all."
)
BOTTOM_RIGHT = (
    "Your mask lines up the last query with the last key (bottom-right). The spec wants the top-left "
    "alignment of PyTorch's is_causal: query i sees keys j ≤ i, so query 0 sees key 0 alone."
)
AFTER_SOFTMAX = (
    "The mask was applied after the softmax: the masked weights are 0, but the allowed ones keep the "
    "share they had next to the masked keys and no longer sum to 1. Set masked scores to -inf before "
    "the softmax."
)
RENORMALISED = (
    "The softmax ran over every key and the masked weights were zeroed and renormalised afterwards. "
    "That is right on paper, but when a masked key scores far higher, the allowed weights underflow to "
    "0 and the row becomes 0/0. Set masked scores to -inf before the softmax."
)
MULTIPLIED = (
    "The scores were multiplied by the mask, so a masked score became 0, and e^0 = 1 still gives that "
    "key weight. A masked score must become -inf: np.where(mask, S, -np.inf)."
)
# Heads.
SPLIT_WITHOUT_TRANSPOSE = (
    "Your heads mix tokens: X.reshape(h, n, d_head) cuts X in memory order, so one head gets pieces of "
    "several tokens. Reshape to (n, h, d_head) first, then swap the first two axes to get (h, n, d_head)."
)
MERGE_WITHOUT_TRANSPOSE = (
    "Your merge mixes tokens: H.reshape(n, h·d_head) straight from (h, n, d_head) reads the heads in "
    "memory order. Bring the tokens first with transpose(1, 0, 2), then reshape to (n, h·d_head)."
)
# The block.
POST_NORM = (
    "That is a post-norm block, LN(X + MHA(X)). This one is pre-norm: normalise the input of each sub-layer "
    "and add the sub-layer's result to the un-normalised X."
)
RESIDUAL_FROM_NORMED = (
    "The residual was taken from the normalised input: the sub-layer reads LN(X), but what it adds to is "
    "X itself, X + MHA(LN(X)). Keep X in its own variable before you normalise it."
)
X_TWICE = (
    "The original X was added twice: the second residual adds the MLP's result to H = X + MHA(LN(X)), "
    "which already holds X, so the output is H + MLP(LN(H)), with no second X."
)
SECOND_RESIDUAL_FROM_X = (
    "The second residual starts again from the original X, which drops the attention's result: it adds "
    "to H = X + MHA(LN(X)), so the output is H + MLP(LN(H))."
)
SAME_NORM = (
    "Each sub-layer has its own layer norm: ln1_g, ln1_b before attention and ln2_g, ln2_b before the MLP."
)
CAUSAL_NOT_PASSED = (
    "The causal flag was not passed on: with causal=True token i may attend only to tokens 0 … i, so "
    "hand causal to the attention (in every head)."
)
# Layer norm.
UNBIASED_VARIANCE = (
    "Your variance divides by d − 1 (ddof=1, as pandas and torch.var do by default). Layer norm uses the "
    "plain mean of the squared deviations, divided by d: np.var's default."
)
EPS_OUTSIDE = (
    "eps belongs inside the square root: divide by √(var + eps), not by √var + eps. The difference shows "
    "when a row's variance is small."
)
EPS_HARD_CODED = (
    "eps looks fixed at 1e-5: use the eps argument the function is given, which may be another number."
)
# GELU.
EXACT_GELU = (
    "That is the exact GELU, 0.5·x·(1 + erf(x/√2)). This chapter, like PyTorch's approximate='tanh', uses "
    "the tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."
)
GELU_SQUARE = (
    "The GELU's correction term is cubic: 0.044715·x³, not x². Write x**3 (the cube keeps the sign of x)."
)
GELU_SIGMOID = (
    "That is the sigmoid approximation x·σ(1.702·x). This chapter uses the tanh form: "
    "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."
)
GELU_NO_CUBE = "The tanh form has a cubic term: tanh(√(2/π)·(x + 0.044715·x³)), not tanh(√(2/π)·x)."


def both(first: str, second: str) -> str:
    """The sentence for two mistakes at once, each named by its own sentence.

    Examples
    --------
    >>> both("One.", "Two.")
    'Two mistakes at once. First: One. Second: Two.'
    """
    return f"Two mistakes at once. First: {first} Second: {second}"


def either(first: str, second: str) -> str:
    """The sentence for a result that two mistakes give alike on a test's inputs, each named by its own
    sentence (a later test, whose inputs tell them apart, names the one made).

    Examples
    --------
    >>> either("One.", "Two.")
    'One of two mistakes, which these inputs cannot tell apart. Either: One. Or: Two.'
    """
    return f"One of two mistakes, which these inputs cannot tell apart. Either: {first} Or: {second}"


def pair_rules(
    combinable: Sequence[tuple[str, dict[str, Any]]],
    build: Callable[..., Callable[..., Any]],
    apart: Callable[[str, str], bool] = lambda first, second: True,
    at: str | int | None = None,
) -> list[Mistake]:
    """One rule for each two mistakes that can happen together, naming both.

    A rule recognises a result only when everything else is right, so two mistakes at once match no
    single rule. ``combinable`` lists each mistake with the keywords that make ``build`` commit it; two
    that set the same keyword cannot happen together, and ``apart(first, second)`` leaves out other pairs
    (ones a single rule already names, say).

    Examples
    --------
    >>> rules = pair_rules([("A.", {"a": 1}), ("B.", {"b": 1}), ("C.", {"a": 2})],
    ...                    lambda a=0, b=0: lambda x: x + a + 10 * b)
    >>> [rule.message for rule in rules], rules[0].compute(0)
    (['Two mistakes at once. First: A. Second: B.', 'Two mistakes at once. First: B. Second: C.'], 11)
    """
    rules = []
    for i, (first, settings) in enumerate(combinable):
        for second, more in combinable[i + 1 :]:
            if settings.keys() & more.keys() or not apart(first, second):
                continue
            rules.append(Mistake(both(first, second), build(**settings, **more), at=at))
    return rules


def softmax_with(S: Any, axis: int = -1, keepdims: bool = True) -> Array:
    """The softmax of ``S`` over ``axis`` (max subtracted), or with its reductions' axis lost; NaN for a
    row of -inf, as a softmax written by hand gives.

    Examples
    --------
    >>> softmax_with(np.log([[1.0, 3.0]])).tolist()
    [[0.25, 0.75]]
    >>> softmax_with(np.log([[1.0, 3.0], [1.0, 1.0]]), keepdims=False).round(3).tolist()
    [[0.1, 2.25], [0.1, 0.75]]
    """
    S = np.asarray(S, dtype=float)
    with np.errstate(all="ignore"):
        E = np.exp(S - S.max(axis=axis, keepdims=keepdims))
        return E / E.sum(axis=axis, keepdims=keepdims)


def attention_with(
    Q: Any,
    K: Any,
    V: Any,
    mask: Any = None,
    *,
    scale: str | float = "root",
    scores: str = "QK",
    axis: int = -1,
    keepdims: bool = True,
    masking: str = "inf",
    output: str = "AV",
) -> tuple[Array, Array]:
    """Attention over the last two axes, (O, A), right or with the slips its keywords name.

    A fully masked query gets zero weights and a zero output (the chapter's policy) where the masking is
    right; the slips keep what the mistaken code gives there (NaN for 0/0).

    Parameters
    ----------
    Q, K, V : array_like, shape (..., n_q, d_k), (..., n_k, d_k), (..., n_k, d_v)
    mask : array_like of bool, optional
        True where a query may attend a key; broadcast to (..., n_q, n_k).
    scale : {"root", "d_k", "none", "times_root"} or float
        Divide the scores by √d_k (right), by d_k, not at all, multiply by √d_k; or multiply by this.
    scores : {"QK", "KQ"}
        Q Kᵀ (right), or K Qᵀ.
    axis, keepdims :
        The softmax's axis (-1 is right) and whether its reductions keep it (right).
    masking : {"inf", "after", "renormalised", "multiplied", "fill", "added"}
        -inf before the softmax (right); the weights times the mask; that, divided by its row sums;
        the scores times the mask; masked scores set to -1e9; -1e9 added to them.
    output : {"AV", "ATV"}
        A @ V (right), or A.T @ V.

    Examples
    --------
    >>> O, A = attention_with([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]])
    >>> A.round(6).tolist(), O.round(6).tolist()
    ([[0.669762, 0.330238]], [[1.339523, 0.660477]])
    >>> attention_with([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]], scale="none")[1]
    array([[0.73105858, 0.26894142]])
    """
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    d_k = Q.shape[-1]
    S = Q @ np.swapaxes(K, -1, -2) if scores == "QK" else K @ np.swapaxes(Q, -1, -2)  # (..., n_q, n_k)
    factors = {"root": 1 / math.sqrt(d_k), "d_k": 1 / d_k, "none": 1.0, "times_root": math.sqrt(d_k)}
    S = S * (factors[scale] if isinstance(scale, str) else scale)
    given = None if mask is None else np.asarray(mask, dtype=bool)
    if given is not None and masking in ("inf", "multiplied", "fill", "added"):
        S = {  # the mask as given, so that a crash says what the mistaken code's says
            "inf": lambda: np.where(given, S, -np.inf),
            "multiplied": lambda: S * given,
            "fill": lambda: np.where(given, S, -1e9),
            "added": lambda: S + np.where(given, 0.0, -1e9),
        }[masking]()
    allowed = None if given is None else np.broadcast_to(given, S.shape)
    A = softmax_with(S, axis, keepdims)
    if allowed is not None and masking == "inf":
        A = np.where(np.isnan(A), 0.0, A)  # a query with no key: zero weights
    elif allowed is not None and masking in ("after", "renormalised"):
        A = A * allowed
        if masking == "renormalised":
            with np.errstate(all="ignore"):
                A = A / A.sum(axis=-1, keepdims=True)
    O = (A if output == "AV" else np.swapaxes(A, -1, -2)) @ V  # (..., n_q, d_v)
    return O, A


def renormalised_underflow(Q: Any, K: Any, mask: Any, scale: float | None = None) -> Array:
    """Which queries of a masked softmax come out 0/0 when the softmax runs over every key and is masked
    and renormalised after: those whose allowed weights all underflow next to a masked key's.

    Examples
    --------
    >>> renormalised_underflow([[1.0], [1.0]], [[1.0], [2000.0]], [[True, False], [True, True]]).tolist()
    [True, False]
    """
    _, A = attention_with(Q, K, np.zeros((np.shape(K)[0], 1)), mask, masking="after", scale=scale or "root")
    allowed = np.broadcast_to(np.asarray(mask, dtype=bool), A.shape)
    return np.asarray(allowed.any(axis=-1) & (A.sum(axis=-1) == 0))


def layer_norm_with(
    ddof: int = 0,
    eps_place: str = "inside",
    axis: int = -1,
    affine: bool = True,
    eps_fixed: float | None = None,
) -> Callable[..., Array]:
    """A layer norm, right or with a slip: the variance with ``ddof``; eps "inside" the root (right),
    "outside" it or "none"; over ``axis`` (-1 is right); without gamma and beta; eps fixed at a number.

    Examples
    --------
    >>> X, g, b = [[1.0, 3.0]], [1.0, 1.0], [0.0, 0.0]
    >>> layer_norm_with()(X, g, b, 0.0).tolist(), layer_norm_with(ddof=1)(X, g, b, 0.0).round(3).tolist()
    ([[-1.0, 1.0]], [[-0.707, 0.707]])
    """

    def compute(X: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Array:
        X = np.asarray(X, dtype=float)
        eps = eps if eps_fixed is None else eps_fixed
        mean = X.mean(axis=axis, keepdims=True)
        var = X.var(axis=axis, keepdims=True, ddof=ddof)
        scale = {"inside": np.sqrt(var + eps), "outside": np.sqrt(var) + eps, "none": np.sqrt(var)}[eps_place]
        with np.errstate(all="ignore"):
            normed = (X - mean) / scale
        return normed * np.asarray(gamma) + np.asarray(beta) if affine else normed

    return compute


def gelu_with(form: str = "tanh") -> Callable[[Any], Array]:
    """A GELU: the tanh form (right), "exact" (erf), "square" (x² for x³), "sigmoid" (x·σ(1.702x)) or
    "no_cube" (the tanh form without its cubic term).

    Examples
    --------
    >>> [round(float(gelu_with(form)(1.0)), 4) for form in ("tanh", "exact", "square", "sigmoid")]
    [0.8412, 0.8413, 0.8412, 0.8458]
    """
    root = math.sqrt(2 / math.pi)

    def compute(x: Any) -> Array:
        x = np.asarray(x, dtype=float)
        if form == "exact":
            return gelu(x, exact=True)
        if form == "sigmoid":
            return x / (1 + np.exp(-1.702 * x))
        if form == "square":
            return 0.5 * x * (1 + np.tanh(root * (x + 0.044715 * x**2)))
        if form == "no_cube":
            return 0.5 * x * (1 + np.tanh(root * x))
        return gelu(x)

    return compute


@dataclass(frozen=True)
class Crashed:
    """A hint rule: the learner's call raised exactly what ``compute`` raises for the same inputs (the same
    exception and message, NumPy's shapes included), so the crash is that mistake's.

    Examples
    --------
    >>> from qkv.grading.feedback.hints import Outcome
    >>> from qkv.grading import Close
    >>> rule = Crashed("Keep the axis.", lambda S: S - S.max(axis=-1))
    >>> S = np.zeros((2, 3))
    >>> try:
    ...     S - S.max(axis=-1)
    ... except ValueError as error:
    ...     said = str(error)
    >>> rule.matches(Outcome((S,), None, Close(), exception="ValueError", message=said))
    True
    """

    message: str
    compute: Callable[..., Any]

    def matches(self, outcome: Any) -> bool:
        if outcome.exception is None:
            return False
        try:
            with np.errstate(all="ignore"):
                self.compute(*outcome.args)
        except Exception as error:  # what the mistake raises, to hold against what the learner's raised
            # The grader names an exception by its nearest built-in class (NumPy's AxisError: ValueError).
            kind = next(c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins")
            return kind == outcome.exception and str(error)[:1000] == outcome.message[:1000]
        return False


# Side effects: a right result that changed the caller's array, or that NumPy warned about on the way.
SCORES_IN_PLACE = (
    "Subtracting the row maximum in place (S -= …) rewrites the caller's scores. Make a new array instead: "
    "S = S - S.max(axis=-1, keepdims=True)."
)
X_IN_PLACE = (
    "Centring X in place (X -= mean, X /= …) rewrites the caller's array, and in a block that array is "
    "the residual stream the next step still adds to. Make a new array: Xc = X - mean."
)
ZERO_BY_ZERO = (
    "A fully masked row reached 0 / 0 (NumPy warned: invalid value) before the NaN was replaced. Give rows "
    "without an allowed key their zeros without dividing, for example with np.where(total > 0, …, 0) and a "
    "divisor that is never 0."
)
