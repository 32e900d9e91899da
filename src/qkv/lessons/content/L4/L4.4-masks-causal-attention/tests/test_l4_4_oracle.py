"""L4.4's Part 2 against PyTorch: the hidden tests' references and every correct corpus solution.

PyTorch's ``scaled_dot_product_attention`` is the oracle: ``is_causal=True`` for ``causal_mask`` (top-left
aligned), a bool ``attn_mask`` (True = may attend) for ``masked_attention`` and ``padding_mask``. A query
whose keys are all masked has no defined softmax, so the oracle is compared only on rows that keep a key;
those rows are checked against the zero policy the spec asks for.
"""

from __future__ import annotations

import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from qkv.lessons import load_catalog
from tests.lesson_contract import grading_module

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch==2.13.0)")
sdpa = torch.nn.functional.scaled_dot_product_attention

LESSON = load_catalog().lesson("L4.4")
GRADING = grading_module(LESSON)
CORRECT = sorted((Path(__file__).parents[1] / "corpus" / "functions" / "correct").glob("*.py"))
RNG = np.random.default_rng(44)


def _solution(path: Path) -> types.ModuleType:
    module = types.ModuleType(path.stem)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


SOLUTIONS = [pytest.param(GRADING, id="grading-reference")] + [
    pytest.param(_solution(path), id=f"corpus-{path.stem}") for path in CORRECT
]


def oracle(Q: Any, K: Any, V: Any, **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's output, and its weights (the output for V = the identity: A @ I = A)."""
    q, k, v = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64)) for a in (Q, K, V))
    if isinstance(kwargs.get("attn_mask"), np.ndarray):
        kwargs["attn_mask"] = torch.from_numpy(kwargs["attn_mask"])
    eye = torch.eye(k.shape[0], dtype=torch.float64)
    return sdpa(q, k, v, **kwargs).numpy(), sdpa(q, k, eye, **kwargs).numpy()


def _qkv(n_q: int, n_k: int, d_k: int = 3, d_v: int = 2) -> tuple[np.ndarray, ...]:
    return RNG.normal(size=(n_q, d_k)), RNG.normal(size=(n_k, d_k)), RNG.normal(size=(n_k, d_v))


def test_the_corpus_has_solutions_to_check() -> None:
    assert GRADING is not None and len(CORRECT) >= 3


@pytest.mark.parametrize("solution", SOLUTIONS)
@pytest.mark.parametrize(("n_q", "n_k"), [(4, 4), (1, 1), (3, 6), (6, 3)])
def test_causal_mask_is_pytorchs_is_causal(solution: Any, n_q: int, n_k: int) -> None:
    Q, K, V = _qkv(n_q, n_k)
    mask = solution.causal_mask(n_q, n_k)
    assert mask.dtype == np.bool_ and mask.shape == (n_q, n_k)
    keeps_a_key = mask.any(axis=1)  # with n_q > n_k every query keeps key 0 under top-left alignment
    assert keeps_a_key.all()
    want_O, want_A = oracle(Q, K, V, is_causal=True)
    O, A = solution.masked_attention(Q, K, V, mask)
    np.testing.assert_allclose(O, want_O, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(A, want_A, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("solution", SOLUTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (1, 4), (4,)])
def test_masked_attention_matches_attn_mask_on_rows_with_a_key(solution: Any, shape: tuple[int, ...]) -> None:
    Q, K, V = _qkv(5, 4, d_k=4, d_v=3)
    mask = RNG.random(shape) < 0.6
    mask[..., 0] = True  # every row keeps a key, so PyTorch's softmax is defined everywhere
    want_O, want_A = oracle(Q, K, V, attn_mask=mask)
    O, A = solution.masked_attention(Q, K, V, mask)
    np.testing.assert_allclose(O, want_O, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(A, want_A, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("solution", SOLUTIONS)
def test_fully_masked_rows_are_zero_and_the_rest_match_pytorch(solution: Any) -> None:
    Q, K, V = _qkv(4, 5)
    mask = np.tril(np.ones((4, 5), dtype=bool), k=-1)  # the diagonal excluded: query 0 has no key
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NaN and no warning: a RuntimeWarning fails the test
        O, A = solution.masked_attention(Q, K, V, mask)
    assert np.isfinite(O).all() and np.isfinite(A).all()
    np.testing.assert_array_equal(A[0], 0.0)
    np.testing.assert_array_equal(O[0], 0.0)
    want_O, want_A = oracle(Q, K, V, attn_mask=mask)
    np.testing.assert_allclose(O[1:], want_O[1:], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(A[1:], want_A[1:], rtol=1e-12, atol=1e-14)
    # PyTorch 2.13's SDPA gives such a row zeros as well, as the lesson says.
    np.testing.assert_array_equal(want_O[0], 0.0)


@pytest.mark.parametrize("solution", SOLUTIONS)
def test_padding_mask_as_a_key_padding_attn_mask(solution: Any) -> None:
    lengths, n_k = [3, 1, 5], 5
    mask = solution.padding_mask(lengths, n_k)
    assert mask.dtype == np.bool_ and mask.shape == (3, n_k)
    # Row b is the key-padding mask of sequence b: its queries attend its first lengths[b] keys.
    for b, length in enumerate(lengths):
        Q, K, V = _qkv(2, n_k)
        want_O, _ = oracle(Q, K, V, attn_mask=mask[b][None, :])
        O, _ = solution.masked_attention(Q, K, V, mask[b][None, :])
        np.testing.assert_allclose(O, want_O, rtol=1e-12, atol=1e-14)
        short = oracle(Q[:, :], K[:length], V[:length])[0]  # the same as dropping the padding keys
        np.testing.assert_allclose(O, short, rtol=1e-12, atol=1e-14)


def test_the_reference_gives_no_warning_on_a_fully_masked_row() -> None:
    Q, K, V = _qkv(3, 3)
    with np.errstate(all="raise"):
        O, A = GRADING.masked_attention(Q, K, V, np.zeros((3, 3), dtype=bool))
    assert not O.any() and not A.any()
