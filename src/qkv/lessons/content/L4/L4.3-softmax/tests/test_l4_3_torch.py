"""L4.3's reference solutions (what its hidden tests expect) against PyTorch as the oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from qkv.lessons import load_catalog
from tests.lesson_contract import grading_module

torch = pytest.importorskip("torch")
F = torch.nn.functional

LESSON = load_catalog().lesson("L4.3")
GRADING = grading_module(LESSON)
REFERENCE = GRADING.REFERENCE


@pytest.mark.parametrize("shape", [(2,), (3, 4), (2, 3, 5), (2, 2, 3, 4)])
def test_softmax_matches_torch_for_any_leading_dimensions(shape: tuple[int, ...]) -> None:
    S = np.random.default_rng(len(shape)).normal(scale=3.0, size=shape)
    expected = torch.softmax(torch.from_numpy(S), dim=-1).numpy()
    np.testing.assert_allclose(REFERENCE["softmax"](S), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "S",
    [
        [1000.0, -1000.0],
        [[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 0.0]],
        [[1000.0, 999.0], [-1000.0, -1001.0]],
    ],
)
def test_softmax_of_huge_scores_is_finite_silent_and_matches_torch(S: list[float]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        got = REFERENCE["softmax"](np.array(S))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got.sum(axis=-1), 1.0)
    np.testing.assert_allclose(
        got, torch.softmax(torch.tensor(S, dtype=torch.float64), dim=-1).numpy(), atol=1e-15
    )


@pytest.mark.parametrize(
    ("n_q", "n_k", "d_k", "d_v"), [(1, 2, 2, 2), (3, 5, 4, 2), (4, 3, 8, 6), (2, 7, 64, 3)]
)
def test_weights_and_output_match_scaled_dot_product_attention(
    n_q: int, n_k: int, d_k: int, d_v: int
) -> None:
    rng = np.random.default_rng([n_q, n_k, d_k, d_v])
    Q, K, V = rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))
    q, k, v = (torch.from_numpy(x) for x in (Q, K, V))
    O, A = REFERENCE["attend"](Q, K, V)
    np.testing.assert_allclose(O, F.scaled_dot_product_attention(q, k, v).numpy(), atol=1e-12)
    # With V = I the attention output is the weights themselves.
    weights = F.scaled_dot_product_attention(q, k, torch.eye(n_k, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(A, weights, atol=1e-12)
    np.testing.assert_allclose(REFERENCE["attention_weights"](Q, K), weights, atol=1e-12)


def test_the_worked_example_matches_torch() -> None:
    q, K, V = np.array([[1.0, 0.0]]), np.eye(2), 2 * np.eye(2)
    O, A = REFERENCE["attend"](q, K, V)
    torch_O = F.scaled_dot_product_attention(*(torch.from_numpy(x) for x in (q, K, V))).numpy()
    np.testing.assert_allclose(O, torch_O, atol=1e-12)
    np.testing.assert_allclose(A, [[0.669762, 0.330238]], atol=1e-6)
    np.testing.assert_allclose(O, [[1.339523, 0.660477]], atol=1e-6)


def test_mismatched_sizes_raise_naming_both() -> None:
    with pytest.raises(ValueError, match=r"3.*4|4.*3"):
        REFERENCE["attend"](np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"2.*5|5.*2"):
        REFERENCE["attend"](np.ones((2, 3)), np.ones((2, 3)), np.ones((5, 2)))
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(torch.ones(2, 3), torch.ones(2, 3), torch.ones(5, 2))
