"""L4.2's reference solutions (what its hidden tests expect) against PyTorch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from qkv.lessons import load_catalog
from tests.lesson_contract import grading_module

torch = pytest.importorskip("torch")
F = torch.nn.functional

LESSON = load_catalog().lesson("L4.2")
GRADING = grading_module(LESSON)
REFERENCE = GRADING.REFERENCE


@pytest.mark.parametrize(("n_q", "n_k", "d_k"), [(1, 2, 2), (2, 2, 2), (3, 5, 4), (4, 7, 16), (6, 3, 64)])
def test_scores_match_torch(n_q: int, n_k: int, d_k: int) -> None:
    rng = np.random.default_rng([n_q, n_k, d_k])
    Q, K = rng.standard_normal((n_q, d_k)), rng.standard_normal((n_k, d_k))
    q, k = torch.from_numpy(Q), torch.from_numpy(K)
    raw = REFERENCE["dot_scores"](Q, K)
    assert raw.shape == (n_q, n_k)
    np.testing.assert_allclose(raw, (q @ k.T).numpy(), rtol=1e-12, atol=1e-12)
    scaled = REFERENCE["scaled_scores"](Q, K)
    # scaled_dot_product_attention with V = I returns softmax(Q Kᵀ / √d_k) itself: the scores' softmax.
    weights = F.scaled_dot_product_attention(q, k, torch.eye(n_k, dtype=torch.float64))
    np.testing.assert_allclose(
        torch.softmax(torch.from_numpy(scaled), dim=-1).numpy(), weights.numpy(), atol=1e-12
    )
    # ... and with an explicit scale of 1 the raw scores' softmax.
    unscaled = F.scaled_dot_product_attention(q, k, torch.eye(n_k, dtype=torch.float64), scale=1.0)
    np.testing.assert_allclose(
        torch.softmax(torch.from_numpy(raw), dim=-1).numpy(), unscaled.numpy(), atol=1e-12
    )


def test_the_worked_example_matches_torch() -> None:
    Q, K = np.array([[1.0, 0.0], [0.0, 2.0]]), np.eye(2)
    expected = (
        torch.from_numpy(Q) @ torch.from_numpy(K).T / torch.sqrt(torch.tensor(2.0, dtype=torch.float64))
    )
    np.testing.assert_allclose(REFERENCE["scaled_scores"](Q, K), expected.numpy(), atol=1e-12)
    np.testing.assert_allclose(REFERENCE["scaled_scores"](Q, K), [[0.707107, 0], [0, 1.414214]], atol=1e-6)


@pytest.mark.parametrize("d_k", [4, 16, 64, 256])
def test_score_spread_is_the_measured_standard_deviation(d_k: int) -> None:
    generator = torch.Generator().manual_seed(d_k)
    q = torch.randn(20_000, d_k, generator=generator, dtype=torch.float64)
    k = torch.randn(20_000, d_k, generator=generator, dtype=torch.float64)
    measured = float((q * k).sum(dim=-1).std())
    assert abs(measured / REFERENCE["score_spread"](d_k) - 1) < 0.03


def test_the_mismatch_raises_like_torch() -> None:
    Q, K = np.ones((2, 3)), np.ones((2, 4))
    with pytest.raises(RuntimeError):
        torch.from_numpy(Q) @ torch.from_numpy(K).T
    for name in ("dot_scores", "scaled_scores"):
        with pytest.raises(ValueError, match=r"3.*4|4.*3"):
            REFERENCE[name](Q, K)
