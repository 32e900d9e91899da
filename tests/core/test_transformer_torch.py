"""Multi-head attention and the pre-norm block against PyTorch's own layers with the same weights."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from qkv import BLOCK_PARAMS, gelu, layer_norm, multi_head_attention, split_heads, transformer_block

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch==2.13.0)")
F = torch.nn.functional
RNG = np.random.default_rng(4242)


def random(*shape: int, dtype=np.float64) -> np.ndarray:  # type: ignore[no-untyped-def]
    return RNG.normal(size=shape).astype(dtype)


def t(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array))


def torch_mha(X, Wq, Wk, Wv, Wo, h, causal):  # type: ignore[no-untyped-def]
    d = X.shape[-1]
    layer = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=t(X).dtype)
    with torch.no_grad():
        layer.in_proj_weight.copy_(t(np.concatenate([Wq.T, Wk.T, Wv.T])))
        layer.out_proj.weight.copy_(t(Wo.T))
        n = X.shape[-2]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1) if causal else None  # True = hidden
        batch = t(X if X.ndim == 3 else X[None])
        out, _ = layer(batch, batch, batch, attn_mask=mask, need_weights=False)
    return out.numpy() if X.ndim == 3 else out.numpy()[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    ("batch", "n", "d", "h"), [((), 1, 4, 1), ((), 5, 8, 2), ((3,), 7, 12, 3), ((2,), 6, 16, 4)]
)
@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention_is_torchs(dtype, batch, n: int, d: int, h: int, causal: bool) -> None:  # type: ignore[no-untyped-def]
    X = random(*batch, n, d, dtype=dtype)
    Wq, Wk, Wv, Wo = ((random(d, d) / np.sqrt(d)).astype(dtype) for _ in range(4))
    ours = multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=causal)
    assert ours.dtype == dtype and ours.shape == (*batch, n, d)
    tolerance = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(ours, torch_mha(X, Wq, Wk, Wv, Wo, h, causal), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layer_norm_is_torchs(dtype) -> None:  # type: ignore[no-untyped-def]
    X, gamma, beta = random(2, 5, 6, dtype=dtype) * 3 + 1, random(6, dtype=dtype), random(6, dtype=dtype)
    ours = layer_norm(X, gamma, beta, eps=1e-3)
    theirs = F.layer_norm(t(X), (6,), t(gamma), t(beta), eps=1e-3).numpy()
    assert ours.dtype == dtype
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("exact", [False, True])
def test_gelu_is_torchs_in_both_forms(exact: bool) -> None:
    x = np.concatenate([np.linspace(-8, 8, 161), random(50) * 3])
    theirs = F.gelu(t(x), approximate="none" if exact else "tanh").numpy()
    np.testing.assert_allclose(gelu(x, exact=exact), theirs, rtol=1e-12, atol=1e-15)
    assert gelu(x.astype(np.float32), exact=exact).dtype == np.float32


def block_params(d: int, d_ff: int, dtype=np.float64) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    shapes = {
        "ln1_g": (d,), "ln1_b": (d,), "ln2_g": (d,), "ln2_b": (d,),
        "Wq": (d, d), "Wk": (d, d), "Wv": (d, d), "Wo": (d, d),
        "W1": (d, d_ff), "b1": (d_ff,), "W2": (d_ff, d), "b2": (d,),
    }  # fmt: skip
    params = {name: random(*shape) / np.sqrt(shape[0]) for name, shape in shapes.items()}
    params["ln1_g"] += 1
    params["ln2_g"] += 1
    return {name: value.astype(dtype) for name, value in params.items()}


def torch_block(X, p, h, causal):  # type: ignore[no-untyped-def]
    d, d_ff = p["W1"].shape
    layer = torch.nn.TransformerEncoderLayer(
        d, h, d_ff, dropout=0.0, activation=functools.partial(F.gelu, approximate="tanh"),
        batch_first=True, norm_first=True, dtype=t(X).dtype,
    )  # fmt: skip
    layer.eval()
    with torch.no_grad():
        attn = layer.self_attn
        attn.in_proj_weight.copy_(t(np.concatenate([p["Wq"].T, p["Wk"].T, p["Wv"].T])))
        attn.in_proj_bias.zero_()
        attn.out_proj.weight.copy_(t(p["Wo"].T))
        attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(t(p["W1"].T))
        layer.linear1.bias.copy_(t(p["b1"]))
        layer.linear2.weight.copy_(t(p["W2"].T))
        layer.linear2.bias.copy_(t(p["b2"]))
        for norm, g, b in ((layer.norm1, "ln1_g", "ln1_b"), (layer.norm2, "ln2_g", "ln2_b")):
            norm.weight.copy_(t(p[g]))
            norm.bias.copy_(t(p[b]))
        n = X.shape[-2]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=t(X).dtype) if causal else None
        return layer(t(X), src_mask=mask, is_causal=causal).numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("causal", [True, False])
def test_transformer_block_is_torchs_pre_norm_encoder_layer(dtype, causal: bool) -> None:  # type: ignore[no-untyped-def]
    X, p = random(3, 6, 8, dtype=dtype), block_params(8, 16, dtype)
    ours = transformer_block(X, p, 2, causal=causal)
    assert ours.dtype == dtype and ours.shape == X.shape
    tolerance = 1e-10 if dtype == np.float64 else 5e-5
    np.testing.assert_allclose(ours, torch_block(X, p, 2, causal), rtol=tolerance, atol=tolerance)


def test_the_block_without_a_batch_equals_one_row_of_the_batch() -> None:
    X, p = random(2, 5, 8), block_params(8, 12)
    np.testing.assert_allclose(transformer_block(X[1], p, 4), transformer_block(X, p, 4)[1], rtol=1e-12)


def test_split_heads_takes_each_heads_columns() -> None:
    X = random(2, 3, 6)
    heads = split_heads(X, 3)
    assert heads.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(heads[1, 2], X[1, :, 4:6])


def test_params_keys_are_the_chapters() -> None:
    assert BLOCK_PARAMS == (
        "ln1_g",
        "ln1_b",
        "Wq",
        "Wk",
        "Wv",
        "Wo",
        "ln2_g",
        "ln2_b",
        "W1",
        "b1",
        "W2",
        "b2",
    )
