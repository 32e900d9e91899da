"""Properties every attention output must have, on shapes and values chosen by Hypothesis."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from qkv import attention, attention_scores, softmax

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def problems(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Q, K, V and a bool mask in which every query keeps at least one key."""
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 7))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    Q = draw(arrays(np.float64, (n_q, d_k), elements=finite))
    K = draw(arrays(np.float64, (n_k, d_k), elements=finite))
    V = draw(arrays(np.float64, (n_k, d_v), elements=finite))
    mask = draw(arrays(np.bool_, (n_q, n_k)))
    keep = draw(arrays(np.int64, (n_q,), elements=st.integers(0, n_k - 1)))
    mask[np.arange(n_q), keep] = True
    return Q, K, V, mask


@settings(max_examples=150, deadline=None)
@given(problems())
def test_weights_sum_to_one_over_allowed_keys_and_masked_weights_are_exactly_zero(problem) -> None:  # type: ignore[no-untyped-def]
    Q, K, V, mask = problem
    _, A = attention(Q, K, V, mask=mask, return_weights=True)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=1e-12)
    assert (A[~mask] == 0.0).all()
    assert (A >= 0).all()


@settings(max_examples=150, deadline=None)
@given(problems(), st.randoms(use_true_random=False))
def test_permuting_keys_and_values_together_leaves_the_output_unchanged(problem, random) -> None:  # type: ignore[no-untyped-def]
    Q, K, V, mask = problem
    order = list(range(K.shape[0]))
    random.shuffle(order)
    np.testing.assert_allclose(
        attention(Q, K[order], V[order], mask=mask[:, order]),
        attention(Q, K, V, mask=mask),
        rtol=1e-9,
        atol=1e-12,
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), problems())
def test_batched_equals_a_loop_over_items(batch: int, problem) -> None:  # type: ignore[no-untyped-def]
    Q, K, V, mask = problem
    rng = np.random.default_rng(batch)
    Qb = np.stack([Q + rng.normal(size=Q.shape) for _ in range(batch)])  # (batch, n_q, d_k)
    Vb = np.stack([V * (i + 1) for i in range(batch)])  # (batch, n_k, d_v)
    O = attention(Qb, K, Vb, mask=mask, causal=False)
    for i in range(batch):
        np.testing.assert_allclose(O[i], attention(Qb[i], K, Vb[i], mask=mask), rtol=1e-12, atol=1e-14)


@settings(max_examples=150, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite),
    st.floats(-1000, 1000, allow_nan=False),
)
def test_adding_a_constant_to_a_row_of_scores_changes_nothing(S: np.ndarray, shift: float) -> None:
    shifted = S.copy()
    shifted[0] += shift
    np.testing.assert_allclose(softmax(shifted), softmax(S), rtol=1e-9, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(problems(), st.floats(-20, 20, allow_nan=False))
def test_a_constant_float_mask_row_is_the_same_as_no_mask(problem, shift: float) -> None:  # type: ignore[no-untyped-def]
    Q, K, V, _ = problem
    bias = np.zeros((Q.shape[0], K.shape[0]))
    bias[0] = shift
    np.testing.assert_allclose(attention(Q, K, V, mask=bias), attention(Q, K, V), rtol=1e-9, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(problems())
def test_output_is_the_weighted_average_of_the_values(problem) -> None:  # type: ignore[no-untyped-def]
    Q, K, V, mask = problem
    O, A = attention(Q, K, V, mask=mask, return_weights=True)
    weights = softmax(np.where(mask, attention_scores(Q, K), -np.inf))
    np.testing.assert_allclose(A, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(O, weights @ V, rtol=1e-12, atol=1e-12)
    # Each output row lies inside the box spanned by the values it may see.
    for i in range(Q.shape[0]):
        seen = V[mask[i]]
        assert (O[i] >= seen.min(axis=0) - 1e-9).all() and (O[i] <= seen.max(axis=0) + 1e-9).all()
