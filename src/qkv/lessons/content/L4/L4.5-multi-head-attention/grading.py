"""The hidden tests of L4.5's code exercise, with expected values from the qkv library.

The reference is what the chapter teaches and the library holds: ``qkv.split_heads``, ``qkv.merge_heads``
and ``qkv.multi_head_attention`` (tested against PyTorch's ``torch.nn.MultiheadAttention`` with the same
weights); only the parameter count is the lesson's own. Each hint names a mistake learners make; the
grader shows it when the failed result is what that mistake computes for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from chapter import (
    AFTER_SOFTMAX,
    BY_COLUMNS,
    BY_DK,
    NO_KEEPDIMS,
    NOT_SCALED,
    RENORMALISED,
    SCORES_TRANSPOSED,
    TRIU,
    WEIGHTS_TRANSPOSED,
    Array,
    Crashed,
    attention_with,
    either,
    random_decimals,
    renormalised_underflow,
    type_error_hint,
)
from chapter import (
    SOFTMAX_AXIS as CHAPTER_SOFTMAX_AXIS,
)

from qkv import attention, merge_heads, multi_head_attention, split_heads
from qkv.grading import (
    Close,
    Mistake,
    Raised,
    Raises,
    Returned,
    Suite,
    TestCase,
    Whole,
    by_keyword,
    called_again,
    check_raises,
    in_dtype,
    missing_function_hint,
)

FUNCTIONS = ("split_heads", "merge_heads", "multi_head_attention", "mha_param_count")
# ------------------------------------------------------------------------------------------ reference


def mha_param_count(d_model: int) -> int:
    """The weights of a multi-head layer without biases: Wq, Wk, Wv and Wo, each d_model × d_model.

    Examples
    --------
    >>> mha_param_count(512)
    1048576
    """
    return 4 * d_model * d_model


# ---------------------------------------------------------------------------------------------- hints
MISSING_FUNCTION = missing_function_hint(FUNCTIONS)
SPLIT_WITHOUT_TRANSPOSE = (
    "Your heads mix tokens: X.reshape(h, n, d_head) cuts X in memory order, so one head gets pieces of "
    "several tokens. Reshape to (n, h, d_head) first, then swap the first two axes to get (h, n, d_head)."
)
SPLIT_AXES_SWAPPED = (
    "That array has the shape (n, h, d_head): the heads must come first. After reshaping to "
    "(n, h, d_head), transpose to (h, n, d_head) with transpose(1, 0, 2)."
)
MERGE_WITHOUT_TRANSPOSE = (
    "Your merge mixes tokens: H.reshape(n, h·d_head) straight from (h, n, d_head) reads the heads in "
    "memory order. Bring the tokens first with transpose(1, 0, 2), then reshape to (n, h·d_head)."
)
MERGE_ORDER = (
    "The heads are merged in the wrong order: row i must hold head 0's d_head numbers for token i, then "
    "head 1's, and so on, so that merge_heads undoes split_heads exactly."
)
SCALED_BY_D_MODEL = (
    "Each head's scores were divided by √d_model. A head compares vectors of d_head = d_model / h "
    "numbers, so its scores are divided by √d_head."
)
WO_FORGOTTEN = (
    "W_O is missing: after merging the heads, multiply by Wo, the learned matrix that mixes what the "
    "heads found back into d_model dimensions."
)
CAUSAL_IGNORED = (
    "With causal=True, token i may attend only to tokens 0 … i: in every head, set the scores above the "
    "diagonal to −∞ before the softmax."
)
CAUSAL_ALWAYS = "causal defaults to False: without it, every token attends to every token, later ones too."
PROJECTED_AFTER_SPLIT = (
    "Project first, then split: Q = X @ Wq uses all d_model columns of X for every head. Splitting X "
    "before projecting lets each head see only its own slice of the input."
)
DIVIDES_CHECK = (
    "Raise ValueError when h does not divide d_model: the heads must all have the same width d_model / h."
)
TYPE_ERROR = type_error_hint()
# The chapter's sentence, and where a stack of heads adds a wrong axis of its own.
SOFTMAX_AXIS = (
    f"{CHAPTER_SOFTMAX_AXIS} In a stack of heads (h, n, n), axis 0 runs across the heads: wrong as well."
)
HEADS_NOT_MERGED = (
    "Your result still has one block per head. Merge the heads back into one (n, d_model) matrix with "
    "merge_heads (the heads side by side), then multiply that by the whole Wo once."
)
COUNT_WITHOUT_WO = "3·d_model² counts Wq, Wk and Wv only: the output matrix W_O adds another d_model²."
COUNT_WITH_BIASES = "This layer has no biases: count only the four d_model × d_model matrices."

# -------------------------------------------------------------------------------- mistakes, computed


def _split_raw(X: Any, h: int) -> Array:
    X = np.asarray(X)
    n, d_model = X.shape
    return X.reshape(h, n, d_model // h)


def _merge_raw(H: Any) -> Array:
    H = np.asarray(H)
    h, n, d_head = H.shape
    return H.reshape(n, h * d_head)


def _merge_interleaved(H: Any) -> Array:
    H = np.asarray(H)
    h, n, d_head = H.shape
    return H.transpose(1, 2, 0).reshape(n, h * d_head)


def _merge_reversed(H: Any) -> Array:
    return merge_heads(np.asarray(H)[::-1])


def _mha(
    split: Callable[[Any, int], Array] = split_heads,
    merge: Callable[[Any], Array] = merge_heads,
    scale: str = "d_head",
    use_wo: bool = True,
    project_after_split: bool = False,
    causal: bool | None = None,
    softmax_axis: int = -1,
    transposed_weights: bool = False,
    head: dict[str, Any] | None = None,
) -> Callable[..., Array]:
    """What multi-head attention computes with one mistake (or several) built in.

    ``transposed_weights`` projects with ``X @ W.T``; ``head`` gives the chapter's ``attention_with`` the
    slips of one head's attention (``masking``, ``keepdims``, and ``mask="triu"`` for the causal mask
    turned the wrong way).
    """

    def compute(X: Any, Wq: Any, Wk: Any, Wv: Any, Wo: Any, h: int, wanted_causal: bool = False) -> Array:
        X = np.asarray(X, dtype=float)
        d_model = X.shape[1]
        d_head = d_model // h
        if project_after_split:
            pieces = split_heads(X, h)  # (h, n, d_head)
            blocks = [slice(i * d_head, (i + 1) * d_head) for i in range(h)]
            Q, K, V = (
                np.stack([pieces[i] @ np.asarray(W, dtype=float)[b, b] for i, b in enumerate(blocks)])
                for W in (Wq, Wk, Wv)
            )  # each (h, n, d_head)
        else:
            weights = [np.asarray(W, dtype=float) for W in (Wq, Wk, Wv)]
            Q, K, V = (split(X @ (W.T if transposed_weights else W), h) for W in weights)
        factor = {
            "d_head": 1 / np.sqrt(d_head),
            "d_model": 1 / np.sqrt(d_model),
            "none": 1.0,
            "d_k": 1 / d_head,
        }[scale]
        masked = bool(wanted_causal) if causal is None else causal
        if head is not None:  # one of the chapter's attention slips, in every head
            n = X.shape[0]
            slips = dict(head)
            triangle = np.triu if slips.pop("mask", "tril") == "triu" else np.tril
            mask = triangle(np.ones((n, n), dtype=bool)) if masked else None
            # head by head, as learners write it: a 2-D slip (no keepdims) stays a 2-D slip
            heads = np.stack(
                [
                    attention_with(q, k, v, mask, scale=factor, **slips)[0]
                    for q, k, v in zip(Q, K, V, strict=True)
                ]
            )  # (h, n, d_head)
        elif softmax_axis == -1:
            heads = attention(Q, K, V, causal=masked, scale=factor)  # (h, n, d_head)
        else:  # the softmax down the columns (-2) or across the heads (0)
            S = Q @ K.transpose(0, 2, 1) * factor  # (h, n, n)
            if masked:
                S = np.where(np.tri(S.shape[1], dtype=bool), S, -np.inf)
            E = np.exp(S - S.max(axis=softmax_axis, keepdims=True))
            heads = (E / E.sum(axis=softmax_axis, keepdims=True)) @ V  # (h, n, d_head)
        merged = merge(heads)  # (n, d_model)
        return merged @ np.asarray(Wo, dtype=float) if use_wo else merged

    return compute


def _renormalised(got: Any, X: Any, Wq: Any, Wk: Any, Wv: Any, Wo: Any, h: int, causal: bool = False) -> bool:
    """Right but for the tokens whose allowed weights underflow, in some head, when the softmax runs over
    every key and is masked and renormalised after: those rows come out NaN (0/0)."""
    try:
        out = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return False
    right = multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=bool(causal))
    if not causal or out.shape != right.shape:
        return False
    n = right.shape[0]
    Q, K = (split_heads(np.asarray(X, dtype=float) @ np.asarray(W, dtype=float), h) for W in (Wq, Wk))
    tril = np.tril(np.ones((n, n), dtype=bool))
    lost = np.any([renormalised_underflow(q, k, tril) for q, k in zip(Q, K, strict=True)], axis=0)  # (n,)
    if not lost.any():
        return False
    return bool(np.isnan(out[lost]).all() and np.allclose(out[~lost], right[~lost], atol=1e-6))


def _per_head(got: Any, X: Any, Wq: Any, Wk: Any, Wv: Any, Wo: Any, h: int, *causal: Any) -> bool:
    """A result of three axes that starts with the heads or the tokens: the heads were never merged."""
    try:
        shape = np.shape(np.asarray(got, dtype=float))
    except (TypeError, ValueError):
        return False
    n = np.shape(X)[0]
    return len(shape) == 3 and shape[:2] in ((h, n), (n, h))


def _both(first: str, second: str) -> str:
    return f"Two mistakes at once. First: {first} Second: {second}"


# The mistakes a program can make together, each with the settings of _mha that build it in. A rule
# recognises a result only when everything else is right, so two mistakes at once would match no single
# rule: each pair gets a rule of its own that names both.
_COMBINABLE: list[tuple[str, dict[str, Any]]] = [
    (WO_FORGOTTEN, {"use_wo": False}),
    (SCALED_BY_D_MODEL, {"scale": "d_model"}),
    (NOT_SCALED, {"scale": "none"}),
    (SOFTMAX_AXIS, {"softmax_axis": -2}),
    (CAUSAL_IGNORED, {"causal": False}),
    (SPLIT_WITHOUT_TRANSPOSE, {"split": _split_raw}),
    (MERGE_WITHOUT_TRANSPOSE, {"merge": _merge_raw}),
]
SCALED_BY_D_MODEL_AND_WO_FORGOTTEN = _both(WO_FORGOTTEN, SCALED_BY_D_MODEL)


def _pairs() -> list[Mistake]:
    """One rule for each two mistakes of _COMBINABLE that can happen together."""
    rules = []
    for i, (first, settings) in enumerate(_COMBINABLE):
        for second, more in _COMBINABLE[i + 1 :]:
            if settings.keys() & more.keys() or {first, second} == {
                SPLIT_WITHOUT_TRANSPOSE,
                MERGE_WITHOUT_TRANSPOSE,
            }:  # one setting twice, or a pair that a single rule above already names
                continue
            rules.append(Mistake(_both(first, second), _mha(**settings, **more)))
    return rules


def _alike(first: Callable[..., Array], second: Callable[..., Array]) -> Callable[..., bool]:
    """Whether the learner's result is what both mistakes give, because on these inputs they agree."""

    def when(got: Any, *args: Any) -> bool:
        try:
            out, a, b = np.asarray(got, dtype=float), first(*args), second(*args)
        except (TypeError, ValueError):
            return False
        return out.shape == a.shape == b.shape and np.allclose(a, b) and np.allclose(out, a)

    return when


# With d_model = 4 and 2 heads (the test of huge future scores), d_head = √d_model; with identity
# projections the scores are symmetric, so the softmax down the columns gives Aᵀ: on such a test a result
# names both mistakes it may be.
D_MODEL_OR_DK = either(SCALED_BY_D_MODEL, BY_DK)
AXIS_OR_WEIGHTS_TRANSPOSED = either(SOFTMAX_AXIS, WEIGHTS_TRANSPOSED)

MHA_HINTS = [
    Returned(D_MODEL_OR_DK, when=_alike(_mha(scale="d_model"), _mha(scale="d_k"))),
    Returned(AXIS_OR_WEIGHTS_TRANSPOSED, when=_alike(_mha(softmax_axis=-2), _mha(head={"output": "ATV"}))),
    Mistake(WO_FORGOTTEN, _mha(use_wo=False)),
    Mistake(SCALED_BY_D_MODEL, _mha(scale="d_model")),
    Mistake(NOT_SCALED, _mha(scale="none")),
    Mistake(BY_DK, _mha(scale="d_k")),
    Mistake(SPLIT_WITHOUT_TRANSPOSE, _mha(split=_split_raw)),
    Mistake(SPLIT_WITHOUT_TRANSPOSE, _mha(split=_split_raw, merge=_merge_raw)),
    Mistake(MERGE_WITHOUT_TRANSPOSE, _mha(merge=_merge_raw)),
    Mistake(MERGE_ORDER, _mha(merge=_merge_interleaved)),
    Mistake(MERGE_ORDER, _mha(merge=_merge_reversed)),
    Mistake(PROJECTED_AFTER_SPLIT, _mha(project_after_split=True)),
    Mistake(CAUSAL_IGNORED, _mha(causal=False)),
    Mistake(TRIU, _mha(head={"mask": "triu"})),
    Mistake(CAUSAL_ALWAYS, _mha(causal=True)),
    Mistake(SOFTMAX_AXIS, _mha(softmax_axis=-2)),
    Mistake(SOFTMAX_AXIS, _mha(softmax_axis=0)),
    Mistake(AFTER_SOFTMAX, _mha(head={"masking": "after"})),
    Returned(RENORMALISED, when=_renormalised),
    Mistake(BY_COLUMNS, _mha(transposed_weights=True)),
    Mistake(SCORES_TRANSPOSED, _mha(head={"scores": "KQ"})),
    Mistake(WEIGHTS_TRANSPOSED, _mha(head={"output": "ATV"})),
    Mistake(NO_KEEPDIMS, _mha(head={"keepdims": False})),
    *_pairs(),
    Crashed(NO_KEEPDIMS, _mha(head={"keepdims": False})),
    Raised(PROJECTED_AFTER_SPLIT, "ValueError", contains="matmul"),
    Returned(HEADS_NOT_MERGED, when=_per_head),
]
SPLIT_HINTS = [
    Mistake(SPLIT_WITHOUT_TRANSPOSE, _split_raw),
    Mistake(SPLIT_AXES_SWAPPED, lambda X, h: np.asarray(X).reshape(len(X), h, -1)),
]
MERGE_HINTS = [
    Mistake(MERGE_WITHOUT_TRANSPOSE, _merge_raw),
    Mistake(MERGE_ORDER, _merge_interleaved),
    Mistake(MERGE_ORDER, _merge_reversed),
]
COUNT_HINTS = [
    Mistake(COUNT_WITHOUT_WO, lambda d_model: 3 * d_model * d_model),
    Mistake(COUNT_WITH_BIASES, lambda d_model: 4 * d_model * d_model + 4 * d_model),
    Mistake(COUNT_WITH_BIASES, lambda d_model: 4 * d_model * (d_model + 1)),
]

# ------------------------------------------------------------------------------------ input generators
SPREAD = 1.5  # entries this small keep the softmax far from one-hot


def _layer(d_model: int, h: int, n: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        X = random_decimals(rng, n, d_model, spread=SPREAD)
        weights = [random_decimals(rng, d_model, d_model, spread=SPREAD) for _ in range(4)]
        return (X, *weights, h)

    return draw


def _causal(d_model: int, h: int, n: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: (*_layer(d_model, h, n)(rng), True)


def _not_causal(d_model: int, h: int, n: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: (*_layer(d_model, h, n)(rng), False)


def _to_split(n: int, d_model: int, h: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: (random_decimals(rng, n, d_model, spread=SPREAD), h)


def _to_merge(h: int, n: int, d_head: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    return lambda rng: (random_decimals(rng, h, n, d_head, spread=SPREAD),)


def _bad_heads(rng: np.random.Generator) -> tuple[Any, ...]:
    n, d_model, h = int(rng.integers(2, 5)), int(rng.choice([6, 9, 10])), 4
    return random_decimals(rng, n, d_model, spread=SPREAD), h


# Two tokens, identity projections and Wo = 2·I: each head attends over its own half of X. d_model = 6,
# so that d_head = 3 is not √d_model: the first test of multi_head_attention tells dividing by √d_model
# from dividing by d_head (with d_model = 4 and 2 heads both give 2, and the hint could only name both).
TWO_TOKENS = (
    np.array([[1.0, 0.0, 1.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]]),
    np.eye(6),
    np.eye(6),
    np.eye(6),
    2 * np.eye(6),
    2,
)


def _huge_future(rng: np.random.Generator) -> tuple[Any, ...]:
    """Causal attention whose future keys score far above the allowed ones (a gap of over a thousand):
    a softmax over every key before masking underflows the allowed weights to 0."""
    n, d_model, h = 4, 4, 2
    # the last token is 10,000 times larger: the earlier queries' scores against it run into the thousands
    X = np.round(rng.uniform(0.5, 1.0, size=(n, d_model)), 2) * np.array([[1], [1], [1], [10_000]])  # (n, d)
    identity = np.eye(d_model)
    return X, identity, identity, identity, random_decimals(rng, d_model, d_model, spread=SPREAD), h, True


def _mha_case(name: str, args: Any) -> TestCase:
    return TestCase(name, "multi_head_attention", args, multi_head_attention, Close(), MHA_HINTS)


# --------------------------------------------------------------------------------------------- the suite
functions = Suite(
    FUNCTIONS,
    [
        TestCase(
            "split_heads of 3 tokens, d_model = 8, into 2 heads",
            "split_heads",
            _to_split(3, 8, 2),
            split_heads,
            Close(),
            SPLIT_HINTS,
        ),
        TestCase(
            "split_heads of 5 tokens, d_model = 6, into 3 heads",
            "split_heads",
            _to_split(5, 6, 3),
            split_heads,
            Close(),
            SPLIT_HINTS,
        ),
        TestCase(
            "split_heads into 1 head keeps X as one head",
            "split_heads",
            _to_split(3, 4, 1),
            split_heads,
            Close(),
            SPLIT_HINTS,
        ),
        in_dtype(
            TestCase(
                "split_heads of 5 tokens, d_model = 6, into 3 heads",
                "split_heads",
                _to_split(5, 6, 3),
                split_heads,
                Close(),
                SPLIT_HINTS,
            ),
            "float32",
        ),
        by_keyword(
            TestCase(
                "split_heads of 3 tokens, d_model = 8, into 2 heads",
                "split_heads",
                _to_split(3, 8, 2),
                split_heads,
                Close(),
                SPLIT_HINTS,
            ),
            "h",
        ),
        TestCase(
            "split_heads raises ValueError when h does not divide d_model",
            "split_heads",
            _bad_heads,
            check_raises(split_heads, Raises("ValueError", "h does not divide d_model")),
            # A ValueError that fails this test is NumPy's own (the reshape): no check ran.
            hints=[
                Returned(DIVIDES_CHECK),
                Raised(DIVIDES_CHECK, "ValueError"),
                Raised(TYPE_ERROR, "TypeError"),
            ],
        ),
        TestCase(
            "merge_heads of 2 heads, 3 tokens, d_head = 4",
            "merge_heads",
            _to_merge(2, 3, 4),
            merge_heads,
            Close(),
            MERGE_HINTS,
        ),
        TestCase(
            "merge_heads of 4 heads, 5 tokens, d_head = 2",
            "merge_heads",
            _to_merge(4, 5, 2),
            merge_heads,
            Close(),
            MERGE_HINTS,
        ),
        TestCase(
            "merge_heads undoes split_heads",
            "merge_heads",
            lambda rng: (split_heads(random_decimals(rng, 3, 6, spread=SPREAD), 3),),
            merge_heads,
            Close(),
            MERGE_HINTS,
        ),
        _mha_case("multi_head_attention of two tokens, identity projections, Wo = 2·I, 2 heads", TWO_TOKENS),
        _mha_case("multi_head_attention with 3 tokens, d_model = 8, 2 heads", _layer(8, 2, 3)),
        _mha_case("multi_head_attention with 5 tokens, d_model = 6, 3 heads", _layer(6, 3, 5)),
        *called_again(_mha_case("multi_head_attention with 5 tokens, d_model = 6, 3 heads", _layer(6, 3, 5))),
        _mha_case("multi_head_attention with 3 tokens, d_model = 8, 4 heads", _layer(8, 4, 3)),
        _mha_case("multi_head_attention of one token (n = 1), d_model = 6, 2 heads", _layer(6, 2, 1)),
        _mha_case("multi_head_attention with causal=False given", _not_causal(6, 2, 4)),
        _mha_case("multi_head_attention with causal=True, 4 tokens, 2 heads", _causal(8, 2, 4)),
        _mha_case("multi_head_attention with causal=True, 5 tokens, 3 heads", _causal(6, 3, 5)),
        _mha_case("multi_head_attention with causal=True and huge scores on future tokens", _huge_future),
        # causal by name as the signature has it; float32 weights and tokens.
        # The twins share the shapes of the test called again above: a function that keeps state by its
        # inputs' shapes then shows it on a repeat, where the grader can say so.
        by_keyword(
            _mha_case(
                "multi_head_attention with 5 tokens, d_model = 6, 3 heads, causal=False", _not_causal(6, 3, 5)
            ),
            "causal",
        ),
        by_keyword(
            _mha_case(
                "multi_head_attention with 5 tokens, d_model = 6, 3 heads, causal=False", _not_causal(6, 3, 5)
            ),
            "h",
            "causal",
        ),
        in_dtype(
            _mha_case("multi_head_attention with 5 tokens, d_model = 6, 3 heads", _layer(6, 3, 5)), "float32"
        ),
        TestCase(
            "mha_param_count for d_model = 512",
            "mha_param_count",
            (512,),
            mha_param_count,
            Whole(),
            COUNT_HINTS,
        ),
        TestCase(
            "mha_param_count for a random d_model",
            "mha_param_count",
            lambda rng: (int(rng.integers(3, 300)),),
            mha_param_count,
            Whole(),
            COUNT_HINTS,
        ),
        by_keyword(
            TestCase(
                "mha_param_count for a random d_model",
                "mha_param_count",
                lambda rng: (int(rng.integers(3, 300)),),
                mha_param_count,
                Whole(),
                COUNT_HINTS,
            ),
            "d_model",
        ),
    ],
)

SUITES = {"functions": functions}
