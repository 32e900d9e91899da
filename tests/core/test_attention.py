"""The chapter's math, rule by rule: scores, softmax, causal masks and attention."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from qkv import attention, attention_scores, causal_mask, softmax

q = [[1.0, 0.0]]
K = [[1.0, 0.0], [0.0, 1.0]]
V = [[2.0, 0.0], [0.0, 2.0]]


# -- the worked example -------------------------------------------------------------------------------


def test_worked_example_weights_and_output() -> None:
    O, A = attention(q, K, V, return_weights=True)
    np.testing.assert_allclose(A, [[0.6697615493266569, 0.3302384506733431]], rtol=1e-14)
    np.testing.assert_allclose(O, [[1.3395230986533138, 0.6604769013466862]], rtol=1e-14)


def test_worked_example_with_only_the_first_key_allowed() -> None:
    np.testing.assert_array_equal(attention(q, K, V, mask=[[True, False]]), [[2.0, 0.0]])
    # Top-left causal: the first query sees only the first key.
    np.testing.assert_array_equal(attention(q, K, V, causal=True), [[2.0, 0.0]])


# -- scores and softmax ---------------------------------------------------------------------------------


def test_scores_are_scaled_by_one_over_sqrt_d_k_by_default() -> None:
    Qm = np.arange(12.0).reshape(3, 4)
    Km = np.arange(8.0).reshape(2, 4)
    np.testing.assert_allclose(attention_scores(Qm, Km), Qm @ Km.T / 2.0)
    np.testing.assert_allclose(attention_scores(Qm, Km, scale=0.1), Qm @ Km.T * 0.1)


def test_scores_check_d_k() -> None:
    with pytest.raises(ValueError) as error:
        attention_scores(np.ones((2, 3)), np.ones((4, 2)))
    assert str(error.value) == (
        "K has d_k = 2 columns but Q has 3 (Q (2, 3), K (4, 2)); queries and keys must share d_k."
    )


def test_softmax_rows_sum_to_one_and_are_stable_at_plus_minus_1000() -> None:
    weights = softmax([[1000.0, 999.0, -1000.0], [-1000.0, -1000.0, -1001.0]])
    assert np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights.sum(axis=-1), [1.0, 1.0])
    np.testing.assert_allclose(weights[0, :2], [1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))])


def test_softmax_gives_minus_inf_exactly_zero_and_an_all_minus_inf_row_nan() -> None:
    weights = softmax([[0.0, -np.inf], [-np.inf, -np.inf]])
    assert weights[0].tolist() == [1.0, 0.0]
    assert np.isnan(weights[1]).all()


def test_softmax_along_another_axis() -> None:
    S = np.array([[0.0, 1.0], [0.0, 1.0]])
    np.testing.assert_allclose(softmax(S, axis=0), [[0.5, 0.5], [0.5, 0.5]])


def test_softmax_keeps_float32() -> None:
    assert softmax(np.zeros(3, dtype=np.float32)).dtype == np.float32


# -- causal masks ---------------------------------------------------------------------------------------


def test_causal_mask_top_left_and_bottom_right() -> None:
    assert causal_mask(3, 3).astype(int).tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert causal_mask(2, 4).astype(int).tolist() == [[1, 0, 0, 0], [1, 1, 0, 0]]
    assert causal_mask(2, 4, align="bottom-right").astype(int).tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    # More queries than keys: bottom-right leaves the first queries with no key at all.
    assert causal_mask(3, 2, align="bottom-right").astype(int).tolist() == [[0, 0], [1, 0], [1, 1]]
    assert causal_mask(2, 2).dtype == np.bool_


def test_causal_mask_rejects_unknown_alignments_and_bad_sizes() -> None:
    with pytest.raises(ValueError) as error:
        causal_mask(2, 2, align="top-right")  # type: ignore[arg-type]
    assert str(error.value) == "align must be 'top-left' or 'bottom-right', not 'top-right'."
    with pytest.raises(ValueError, match=r"^n_k must be a positive int, but it is 0\.$"):
        causal_mask(2, 0)


# -- attention: masks ---------------------------------------------------------------------------------


def test_bool_and_float_masks_agree() -> None:
    rng = np.random.default_rng(1)
    Qm, Km, Vm = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    allowed = rng.random((4, 5)) < 0.6
    allowed[:, 0] = True
    additive = np.where(allowed, 0.0, -np.inf)
    np.testing.assert_allclose(attention(Qm, Km, Vm, mask=allowed), attention(Qm, Km, Vm, mask=additive))


def test_a_float_mask_is_added_to_the_scores() -> None:
    bias = np.array([[0.5, -0.25]])
    expected_weights = softmax(attention_scores(q, K) + bias)
    _, A = attention(q, K, V, mask=bias, return_weights=True)
    np.testing.assert_allclose(A, expected_weights)


def test_mask_and_causal_combine() -> None:
    Qm = np.eye(3)
    mask = np.array([True, False, True])  # broadcast over the queries: key 1 is never allowed
    _, A = attention(Qm, Qm, Qm, mask=mask, causal=True, return_weights=True)
    assert (A[:, 1] == 0).all()
    assert (A[0, 1:] == 0).all()  # causal: query 0 sees key 0 only
    np.testing.assert_allclose(A.sum(axis=-1), 1.0)


def test_bottom_right_causal_for_decoding() -> None:
    rng = np.random.default_rng(2)
    Qm, Km, Vm = rng.normal(size=(2, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    explicit = attention(Qm, Km, Vm, mask=causal_mask(2, 5, align="bottom-right"))
    np.testing.assert_allclose(attention(Qm, Km, Vm, causal="bottom-right"), explicit)
    np.testing.assert_allclose(attention(Qm, Km, Vm, causal="top-left"), attention(Qm, Km, Vm, causal=True))


def test_mask_that_does_not_broadcast_names_both_shapes() -> None:
    with pytest.raises(ValueError) as error:
        attention(q, K, V, mask=np.ones((3, 2), dtype=bool))
    assert str(error.value) == (
        "mask has shape (3, 2), which does not broadcast to the scores' shape (1, 2) (..., n_q, n_k)."
    )


def test_float_mask_may_not_hold_nan_or_plus_inf() -> None:
    with pytest.raises(
        ValueError, match=r"may hold finite numbers or -inf, but this one holds NaN or \+inf\."
    ):
        attention(q, K, V, mask=[[0.0, np.nan]])


def test_unknown_causal_value() -> None:
    with pytest.raises(ValueError) as error:
        attention(q, K, V, causal="yes")  # type: ignore[arg-type]
    assert str(error.value) == "causal must be False, True, 'top-left' or 'bottom-right', not 'yes'."


# -- attention: fully-masked rows ------------------------------------------------------------------------

EYE = np.eye(2)
FIRST_ROW_BLIND = np.array([[False, False], [True, True]])


def test_all_masked_zero_is_the_default() -> None:
    O, A = attention(EYE, EYE, V, mask=FIRST_ROW_BLIND, return_weights=True)
    assert O[0].tolist() == [0.0, 0.0]
    assert A[0].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(A[1].sum(), 1.0)


def test_all_masked_nan() -> None:
    O, A = attention(EYE, EYE, V, mask=FIRST_ROW_BLIND, all_masked="nan", return_weights=True)
    assert np.isnan(O[0]).all() and np.isnan(A[0]).all()
    assert np.isfinite(O[1]).all()


def test_all_masked_raise_names_the_rows() -> None:
    with pytest.raises(ValueError) as error:
        attention(EYE, EYE, V, mask=FIRST_ROW_BLIND, all_masked="raise")
    assert str(error.value) == (
        "Every key is masked for query row 0; such a query has no defined attention "
        "(pass all_masked='zero' or 'nan' to allow it)."
    )
    batch_mask = np.zeros((2, 3, 2), dtype=bool)
    batch_mask[0, 2] = True
    with pytest.raises(ValueError, match=r"^Every key is masked for query rows \(0, 0\), \(0, 1\), \(1, 0\)"):
        attention(np.ones((2, 3, 2)), EYE, V, mask=batch_mask, all_masked="raise")


def test_float_mask_of_minus_inf_counts_as_fully_masked() -> None:
    O = attention(EYE, EYE, V, mask=[[-np.inf, -np.inf], [0.0, 0.0]])
    assert O[0].tolist() == [0.0, 0.0]


def test_unknown_all_masked_policy() -> None:
    with pytest.raises(ValueError) as error:
        attention(q, K, V, all_masked="ignore")  # type: ignore[arg-type]
    assert str(error.value) == "all_masked must be 'zero', 'nan' or 'raise', not 'ignore'."


# -- attention: shapes, batches, scale ----------------------------------------------------------------


def test_batch_dimensions_broadcast() -> None:
    rng = np.random.default_rng(3)
    Qb = rng.normal(size=(2, 3, 4, 8))
    Kb = rng.normal(size=(3, 6, 8))  # shared across the first batch dimension
    Vb = rng.normal(size=(1, 1, 6, 5))
    O = attention(Qb, Kb, Vb)
    assert O.shape == (2, 3, 4, 5)
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(O[i, j], attention(Qb[i, j], Kb[j], Vb[0, 0]), rtol=1e-12)


def test_output_has_one_row_per_query_and_d_v_columns() -> None:
    O = attention(np.ones((3, 2)), np.ones((5, 2)), np.ones((5, 7)))
    assert O.shape == (3, 7)


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (
            ((2, 3), (4, 2), (4, 5)),
            "K has d_k = 2 columns but Q has 3 (Q (2, 3), K (4, 2)); queries and keys must share d_k.",
        ),
        (
            ((2, 3), (4, 3), (5, 5)),
            "V has 5 rows but K has 4 (K (4, 3), V (5, 5)); every key needs exactly one value.",
        ),
        (((3,), (4, 3), (4, 5)), "Q must have at least 2 dimensions (..., n_q, d_k), but its shape is (3,)."),
        (((2, 3), (4, 3), (4,)), "V must have at least 2 dimensions (..., n_k, d_v), but its shape is (4,)."),
        (
            ((2, 1, 3), (3, 4, 3), (3, 4, 5)),
            "The batch dimensions of Q (2, 1, 3), K (3, 4, 3) and V (3, 4, 5) do not broadcast together.",
        ),
    ],
)
def test_shape_errors_name_the_shapes(shapes: tuple[tuple[int, ...], ...], message: str) -> None:
    with pytest.raises(ValueError) as error:
        attention(*(np.ones(shape) for shape in shapes))
    assert str(error.value) == message


def test_custom_scale_and_bad_scales() -> None:
    _, A = attention(q, K, V, scale=1.0, return_weights=True)
    np.testing.assert_allclose(A, softmax([[1.0, 0.0]]))
    with pytest.raises(TypeError, match=r"^scale must be a real number, not the str '2'\.$"):
        attention(q, K, V, scale="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^scale must be a real number, not the bool True\.$"):
        attention(q, K, V, scale=True)
    with pytest.raises(ValueError, match=r"^scale must be a finite number, but it is inf\.$"):
        attention(q, K, V, scale=math.inf)


# -- attention: dtypes --------------------------------------------------------------------------------


def test_float32_stays_float32_and_float64_stays_float64() -> None:
    for dtype in (np.float32, np.float64):
        O, A = attention(
            np.ones((2, 3), dtype), np.ones((4, 3), dtype), np.ones((4, 2), dtype), return_weights=True
        )
        assert O.dtype == dtype and A.dtype == dtype


def test_ints_and_bools_become_float64() -> None:
    assert attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]]).dtype == np.float64
    assert attention([[True, False]], [[True, False]], [[True]]).dtype == np.float64


def test_float16_is_accumulated_in_float32_and_returned_as_float16() -> None:
    rng = np.random.default_rng(4)
    Qh, Kh, Vh = (rng.normal(size=shape).astype(np.float16) for shape in ((8, 64), (300, 64), (300, 16)))
    O = attention(Qh, Kh, Vh)
    assert O.dtype == np.float16
    reference = attention(Qh.astype(np.float64), Kh.astype(np.float64), Vh.astype(np.float64))
    np.testing.assert_allclose(O.astype(np.float64), reference, atol=2e-3)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.ones((1, 2), dtype=complex), "Q must hold real numbers, but its dtype is complex128"),
        (np.array([[1, "a"]], dtype=object), "Q must hold real numbers, but its dtype is object"),
    ],
)
def test_complex_and_object_inputs_are_type_errors(value: np.ndarray, message: str) -> None:
    with pytest.raises(TypeError) as error:
        attention(value, K, V)
    assert str(error.value).startswith(message)


def test_inputs_are_not_modified() -> None:
    Qm, Km, Vm = np.eye(2), np.eye(2), np.ones((2, 2))
    mask = np.array([[True, False], [True, True]])
    before = [a.copy() for a in (Qm, Km, Vm, mask)]
    attention(Qm, Km, Vm, mask=mask, causal=True)
    for after, original in zip((Qm, Km, Vm, mask), before, strict=True):
        np.testing.assert_array_equal(after, original)


def test_causal_must_be_a_bool_or_an_alignment_name_even_on_the_streamed_path() -> None:
    big = np.ones((300, 4))
    for value in (1, "causal", np.array(True)):
        for Qm in (np.eye(2), big):
            with pytest.raises(
                ValueError, match=r"^causal must be False, True, 'top-left' or 'bottom-right', not "
            ):
                attention(Qm, Qm, Qm, causal=value)  # type: ignore[arg-type]


# -- attention: sizes of zero -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"causal": True}, {"causal": "bottom-right"}, {"mask": np.ones((1, 4), bool)}, {"scale": 1.0}],
)
def test_no_queries_give_an_empty_output(kwargs: dict[str, Any]) -> None:
    for batch in ((), (2,)):
        Qe, Ke, Ve = np.ones((*batch, 0, 3)), np.ones((*batch, 4, 3)), np.ones((*batch, 4, 5))
        assert attention(Qe, Ke, Ve, **kwargs).shape == (*batch, 0, 5)
        O, A = attention(Qe, Ke, Ve, return_weights=True, **kwargs)
        assert (O.shape, A.shape) == ((*batch, 0, 5), (*batch, 0, 4))


@pytest.mark.parametrize("return_weights", [False, True])
def test_no_keys_is_an_error_that_names_the_shapes(return_weights: bool) -> None:
    with pytest.raises(ValueError) as error:
        attention(np.ones((2, 3), np.float32), np.ones((0, 3), np.float32), np.ones((0, 4), np.float32),
                  return_weights=return_weights)  # fmt: skip
    assert str(error.value) == (
        "K and V have no rows (K (0, 3), V (0, 4)), so no query has a key to attend to; "
        "attention needs at least one key."
    )


def test_d_k_of_zero_needs_an_explicit_scale() -> None:
    Qz, Kz, Vz = np.ones((2, 0)), np.ones((3, 0)), np.arange(6.0).reshape(3, 2)
    for call in (lambda: attention(Qz, Kz, Vz), lambda: attention_scores(Qz, Kz)):
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == (
            "Q and K have d_k = 0 columns, so the default scale 1/√d_k is undefined; "
            "pass scale= to score them (every dot product is then 0)."
        )
    # Every score is 0, so every query averages the values evenly.
    np.testing.assert_allclose(attention(Qz, Kz, Vz, scale=1.0), [[2.0, 3.0], [2.0, 3.0]])


def test_softmax_over_no_entries_is_empty() -> None:
    assert softmax(np.ones((2, 0))).shape == (2, 0)
