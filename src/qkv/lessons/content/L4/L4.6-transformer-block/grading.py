"""The hidden tests of L4.6's code exercise, with expected values from the qkv library.

The reference is what the chapter teaches and the library holds: ``qkv.layer_norm``, ``qkv.gelu`` and
``qkv.transformer_block`` (tested against PyTorch's ``torch.nn.TransformerEncoderLayer`` with norm_first, a
tanh GELU and zero attention biases); the mistakes below are built from the same parts. Each hint names a
mistake learners make; the grader shows it when the failed result is what that mistake computes for the
same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from chapter import (
    CAUSAL_NOT_PASSED,
    EPS_HARD_CODED,
    EPS_OUTSIDE,
    EXACT_GELU,
    GELU_NO_CUBE,
    GELU_SIGMOID,
    GELU_SQUARE,
    POST_NORM,
    RESIDUAL_FROM_NORMED,
    SAME_NORM,
    SECOND_RESIDUAL_FROM_X,
    UNBIASED_VARIANCE,
    X_IN_PLACE,
    X_TWICE,
    Array,
    gelu_with,
    layer_norm_with,
    random_decimals,
)

from qkv import BLOCK_PARAMS, gelu, layer_norm, multi_head_attention, transformer_block
from qkv.grading import (
    Close,
    Mistake,
    Mutated,
    Suite,
    TestCase,
    by_keyword,
    called_again,
    in_dtype,
    missing_function_hint,
)

FUNCTIONS = ("layer_norm", "gelu", "transformer_block")
PARAM_KEYS = BLOCK_PARAMS

# ------------------------------------------------------------------------------------------ reference


def _mha(X: Array, p: dict[str, Any], h: int, causal: bool) -> Array:
    return multi_head_attention(X, p["Wq"], p["Wk"], p["Wv"], p["Wo"], h, bool(causal))  # (n, d)


def _mlp(X: Array, p: dict[str, Any], act: Callable[[Any], Array] = gelu) -> Array:
    hidden = act(X @ np.asarray(p["W1"]) + np.asarray(p["b1"]))  # (n, d_ff)
    return hidden @ np.asarray(p["W2"]) + np.asarray(p["b2"])  # (n, d)


# ---------------------------------------------------------------------------------------------- hints
MISSING_FUNCTION = missing_function_hint(FUNCTIONS)
WRONG_AXIS = (
    "You normalised over the tokens (axis 0). Layer norm works on each token by itself: take the mean and "
    "the variance over the last axis, the d_model features of one row."
)
EPS_IGNORED = "eps is missing: divide by √(var + eps), so that a constant row does not divide by zero."
NO_GAMMA_BETA = "Scale by gamma and shift by beta after normalising: the output is x̂·gamma + beta."
RESIDUAL_MISSING = (
    "A residual connection is missing: each sub-layer adds its result to its own input, H = X + MHA(LN1(X)) "
    "and then H + MLP(LN2(H)), so the residual stream carries X through the block."
)

# -------------------------------------------------------------------------------- mistakes, computed


_ln = layer_norm_with
_exact_gelu = gelu_with("exact")


def _block(
    norm: Callable[..., Array] = layer_norm,
    act: Callable[[Any], Array] = gelu,
    residual: tuple[bool, bool] = (True, True),
    post_norm: bool = False,
    causal: bool | None = None,
    same_norm: bool = False,
    residual_from: str = "x",
    second_from: str = "h",
) -> Callable[..., Array]:
    def compute(X: Any, p: dict[str, Any], h: int, wanted: bool = True) -> Array:
        X = np.asarray(X, dtype=float)
        masked = bool(wanted) if causal is None else causal
        g2, b2 = (p["ln1_g"], p["ln1_b"]) if same_norm else (p["ln2_g"], p["ln2_b"])
        if post_norm:
            X = norm(X + _mha(X, p, h, masked), p["ln1_g"], p["ln1_b"])
            return norm(X + _mlp(X, p, act), g2, b2)
        normed = norm(X, p["ln1_g"], p["ln1_b"])
        attended = _mha(normed, p, h, masked)
        base = X if residual_from == "x" else normed
        H = base + attended if residual[0] else attended
        normed2 = norm(H, g2, b2)
        fed = _mlp(normed2, p, act)
        if not residual[1]:
            return fed
        if residual_from == "normed":  # both residuals start from the normed input
            return normed2 + fed
        return {"h": H, "x": X, "twice": H + X}[second_from] + fed

    return compute


GELU_FORMS = [
    (EXACT_GELU, "exact"),
    (GELU_SQUARE, "square"),
    (GELU_SIGMOID, "sigmoid"),
    (GELU_NO_CUBE, "no_cube"),
]
LN_HINTS = [
    Mutated(X_IN_PLACE, argument=0),
    Mistake(EPS_HARD_CODED, _ln(eps_fixed=1e-5)),
    Mistake(WRONG_AXIS, _ln(axis=0)),
    Mistake(UNBIASED_VARIANCE, _ln(ddof=1)),
    Mistake(EPS_OUTSIDE, _ln(eps_place="outside")),
    Mistake(EPS_IGNORED, _ln(eps_place="none")),
    Mistake(NO_GAMMA_BETA, _ln(affine=False)),
]
GELU_HINTS = [Mistake(message, gelu_with(form)) for message, form in GELU_FORMS]
BLOCK_HINTS = [
    Mistake(RESIDUAL_MISSING, _block(residual=(False, True))),
    Mistake(RESIDUAL_MISSING, _block(residual=(True, False))),
    Mistake(RESIDUAL_MISSING, _block(residual=(False, False))),
    Mistake(POST_NORM, _block(post_norm=True)),
    Mistake(WRONG_AXIS, _block(norm=_ln(axis=0))),
    Mistake(UNBIASED_VARIANCE, _block(norm=_ln(ddof=1))),
    Mistake(EPS_OUTSIDE, _block(norm=_ln(eps_place="outside"))),
    *[Mistake(message, _block(act=gelu_with(form))) for message, form in GELU_FORMS],
    Mistake(RESIDUAL_FROM_NORMED, _block(residual_from="normed")),
    Mistake(RESIDUAL_FROM_NORMED, _block(residual_from="first_normed")),
    Mistake(X_TWICE, _block(second_from="twice")),
    Mistake(SECOND_RESIDUAL_FROM_X, _block(second_from="x")),
    Mistake(CAUSAL_NOT_PASSED, _block(causal=False)),
    Mistake(CAUSAL_NOT_PASSED, _block(causal=True)),
    Mistake(SAME_NORM, _block(same_norm=True)),
]

# ------------------------------------------------------------------------------------ input generators


def _rows(n: int, d: int, scale: float = 1.0, eps: float | None = None) -> Callable[..., tuple[Any, ...]]:
    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        X = random_decimals(rng, n, d, spread=1.5) * scale
        gamma, beta = _gains(rng, d), random_decimals(rng, d, spread=0.5)
        return (X, gamma, beta) if eps is None else (X, gamma, beta, eps)

    return draw


def _offset_rows(n: int, d: int) -> Callable[..., tuple[Any, ...]]:
    """Rows whose mean is near 1e8 (±), spread about 1: the variance as mean(X²) − mean(X)² loses every
    digit there, while the mean of the squared deviations keeps them."""

    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        X, gamma, beta = _rows(n, d)(rng)
        offsets = np.where(np.arange(n) % 2 == 0, 1e8, -1e8)[:, None]  # (n, 1)
        return X + offsets, gamma, beta

    return draw


def _gains(rng: np.random.Generator, d: int) -> Array:
    """Layer-norm gains near 1, rounded again after adding 1 so that a failing call shows 0.82, not
    0.8200000000000001."""
    return np.round(1 + random_decimals(rng, d, spread=0.5), 2)


def _params(rng: np.random.Generator, d: int, d_ff: int) -> dict[str, Array]:
    return {
        "ln1_g": _gains(rng, d),
        "ln1_b": random_decimals(rng, d, spread=0.5),
        "Wq": random_decimals(rng, d, d, spread=0.8),
        "Wk": random_decimals(rng, d, d, spread=0.8),
        "Wv": random_decimals(rng, d, d, spread=0.8),
        "Wo": random_decimals(rng, d, d, spread=0.8),
        "ln2_g": _gains(rng, d),
        "ln2_b": random_decimals(rng, d, spread=0.5),
        "W1": random_decimals(rng, d, d_ff, spread=0.8),
        "b1": random_decimals(rng, d_ff, spread=0.5),
        "W2": random_decimals(rng, d_ff, d, spread=0.8),
        "b2": random_decimals(rng, d, spread=0.5),
    }


def _block_args(n: int, d: int, h: int, causal: bool | None = None) -> Callable[..., tuple[Any, ...]]:
    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        args = (random_decimals(rng, n, d, spread=1.5) * 2, _params(rng, d, 4 * d), h)
        return args if causal is None else (*args, causal)

    return draw


def _ln_case(name: str, args: Any) -> TestCase:
    return TestCase(name, "layer_norm", args, layer_norm, Close(rtol=1e-6, atol=1e-7), LN_HINTS)


def _block_case(name: str, args: Any) -> TestCase:
    return TestCase(
        name, "transformer_block", args, transformer_block, Close(rtol=1e-6, atol=1e-6), BLOCK_HINTS
    )


# --------------------------------------------------------------------------------------------- the suite
functions = Suite(
    FUNCTIONS,
    [
        _ln_case("layer_norm of 3 tokens with 4 features", _rows(3, 4)),
        _ln_case("layer_norm of 5 tokens with 6 features", _rows(5, 6)),
        _ln_case("layer_norm of one token", _rows(1, 5)),
        _ln_case("layer_norm with eps = 0.5 given", _rows(3, 4, eps=0.5)),
        _ln_case("layer_norm of rows with a tiny variance (eps matters)", _rows(4, 4, scale=0.003)),
        _ln_case("layer_norm of rows with a large offset (mean near ±1e8)", _offset_rows(3, 5)),
        by_keyword(_ln_case("layer_norm with eps = 0.5 given", _rows(3, 4, eps=0.5)), "eps"),
        by_keyword(_ln_case("layer_norm of 5 tokens with 6 features", _rows(5, 6)), "gamma", "beta"),
        in_dtype(_ln_case("layer_norm of 5 tokens with 6 features", _rows(5, 6)), "float32"),
        TestCase(
            "gelu of a vector",
            "gelu",
            lambda rng: (np.round(rng.uniform(-3, 3, size=7), 2),),
            gelu,
            Close(rtol=1e-7, atol=1e-9),
            GELU_HINTS,
        ),
        in_dtype(
            TestCase(
                "gelu of a vector",
                "gelu",
                lambda rng: (np.round(rng.uniform(-3, 3, size=7), 2),),
                gelu,
                Close(rtol=1e-7, atol=1e-9),
                GELU_HINTS,
            ),
            "float32",
        ),
        TestCase(
            "gelu of a matrix",
            "gelu",
            lambda rng: (np.round(rng.uniform(-3, 3, size=(3, 4)), 2),),
            gelu,
            Close(rtol=1e-7, atol=1e-9),
            GELU_HINTS,
        ),
        _block_case(
            "transformer_block, 4 tokens, d_model = 4, 2 heads (causal by default)", _block_args(4, 4, 2)
        ),
        _block_case(
            "transformer_block, 5 tokens, d_model = 6, 3 heads, causal=True", _block_args(5, 6, 3, True)
        ),
        _block_case(
            "transformer_block, 3 tokens, d_model = 8, 2 heads, causal=False", _block_args(3, 8, 2, False)
        ),
        *called_again(
            _block_case(
                "transformer_block, 5 tokens, d_model = 6, 3 heads, causal=True", _block_args(5, 6, 3, True)
            )
        ),
        _block_case("transformer_block, one token, d_model = 4, 1 head", _block_args(1, 4, 1)),
        # The twins share the shapes of the test called again above (state kept by shapes shows on a repeat).
        by_keyword(
            _block_case(
                "transformer_block, 5 tokens, d_model = 6, 3 heads, causal=True", _block_args(5, 6, 3, True)
            ),
            "causal",
        ),
        by_keyword(
            _block_case(
                "transformer_block, 5 tokens, d_model = 6, 3 heads, causal=True", _block_args(5, 6, 3, True)
            ),
            "h",
            "causal",
        ),
        in_dtype(
            _block_case(
                "transformer_block, 5 tokens, d_model = 6, 3 heads, causal=True", _block_args(5, 6, 3, True)
            ),
            "float32",
        ),
    ],
)

SUITES = {"functions": functions}
