"""Part 2 of the lesson, rule by rule: project_qkv, qkv_shapes, output_shape, param_count."""

from __future__ import annotations

import numpy as np
import pytest

from qkv import output_shape, param_count, project_qkv, qkv_shapes

X_LESSON = [[1, 2]]
WQ = [[1, 0], [1, 1]]
WK = [[0, 1], [1, 0]]
WV = [[2, 0], [0, 2]]


def test_the_lessons_token_projects_to_the_tables_numbers() -> None:
    Q, K, V = project_qkv(X_LESSON, WQ, WK, WV)
    assert Q.tolist() == [[3, 2]]
    assert K.tolist() == [[2, 1]]
    assert V.tolist() == [[2, 4]]


def test_returns_a_tuple_of_ndarrays_equal_to_the_three_products() -> None:
    rng = np.random.default_rng(0)
    X, Wq, Wk, Wv = (
        rng.normal(size=(5, 4)),
        rng.normal(size=(4, 3)),
        rng.normal(size=(4, 3)),
        rng.normal(size=(4, 7)),
    )
    result = project_qkv(X, Wq, Wk, Wv)
    assert isinstance(result, tuple) and len(result) == 3
    assert all(isinstance(part, np.ndarray) for part in result)
    np.testing.assert_array_equal(result[0], X @ Wq)
    np.testing.assert_array_equal(result[1], X @ Wk)
    np.testing.assert_array_equal(result[2], X @ Wv)
    assert [part.shape for part in result] == [(5, 3), (5, 3), (5, 7)]


def test_d_v_may_differ_from_d_k_and_n_may_be_one() -> None:
    Q, K, V = project_qkv(np.ones((1, 3)), np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 5)))
    assert (Q.shape, K.shape, V.shape) == ((1, 2), (1, 2), (1, 5))


def test_inputs_are_never_modified() -> None:
    X, Wq, Wk, Wv = (np.arange(6.0).reshape(3, 2), np.eye(2), np.ones((2, 2)), np.full((2, 3), 2.0))
    copies = [a.copy() for a in (X, Wq, Wk, Wv)]
    Q, _, _ = project_qkv(X, Wq, Wk, Wv)
    Q += 100  # the result must not alias an input either
    for original, copy in zip((X, Wq, Wk, Wv), copies, strict=True):
        np.testing.assert_array_equal(original, copy)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1, 2], WQ, WK, WV), "X must be a 2-D array (n, d_model), but it has 1 dimension (shape (2,))."),
        (
            (X_LESSON, [1, 0], WK, WV),
            "Wq must be a 2-D array (d_model, d_k), but it has 1 dimension (shape (2,)).",
        ),
        (
            (X_LESSON, WQ, np.ones((1, 2, 2)), WV),
            "Wk must be a 2-D array (d_model, d_k), but it has 3 dimensions (shape (1, 2, 2)).",
        ),
        (
            (X_LESSON, WQ, WK, [[2, 0], [0, 2], [1, 1]]),
            "Wv has 3 rows but X has d_model = 2 columns; every weight matrix needs one row per hidden feature.",
        ),
        (
            (X_LESSON, [[1, 0]], WK, WV),
            "Wq has 1 row but X has d_model = 2 columns; every weight matrix needs one row per hidden feature.",
        ),
        (
            (X_LESSON, WQ, [[0, 1, 0], [1, 0, 0]], WV),
            "Wk has 3 columns but Wq has 2; queries and keys must share d_k.",
        ),
    ],
)
def test_value_errors_name_the_matrix_and_both_sizes(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError) as error:
        project_qkv(*args)
    assert str(error.value) == message


def test_ragged_and_non_numeric_inputs_get_sentences() -> None:
    with pytest.raises(ValueError, match=r"^X is not a rectangular array of numbers"):
        project_qkv([[1, 2], [3]], WQ, WK, WV)
    with pytest.raises(TypeError, match=r"^Wv must hold real numbers, but its dtype is <U1"):
        project_qkv(X_LESSON, WQ, WK, [["a", "b"], ["c", "d"]])


def test_qkv_shapes_returns_tuples_under_capital_keys() -> None:
    shapes = qkv_shapes(4, 16, 8, 3)
    assert shapes == {"Q": (4, 8), "K": (4, 8), "V": (4, 3)}
    assert list(shapes) == ["Q", "K", "V"]
    assert all(type(shape) is tuple for shape in shapes.values())


def test_output_shape_has_one_row_per_query_and_d_v_columns() -> None:
    assert output_shape(3, 7, 4) == (3, 4)
    assert output_shape(1, 1, 1) == (1, 1)
    assert type(output_shape(2, 5, 6)) is tuple


@pytest.mark.parametrize(
    ("sizes", "expected"),
    [((2, 2, 2), 12), ((1, 1, 1), 3), ((512, 64, 64), 98304), ((10, 3, 7), 130), ((768, 64, 128), 196608)],
)
def test_param_count_counts_wq_wk_wv_without_biases(sizes: tuple[int, int, int], expected: int) -> None:
    assert param_count(*sizes) == expected
    d_model, d_k, d_v = sizes
    assert param_count(*sizes) == d_model * (2 * d_k + d_v)


def test_numpy_integers_are_sizes_too() -> None:
    assert param_count(np.int64(2), np.int32(2), np.uint8(2)) == 12


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: qkv_shapes(True, 2, 2, 2), TypeError, "n must be a positive int, not the bool True."),
        (lambda: qkv_shapes(2, 2.0, 2, 2), TypeError, "d_model must be a positive int, not the float 2.0."),
        (lambda: qkv_shapes(2, 2, 0, 2), ValueError, "d_k must be a positive int, but it is 0."),
        (lambda: output_shape(2, -1, 2), ValueError, "n_k must be a positive int, but it is -1."),
        (lambda: output_shape(2, 3, "4"), TypeError, "d_v must be a positive int, not the str '4'."),
        (lambda: param_count(2, 2, False), TypeError, "d_v must be a positive int, not the bool False."),
        (lambda: param_count(-3, 2, 2), ValueError, "d_model must be a positive int, but it is -3."),
        (lambda: param_count(2, None, 2), TypeError, "d_k must be a positive int, not the NoneType None."),
    ],
)
def test_sizes_must_be_positive_ints(call, error: type[Exception], message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message
