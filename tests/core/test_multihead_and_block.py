"""qkv.multihead and qkv.transformer without an oracle: inverses, dtypes, and the sentences bad input gets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from qkv import (
    BLOCK_PARAMS,
    attention,
    gelu,
    layer_norm,
    merge_heads,
    multi_head_attention,
    split_heads,
    transformer_block,
)

RNG = np.random.default_rng(7)


@given(
    lead=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 5),
    h=st.integers(1, 4),
    d_head=st.integers(1, 4),
)
def test_merge_heads_undoes_split_heads(lead: list[int], n: int, h: int, d_head: int) -> None:
    X = RNG.normal(size=(*lead, n, h * d_head))
    heads = split_heads(X, h)
    assert heads.shape == (*lead, h, n, d_head)
    np.testing.assert_array_equal(merge_heads(heads), X)


def test_one_head_is_plain_attention_mixed_by_wo() -> None:
    X, Wq, Wk, Wv, Wo = (RNG.normal(size=shape) for shape in ((5, 4), (4, 4), (4, 4), (4, 3), (3, 2)))
    expected = attention(X @ Wq, X @ Wk, X @ Wv, causal=True) @ Wo
    np.testing.assert_allclose(multi_head_attention(X, Wq, Wk, Wv, Wo, 1, causal=True), expected, rtol=1e-12)


def test_ints_compute_in_float64_and_float32_stays_float32() -> None:
    I = np.eye(4, dtype=int)
    assert multi_head_attention(I[:2], I, I, I, I, 2).dtype == np.float64
    x32 = np.eye(4, dtype=np.float32)
    assert multi_head_attention(x32, x32, x32, x32, x32, 4).dtype == np.float32
    assert (
        layer_norm(np.ones((2, 3), np.float16), np.ones(3, np.float16), np.zeros(3, np.float16)).dtype
        == np.float16
    )
    assert gelu(np.arange(3)).dtype == np.float64


def test_layer_norm_of_a_constant_row_is_beta_not_nan() -> None:
    np.testing.assert_array_equal(layer_norm([[2.0, 2.0, 2.0]], [1, 1, 1], [0.5, 0, -1]), [[0.5, 0.0, -1.0]])


def test_nothing_changes_the_callers_arrays() -> None:
    X = RNG.normal(size=(3, 4))
    params = {name: RNG.normal(size=(4, 4) if name[0] == "W" else (4,)) for name in BLOCK_PARAMS}
    before = {name: value.copy() for name, value in params.items()}
    X_before = X.copy()
    transformer_block(X, params, 2)
    layer_norm(X, params["ln1_g"], params["ln1_b"])
    gelu(X)
    np.testing.assert_array_equal(X, X_before)
    for name, value in params.items():
        np.testing.assert_array_equal(value, before[name])


@pytest.mark.parametrize(
    ("call", "error", "sentence"),
    [
        (
            lambda: split_heads(np.zeros((3, 6)), 4),
            ValueError,
            "h = 4 does not divide d_model = 6 (X has shape (3, 6))",
        ),
        (
            lambda: split_heads(np.zeros(6), 2),
            ValueError,
            "X must have at least 2 dimensions (..., n, d_model), but it has shape (6,).",
        ),
        (lambda: split_heads(np.zeros((2, 4)), 0), ValueError, "h must be a positive int, but it is 0."),
        (
            lambda: split_heads(np.zeros((2, 4)), 2.0),
            TypeError,
            "h must be a positive int, not the float 2.0.",
        ),
        (
            lambda: merge_heads(np.zeros((2, 4))),
            ValueError,
            "H must have at least 3 dimensions (..., h, n, d_head), but it has shape (2, 4).",
        ),
        (
            lambda: multi_head_attention(np.zeros((2, 4)), np.eye(3), np.eye(4), np.eye(4), np.eye(4), 2),
            ValueError,
            "Wq has 3 rows but X has d_model = 4 columns (X (2, 4), Wq (3, 3)).",
        ),
        (
            lambda: multi_head_attention(np.zeros((2, 4)), np.eye(4), np.eye(4), np.eye(4), np.eye(3), 2),
            ValueError,
            "Wo has 3 rows but the merged heads have d_v = 4 columns (Wv (4, 4), Wo (3, 3)).",
        ),
        (
            lambda: multi_head_attention(np.zeros((2, 4)), *[np.eye(4)] * 4, 2, causal="yes"),
            TypeError,
            "causal must be True or False, not the str 'yes'.",
        ),
        (
            lambda: layer_norm(np.zeros((2, 3)), np.ones(4), np.zeros(3)),
            ValueError,
            "gamma must have shape (3,), one entry per feature of X (2, 3), but it has shape (4,).",
        ),
        (
            lambda: layer_norm(np.zeros((2, 3)), np.ones(3), np.zeros(3), eps=-1e-5),
            ValueError,
            "eps must be a small non-negative number, but it is -1e-05.",
        ),
        (lambda: gelu(np.array([1j])), TypeError, "x must hold real numbers, but its dtype is complex128"),
        (
            lambda: transformer_block(np.zeros((2, 4)), {"Wq": np.eye(4)}, 2),
            ValueError,
            "params lacks ln1_g, ln1_b, Wk, Wv, Wo, ln2_g, ln2_b, W1, b1, W2, b2; a block needs all of",
        ),
        (
            lambda: transformer_block(np.zeros((2, 4)), [1, 2], 2),
            TypeError,
            "params must be a dict of the block's weights, not a list.",
        ),
    ],
)
def test_bad_input_gets_a_sentence_naming_it(call, error: type[Exception], sentence: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as raised:
        call()
    assert sentence in str(raised.value)


def test_a_block_with_a_mismatched_mlp_names_the_matrix() -> None:
    params = {name: np.ones((4, 4)) if name[0] == "W" else np.zeros(4) for name in BLOCK_PARAMS}
    params["W2"] = np.ones((5, 4))
    with pytest.raises(
        ValueError, match=r"W2 must have shape \(4, 4\) \(d = 4, d_ff = 4 from W1\), not \(5, 4\)\."
    ):
        transformer_block(np.zeros((2, 4)), params, 2)
