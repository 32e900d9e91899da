"""Mutants of a reference solution (qkv.grading.feedback.mutants): each operator on a small reference, pairs, and
what a mutant's words say. No sandbox: the mutants are the reference, changed, run in this process."""

from __future__ import annotations

import numpy as np
import pytest

from qkv.grading.feedback.mutants import PRIORITY, Mutants, mutations
from qkv.grading.feedback.quoting import combined, quoted

REFERENCE = """import numpy as np


def softmax(S):
    S = np.asarray(S, dtype=float)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attend(Q, K, V):
    A = softmax(Q @ K.T / np.sqrt(Q.shape[1]))
    return A @ V, A


def causal(n):
    return np.tril(np.ones((n, n), dtype=bool), k=0)


def sees(n):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return j <= i


def split(X, h):
    n, d_model = X.shape
    d_head = d_model // h
    return X.reshape(n, h, d_head).transpose(1, 0, 2)


def norm(X, gamma, beta):
    mu = X.mean(axis=-1, keepdims=True)
    return (X - mu) / np.sqrt(X.var(axis=-1, keepdims=True) + 1e-5) * gamma + beta


def count(d_model):
    return 4 * d_model * d_model


def checked(Q, K):
    if Q.shape[1] != K.shape[1]:
        raise ValueError("Q and K need as many columns")
    return Q @ K.T


def matched(Q, K, V):
    if Q.shape[1] != K.shape[1]:
        raise ValueError("Q and K need as many columns")
    return Q @ K.T @ V


def layer(X, p, eps=1e-5):
    H = X + np.tanh(norm(X, p["g1"], p["b1"]) + eps)
    return H + np.tanh(norm(H, p["g2"], p["b2"]))
"""
RNG = np.random.default_rng(5)
Q, K, V = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
X = RNG.normal(size=(3, 4))
FOUND = Mutants(REFERENCE)
ALL = mutations(REFERENCE)


def by_words(words: str, function: str | None = None, before: str = "") -> tuple[int, ...]:
    hits = [
        i
        for i, m in enumerate(ALL)
        if words in m.words and (function is None or m.function == function) and before in m.before
    ]
    assert hits, f"no mutation says {words!r}: {[m.words for m in ALL]}"
    return (hits[0],)


def run(key: tuple[int, ...], function: str, *args: object) -> object:
    mutant = FOUND.mutant(key)
    assert mutant.functions is not None
    return mutant.call(function, args)


def test_every_operator_makes_mutations() -> None:
    assert {m.operator for m in ALL} == set(PRIORITY)


@pytest.mark.parametrize(
    ("words", "function", "before", "args", "wrong"),
    [
        ("over axis 0 instead of axis -1", "softmax", "E.sum", (Q,), lambda: _softmax(Q, sum_axis=0)),
        ("without keepdims=True", "norm", "X.mean", (X, 1.0, 0.0), None),
        ("without the square root", "attend", "", (Q, K, V), lambda: _attend(Q, K, V, scale=4.0)),
        ("with the square root of", "norm", "gamma", (X, 4.0, 0.0), None),
        ("the right operand of @ transposed", "attend", "", (Q, RNG.normal(size=(4, 4)), V[:4]), None),
        ("without the transpose (.T)", "attend", "", (Q, RNG.normal(size=(4, 4)), V[:4]), None),
        ("returning the items in the other order", "attend", "", (Q, K, V), lambda: _attend(Q, K, V)[::-1]),
        ("with min instead of max", "softmax", "", (Q * 400,), None),
        ("with 3 instead of 4", "count", "", (5,), lambda: 75),
        ("with k=1 instead of k=0", "causal", "", (4,), lambda: np.tril(np.ones((4, 4), dtype=bool), k=1)),
        ("comparing with <", "sees", "", (4,), lambda: np.tril(np.ones((4, 4), dtype=bool), k=-1)),
        ("with i + 1 where i belongs", "sees", "", (4,), lambda: np.tril(np.ones((4, 4), dtype=bool), k=1)),
        ("with d_head where n belongs", "split", "", (RNG.normal(size=(3, 4)), 2), None),
        ("with K where V belongs", "attend", "", (Q, K, RNG.normal(size=(5, 4))), None),
        ("without np.exp", "softmax", "", (Q,), None),
        ("with the arguments", "split", "", (RNG.normal(size=(3, 4)), 2), None),
        ("without the // h", "split", "", (RNG.normal(size=(3, 4)), 2), None),
        ("without the @ V", "attend", "", (Q, K, V), lambda: (_attend(Q, K, V)[1],) * 2),
        ("multiplied by", "attend", "", (Q, K, V), lambda: _attend(Q, K, V, scale=0.5)),
    ],
)
def test_an_operator_changes_what_the_reference_computes(
    words: str,
    function: str,
    before: str,
    args: tuple,
    wrong: object,  # type: ignore[type-arg]
) -> None:
    key = by_words(words, function, before)
    try:
        value = run(key, function, *args)
    except (ValueError, TypeError, IndexError):
        assert wrong is None  # a mutant that cannot run on these inputs: no result, never a wrong one
        return
    if callable(wrong):
        assert _close(value, wrong())
    else:
        assert not _close(value, _reference(function, *args))


P = {"g1": RNG.normal(size=4), "b1": RNG.normal(size=4), "g2": RNG.normal(size=4), "b2": RNG.normal(size=4)}


def _norm(X: np.ndarray, gamma: object, beta: object, ddof: int = 0) -> np.ndarray:
    mu, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True, ddof=ddof)
    return (X - mu) / np.sqrt(var + 1e-5) * gamma + beta  # type: ignore[operator]


def test_a_variance_divided_by_the_count_minus_one() -> None:
    key = by_words("with ddof=1", "norm")
    assert _close(run(key, "norm", X, 1.0, 0.0), _norm(X, 1.0, 0.0, ddof=1))


def test_a_parameter_replaced_by_its_default() -> None:
    key = by_words("with 1e-05, the default of eps, where eps belongs", "layer")
    assert _close(run(key, "layer", X, P, 0.5), run((), "layer", X, P))
    assert not _close(run(key, "layer", X, P, 0.5), run((), "layer", X, P, 0.5))


def test_a_call_given_the_parameters_of_its_sibling_call() -> None:
    key = by_words("with g1, b1 where g2, b2 belong", "layer")
    H = X + np.tanh(_norm(X, P["g1"], P["b1"]) + 1e-5)
    assert _close(run(key, "layer", X, P), H + np.tanh(_norm(H, P["g1"], P["b1"])))
    assert ALL[key[0]].operator == "sibling"
    assert by_words("with g1 where g2 belongs", "layer")  # and one numbered name alone


def test_a_normalisation_moved_after_the_residual_in_both_places() -> None:
    moves = [
        i for i, m in enumerate(ALL) if m.function == "layer" and "applied after the residual" in m.words
    ]
    assert len(moves) == 2 and ALL[moves[0]].words == ALL[moves[1]].words  # one slip, made twice: a pair
    H = _norm(X + np.tanh(X + 1e-5), P["g1"], P["b1"])
    assert _close(run(tuple(moves), "layer", X, P), _norm(H + np.tanh(H), P["g2"], P["b2"]))
    assert sorted(ALL[i].after for i in moves) == [
        "norm(H + np.tanh(H), p['g2'], p['b2'])",
        "norm(X + np.tanh(X + eps), p['g1'], p['b1'])",
    ]


def test_a_residual_taken_from_the_normalised_input_or_added_twice() -> None:
    key = by_words("with the residual taken from norm(X, …) instead of X", "layer")
    normed = _norm(X, P["g1"], P["b1"])
    H = normed + np.tanh(normed + 1e-5)
    assert _close(run(key, "layer", X, P), H + np.tanh(_norm(H, P["g2"], P["b2"])))
    twice = by_words("with X added once more", "layer")
    assert _close(run(twice, "layer", X, P), X + run((), "layer", X, P))


def test_a_change_of_two_statements_is_one_mutation() -> None:
    source = "def f(x, g):\n    y = 2 * norm(x, g)\n    return x + y\n\n\ndef norm(x, g):\n    return x * g\n"
    found = Mutants(source)
    key = next(k for k in found.singles("f") if "applied after" in found.change(k[0]).words)
    assert len(found.change(key[0]).edits) == 2
    assert found.mutant(key).call("f", (3.0, 5.0)) == (3.0 + 2 * 3.0) * 5.0


def test_working_on_the_argument_itself_changes_it_in_place() -> None:
    key = by_words("working on S itself", "softmax")
    scores = Q.copy()
    mutant = FOUND.mutant(key)
    assert mutant.functions is not None
    # The mutant gets a copy of the arguments (the grader's own stay as they were)
    assert _close(mutant.call("softmax", (scores,)), _softmax(Q)) and _close(scores, Q)


def test_a_change_in_a_callee_reaches_its_caller() -> None:
    key = by_words("over axis 0 instead of axis -1", "softmax", "E.sum")
    assert key in FOUND.singles("attend")
    _, weights = run(key, "attend", Q, K, V)  # type: ignore[misc]
    assert _close(weights, _softmax(Q @ K.T / 2.0, sum_axis=0))


def test_a_pair_exchanges_two_operands() -> None:
    pair = (*by_words("with beta where gamma belongs"), *by_words("with gamma where beta belongs"))
    gamma, beta = RNG.normal(size=4), RNG.normal(size=4)
    mu, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True)
    assert _close(run(pair, "norm", X, gamma, beta), (X - mu) / np.sqrt(var + 1e-5) * beta + gamma)
    assert "; and " in FOUND.mutant(pair).describe()


def test_nested_changes_make_no_mutant() -> None:
    outer = by_words("without the * gamma")  # drops the product, inside which the other change lies
    inner = by_words("with beta where gamma belongs")
    assert FOUND.mutant((*outer, *inner)).functions is None


def test_the_words_quote_the_mutant_s_expression_and_never_the_reference_s() -> None:
    mutation = ALL[by_words("over axis 0 instead of axis -1", "softmax", "S.max")[0]]
    assert mutation.before == "S.max(axis=-1, keepdims=True)"
    assert mutation.describe() == "over axis 0 instead of axis -1: S.max(axis=0, keepdims=True) (in softmax)"
    assert mutation.line == 6


def test_a_function_with_a_while_loop_is_left_alone() -> None:
    assert mutations("def f(n):\n    while n > 0:\n        n -= 1\n    return n\n") == []


def test_the_reference_itself_is_untouched() -> None:
    FOUND.mutant(by_words("over axis 0 instead of axis -1", "softmax"))
    assert _close(run((), "softmax", Q), _softmax(Q))


# --------------------------------------------------------------------------------------------- helpers
def _softmax(S: np.ndarray, sum_axis: int = -1) -> np.ndarray:
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=sum_axis, keepdims=True)


def _attend(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float = 2.0) -> tuple:  # type: ignore[type-arg]
    A = _softmax(Q @ K.T / scale)
    return A @ V, A


def _reference(function: str, *args: object) -> object:
    namespace: dict[str, object] = {}
    exec(REFERENCE, namespace)
    return namespace[function](*args)  # type: ignore[operator]


def _close(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    try:
        return np.shape(a) == np.shape(b) and bool(np.allclose(np.asarray(a, float), np.asarray(b, float)))
    except (TypeError, ValueError):
        return False


def test_a_term_moved_out_of_a_call() -> None:
    key = by_words("with 1e-05 outside sqrt(…)", "norm")
    mu, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True)
    assert _close(run(key, "norm", X, 1.0, 0.0), (X - mu) / (np.sqrt(var) + 1e-5))
    assert ALL[key[0]].after == "np.sqrt(X.var(axis=-1, keepdims=True)) + 1e-05"
    inside = Mutants("import numpy as np\n\n\ndef f(v):\n    return np.sqrt(v) + 1\n")
    moved = next(k for k in inside.singles("f") if inside.change(k[0]).words == "with 1 inside sqrt(…)")
    assert inside.mutant(moved).call("f", (8.0,)) == 3.0


def test_a_comparison_negated_and_an_own_function_dropped() -> None:
    negated = by_words("with the opposite comparison", "sees")
    assert ALL[negated[0]].after == "j > i"
    assert _close(run(negated, "sees", 4), ~np.tril(np.ones((4, 4), dtype=bool)))
    dropped = by_words("without softmax(…)", "attend")
    scores = Q @ K.T / 2.0
    assert _close(run(dropped, "attend", Q, K, V)[1], scores)  # type: ignore[index]


def test_a_check_left_out_or_raising_another_class() -> None:
    unchecked = by_words("without the input check that raises", "checked")
    with pytest.raises(ValueError, match="matmul"):  # NumPy's own error, not the check's
        run(unchecked, "checked", Q, RNG.normal(size=(5, 3)))
    other = by_words("raising TypeError instead of ValueError", "checked")
    with pytest.raises(TypeError, match="as many columns"):
        run(other, "checked", Q, RNG.normal(size=(5, 3)))
    assert _close(run(other, "checked", Q, K), Q @ K.T)


LONG_LINE = """import numpy as np


def mlp(X, p):
    return np.concatenate([X @ p["W1"] + p["b1"], np.tanh(X @ p["W1"] + p["b1"]) * p["b1"], X @ p["W2"]])
"""


def test_a_change_beyond_the_first_70_characters_of_a_long_line_is_quoted_around_it() -> None:
    # The smallest expression around p["W2"] is the list, longer than 70 characters, and the key stands
    # near its end: the quotes are cut around the change (an ellipsis where cut), so the reference's and
    # the mutant's read differently and the mutation is kept (cut at the 70th character both read alike).
    found = [m for m in mutations(LONG_LINE) if m.words == "with W1 where W2 belongs"]
    assert len(found) == 1, [m.words for m in mutations(LONG_LINE)]
    before, after = found[0].before, found[0].after
    assert len(before) <= 70 and len(after) <= 70
    assert before.startswith("…") and after.startswith("…")
    assert before.endswith("X @ p['W2']]") and after.endswith("X @ p['W1']]")
    assert before.replace("p['W2']", "p['W1']") == after


@pytest.mark.parametrize("limit", [5, 12, 30, 70])
def test_quotes_of_a_long_expression_differ_where_it_differs_and_keep_to_the_limit(limit: int) -> None:
    head = "np.maximum(0.0, X @ p['W1'] + p['b1']) @ "
    before, after = quoted(head * 3 + "p['W2'] + p['b2']", head * 3 + "p['W1'] + p['b2']", limit)
    assert before != after
    assert len(before) <= limit and len(after) <= limit
    assert before.startswith("…") and after.startswith("…")
    if limit >= 30:
        assert before.endswith("p['W2'] + p['b2']") and after.endswith("p['W1'] + p['b2']")


def test_quotes_that_fit_are_whole_and_a_limit_below_three_is_refused() -> None:
    assert quoted("X @ W", "X @ W.T", 70) == ("X @ W", "X @ W.T")
    assert quoted("x" * 80, "y", 10) == ("x" * 9 + "…", "y")
    with pytest.raises(ValueError, match="got 2"):
        quoted("abcd", "abce", 2)


def test_the_same_change_in_several_places_of_one_expression_is_said_once() -> None:
    found = Mutants("def f(X, A, B, C):\n    return X @ A, X @ B, X @ C\n")
    keys = [k for k in found.singles("f") if found.change(k[0]).words == "the right operand of @ transposed"]
    assert len(keys) == 3
    described = found.mutant(tuple(k[0] for k in keys)).describe()
    assert described == "the right operand of @ transposed, 3 times: (X @ A.T, X @ B.T, X @ C.T) (in f)"
    other = [k for k in found.singles("f") if found.change(k[0]).words == "with the two operands swapped"]
    assert found.mutant((keys[0][0], other[0][0])).describe().count(" (in f)") == 2


def test_changes_that_touch_the_same_characters_are_not_combined() -> None:
    assert combined("(a, b)", ["(a.T, b)", "(a, b.T)"]) == "(a.T, b.T)"
    assert combined("a + b", ["a - b", "a * b"]) is None
    assert combined("f(x)", ["f(x).T", "f(x).sum()"]) is None  # two insertions at one place


def test_a_check_made_stricter_compares_a_third_array() -> None:
    key = by_words("with V compared too", "matched")
    assert ALL[key[0]].operator == "strict"
    assert ALL[key[0]].after == "Q.shape[1] != K.shape[1] or Q.shape[1] != V.shape[1]"
    assert _close(
        run(key, "matched", Q, K, V[:, :1].repeat(4, axis=1)),
        run((), "matched", Q, K, V[:, :1].repeat(4, axis=1)),
    )
    with pytest.raises(ValueError):
        run(
            key, "matched", Q, K, V
        )  # V has 2 columns where Q has 4: the reference computes, the mutant raises
