"""Relations between values of different shapes (qkv.grading.feedback.relation_shapes, through find_relation):
transposed, axes swapped, reshaped where a transpose belonged, an axis of size one missing, a shape the
call's sizes explain, as many numbers in more axes or fewer. No sandbox: these are functions of values."""

from __future__ import annotations

import numpy as np

from qkv import split_heads
from qkv.grading.feedback.relations import find_relation

RNG = np.random.default_rng(3)
S = RNG.normal(size=(4, 5))


def kind(got: object, want: object, **extra: object) -> str | None:
    found = find_relation(got, want, **extra)  # type: ignore[arg-type]
    return None if found is None else found.kind


def test_a_transposed_matrix() -> None:
    found = find_relation(S.T, S)
    assert found is not None and found.kind == "transposed"
    assert "transposed" in found.sentence and ".T" in found.sentence


def test_swapped_axes_name_the_sizes() -> None:
    heads = RNG.normal(size=(2, 3, 4))  # (h, n, d_head)
    found = find_relation(heads.transpose(1, 0, 2), heads, sizes=[("h", 2), ("n", 3), ("d_head", 4)])
    assert found is not None and found.kind == "axes"
    assert "(n, h, d_head) where (h, n, d_head) is expected" in found.sentence


def test_a_reshape_where_a_transpose_belonged() -> None:
    X = RNG.normal(size=(6, 8))
    found = find_relation(X.reshape(2, 6, 4), split_heads(X, 2), sizes=[("h", 2), ("n", 6), ("d_head", 4)])
    assert found is not None and found.kind == "reshaped"
    assert "(n, h, d_head) reshaped to (2, 6, 4)" in found.sentence


def test_right_values_in_another_shape() -> None:
    assert kind(S.reshape(5, 4), S) == "reshaped"


def test_a_missing_axis_of_size_one() -> None:
    found = find_relation(S.sum(axis=-1), S.sum(axis=-1, keepdims=True))
    assert found is not None and found.kind == "shape" and "keepdims=True" in found.sentence


def test_a_shape_explained_by_the_sizes() -> None:
    sizes = [("n", 9), ("d_model", 4), ("d_k", 3)]
    found = find_relation(np.zeros((9, 4)), np.zeros((9, 3)), sizes=sizes)
    assert found is not None and found.kind == "shape"
    assert "(n, d_model)" in found.sentence and "(n, d_k)" in found.sentence
    tuple_found = find_relation((9, 4), (9, 3), sizes=sizes)
    assert tuple_found is not None and "d_model stands where d_k belongs" in tuple_found.sentence


def test_as_many_numbers_in_more_axes_or_fewer() -> None:
    # Heads never merged back: (h, n, d_head) where (n, d_model) belongs, with other values too.
    rng = np.random.default_rng(3)
    found = find_relation(rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 8)))
    assert found is not None and found.kind == "shape"
    assert found.sentence == (
        "Your result has shape (2, 3, 4), 3 axes, where the expected shape (3, 8) has 2, with as many numbers "
        "in all (24). Look for axes left apart that belong merged into one (a reshape, after a transpose "
        "where the order needs it)."
    )
    fewer = find_relation(rng.normal(size=(3, 8)), rng.normal(size=(2, 3, 4)))
    assert fewer is not None and "Look for axes merged into one that belong apart" in fewer.sentence
    assert find_relation(rng.normal(size=(2, 3, 5)), rng.normal(size=(3, 8))) is None  # other counts: no fact
