"""qkv.attention against PyTorch's scaled_dot_product_attention, the reference implementation."""

from __future__ import annotations

import numpy as np
import pytest

from qkv import attention

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch==2.13.0)")
sdpa = torch.nn.functional.scaled_dot_product_attention

RNG = np.random.default_rng(2026)


def reference(Q, K, V, **kwargs):  # type: ignore[no-untyped-def]
    as_tensor = {
        name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in (("q", Q), ("k", K), ("v", V))
    }
    if isinstance(kwargs.get("attn_mask"), np.ndarray):
        kwargs["attn_mask"] = torch.from_numpy(kwargs["attn_mask"])
    return sdpa(as_tensor["q"], as_tensor["k"], as_tensor["v"], **kwargs).numpy()


def random(*shape: int, dtype=np.float64) -> np.ndarray:  # type: ignore[no-untyped-def]
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    ("n_q", "n_k", "d_k", "d_v"), [(1, 1, 1, 1), (3, 5, 4, 2), (8, 8, 16, 16), (7, 33, 8, 5)]
)
def test_plain(dtype, n_q: int, n_k: int, d_k: int, d_v: int) -> None:  # type: ignore[no-untyped-def]
    Q, K, V = random(n_q, d_k, dtype=dtype), random(n_k, d_k, dtype=dtype), random(n_k, d_v, dtype=dtype)
    tolerance = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(attention(Q, K, V), reference(Q, K, V), rtol=tolerance, atol=tolerance)


def test_scale() -> None:
    Q, K, V = random(4, 6), random(5, 6), random(5, 3)
    np.testing.assert_allclose(attention(Q, K, V, scale=0.3), reference(Q, K, V, scale=0.3), rtol=1e-12)


@pytest.mark.parametrize(("n_q", "n_k"), [(4, 4), (3, 6), (6, 3)])
def test_causal_top_left(n_q: int, n_k: int) -> None:
    Q, K, V = random(n_q, 8), random(n_k, 8), random(n_k, 4)
    ours = attention(Q, K, V, causal=True)
    np.testing.assert_allclose(ours, reference(Q, K, V, is_causal=True), rtol=1e-12, atol=1e-15)


def test_bool_mask_and_float_mask() -> None:
    Q, K, V = random(2, 5, 4), random(2, 6, 4), random(2, 6, 3)
    allowed = RNG.random((2, 5, 6)) < 0.5
    allowed[..., 0] = True
    np.testing.assert_allclose(
        attention(Q, K, V, mask=allowed), reference(Q, K, V, attn_mask=allowed), rtol=1e-12, atol=1e-15
    )
    bias = np.where(allowed, RNG.normal(size=allowed.shape), -np.inf)
    np.testing.assert_allclose(attention(Q, K, V, mask=bias), reference(Q, K, V, attn_mask=bias), rtol=1e-12)


def test_batches_broadcast_like_torch() -> None:
    Q, K, V = random(2, 3, 4, 8), random(2, 3, 5, 8), random(2, 3, 5, 6)
    np.testing.assert_allclose(attention(Q, K, V), reference(Q, K, V), rtol=1e-12)


def test_fully_masked_rows_are_zero_like_torch() -> None:
    Q, K, V = random(3, 4), random(5, 4), random(5, 2)
    allowed = np.ones((3, 5), dtype=bool)
    allowed[1] = False
    ours = attention(Q, K, V, mask=allowed)
    theirs = reference(Q, K, V, attn_mask=allowed)
    np.testing.assert_array_equal(ours[1], [0.0, 0.0])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)
