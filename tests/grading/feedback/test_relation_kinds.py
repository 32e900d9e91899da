"""Relations between values of one shape (qkv.grading.feedback.relation_kinds, through find_relation): a
named factor or offset, normalised along another axis, rows or heads in another order, right in part,
NaN an input explains, another dtype, an elementwise function, the input added. No sandbox: these are
functions of values."""

from __future__ import annotations

import math

import numpy as np

from qkv import merge_heads, softmax, split_heads
from qkv.grading.feedback.relations import find_relation

RNG = np.random.default_rng(3)
S = RNG.normal(size=(4, 5))
SIZES = [("n_q", 4), ("n_k", 5), ("d_k", 9)]


def kind(got: object, want: object, **extra: object) -> str | None:
    found = find_relation(got, want, **extra)  # type: ignore[arg-type]
    return None if found is None else found.kind


def test_a_factor_in_the_call_s_sizes() -> None:
    found = find_relation(S / 9, S / np.sqrt(9), sizes=SIZES)
    assert found is not None and found.kind == "factor"
    assert "× 1/√d_k" in found.sentence


def test_a_factor_with_a_constant_and_a_size() -> None:
    found = find_relation(S * 2 / np.sqrt(9), S, sizes=[("d_k", 9), ("n", 7)])
    assert found is not None and "2/√d_k" in found.sentence


def test_an_offset_of_a_product_of_sizes() -> None:
    found = find_relation(3 * 4 + 12, 12, sizes=[("d_model", 3), ("d_v", 4)])
    assert found is not None and found.kind == "offset"
    assert "+ d_model·d_v" in found.sentence


def test_a_constant_offset_in_every_entry() -> None:
    assert kind(S + 4, S, sizes=SIZES) == "offset"


def test_normalised_along_another_axis() -> None:
    found = find_relation(softmax(S, axis=0), softmax(S))
    assert found is not None and found.kind == "normalised"
    assert "axis 0" in found.sentence and "columns sum to 1" in found.sentence


def test_normalised_over_the_whole_array() -> None:
    weights = np.exp(S)
    found = find_relation(weights / weights.sum(), softmax(S))
    assert found is not None and found.kind == "normalised" and "whole array" in found.sentence


def test_each_row_off_by_its_own_factor() -> None:
    assert kind(np.exp(S), softmax(S)) == "row_factors"


def test_heads_in_another_order() -> None:
    heads = RNG.normal(size=(3, 2, 4))
    found = find_relation(heads[[2, 0, 1]], heads, sizes=[("h", 3), ("n", 2), ("d_head", 4)])
    assert found is not None and found.kind == "permuted" and "heads" in found.sentence


def test_rows_in_reverse_order() -> None:
    found = find_relation(S[::-1], S)
    assert found is not None and found.kind == "permuted" and "reverse order" in found.sentence


def test_interleaved_heads() -> None:
    X = RNG.normal(size=(6, 8))
    heads = split_heads(X, 2)  # (2, 6, 4)
    interleaved = heads.transpose(1, 2, 0).reshape(6, 8)  # columns as a (4, 2) grid
    found = find_relation(interleaved, merge_heads(heads), sizes=[("h", 2), ("n", 6), ("d_model", 8)])
    assert found is not None and found.kind == "interleaved" and "h = 2 heads" in found.sentence


def test_the_part_that_is_right() -> None:
    got = S.copy()
    got[2:] += 1
    found = find_relation(got, S * 1.0)
    assert found is not None and found.kind == "partly"
    assert found.sentence.startswith("Rows 0–1 are right; from row 2 on")


def test_one_triangle_right() -> None:
    square = RNG.normal(size=(4, 4))
    got = np.where(np.tril(np.ones((4, 4), dtype=bool)), square, square + 1)
    found = find_relation(got, square)
    assert found is not None and "on and below the diagonal are right" in found.sentence


def test_nan_in_a_fully_masked_row() -> None:
    mask = np.array([[True] * 5, [False] * 5, [True] * 5, [True] * 5])
    got = softmax(S)
    got[1] = np.nan
    found = find_relation(got, softmax(S), args=(mask,))
    assert found is not None and found.kind == "non_finite"
    assert "row 1" in found.sentence and "allows no key" in found.sentence


def test_nan_from_an_overflow() -> None:
    scores = np.array([[1000.0, 0.0], [0.0, 1.0]])
    with np.errstate(all="ignore"):
        got = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    found = find_relation(got, softmax(scores), args=(scores,))
    assert found is not None and found.kind == "non_finite" and "overflows" in found.sentence


def test_float32_for_float64() -> None:
    found = find_relation((S + 1e3).astype(np.float32) - np.float32(1e3), S)
    assert found is not None and found.kind == "dtype" and "float32" in found.sentence


def test_truncated_to_whole_numbers() -> None:
    values = np.array([[1.7, 2.2], [-0.5, 3.9]])
    found = find_relation(np.trunc(values).astype(np.int64), values)
    assert found is not None and found.kind == "truncated"


def test_right_values_of_another_kind() -> None:
    mask = np.tril(np.ones((3, 3), dtype=bool))
    found = find_relation(mask.astype(float), mask)
    assert found is not None and found.kind == "dtype" and "booleans" in found.sentence


def test_nan_from_numbers_far_from_zero() -> None:
    rows = np.array([[1e8 + 0.25, 1e8 - 0.5, 1e8 + 1.0]])
    expected = (rows - rows.mean()) / rows.std()
    got = expected.copy()
    got[0] = np.nan  # what a variance as mean(x²) − mean(x)² gives when it comes out negative
    found = find_relation(got, expected, args=(rows,))
    assert found is not None and found.kind == "non_finite" and "differences from the mean" in found.sentence


def test_a_well_known_function_of_the_input() -> None:
    x = np.round(np.linspace(-3, 3, 13), 2)
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    found = find_relation(exact, tanh_gelu, args=(x,), rtol=1e-7, atol=1e-9)
    assert found is not None and found.kind == "function"
    assert found.sentence.startswith(
        "Your result is GELU computed exactly, 0.5·x·(1 + erf(x/√2)), of the input"
    )
    assert "the expected values are GELU's tanh approximation" in found.sentence
    relu = find_relation(np.maximum(x, 0), tanh_gelu, args=(x,), rtol=1e-7, atol=1e-9)
    assert relu is not None and "ReLU, max(0, x)" in relu.sentence
    # Not a function of one input (two arguments), or no function of the family: no such relation.
    other = find_relation(np.maximum(x, 0), tanh_gelu, args=(x, x), rtol=1e-7, atol=1e-9)
    assert other is None or other.kind != "function"
    squared = find_relation(x**2, tanh_gelu, args=(x,), rtol=1e-7, atol=1e-9)
    assert squared is None or squared.kind != "function"


def test_whole_numbers_where_the_expected_values_have_decimals() -> None:
    # The inputs made whole before computing: not the expected values cut, but whole numbers all the same.
    X, W = np.array([[1.5, -0.25], [2.75, 0.5]]), np.array([[0.5, 1.25], [-1.5, 2.0]])
    found = find_relation(X.astype(int) @ W.astype(int), X @ W, label="your Q")
    assert found is not None and found.kind == "truncated"
    assert found.sentence.startswith(
        "Your Q holds only whole numbers (its dtype is int64), where the expected"
    )
    assert "(such as 1.125)" in found.sentence
    whole = find_relation(np.array([1, 2]), np.array([1.0, 3.0]))
    assert whole is None or "only whole" not in whole.sentence  # whole expected values: no such fact


def test_a_residual_added_twice_or_left_out_is_the_input_plus_or_minus() -> None:
    rng = np.random.default_rng(4)
    X, want = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    twice = find_relation(want + X, want, args=(X, {"W": X}, 2))
    assert twice is not None and twice.kind == "input_added"
    assert "plus the call's first argument" in twice.sentence and "residual added twice" in twice.sentence
    missing = find_relation(want - X, want, args=(X,))
    assert missing is not None and "residual left out" in missing.sentence
    assert (
        find_relation(want + 2 * X, want, args=(X,)) is None
        or find_relation(want + 2 * X, want, args=(X,)).kind != "input_added"
    )


def test_heads_cut_from_the_wrong_columns_are_the_numbers_in_other_places() -> None:
    X = np.random.default_rng(5).normal(size=(3, 8))
    interleaved = X.reshape(3, 4, 2).transpose(2, 0, 1)  # head i takes every second column
    found = find_relation(interleaved, split_heads(X, 2), args=(X, 2))
    assert found is not None and found.kind == "rearranged"
    assert "for a stack of heads" in found.sentence
    # Too few distinct numbers tell no arrangement.
    assert find_relation(np.ones((2, 3)) * [[1], [2]], np.ones((2, 3)) * [[2], [1]]).kind != "rearranged"
