"""Relations between a wrong value and the expected one (qkv.grading.feedback.relations, grammar, sizes): odd
and unrelated values give none, the grammar of factors and offsets, the sizes a call names, a container
of the wrong type. Each relation kind has its test in test_relation_shapes.py or test_relation_kinds.py.
No sandbox: these are functions of values."""

from __future__ import annotations

import numpy as np
import pytest

from qkv.grading.feedback.grammar import name_factor, name_offset
from qkv.grading.feedback.relations import find_relation, name_shape
from qkv.grading.feedback.sizes import (
    call_sizes,
    output_sizes,
    reference_axes,
    reference_outputs,
    reference_params,
)

RNG = np.random.default_rng(3)


def kind(got: object, want: object, **extra: object) -> str | None:
    found = find_relation(got, want, **extra)  # type: ignore[arg-type]
    return None if found is None else found.kind


@pytest.mark.parametrize(
    "got", [None, "text", [[1, 2], [3]], {"a": 1}, np.array([np.nan]), float("inf")], ids=repr
)
def test_odd_values_give_no_relation_and_no_error(got: object) -> None:
    found = find_relation(got, np.array([1.0]))
    assert found is None or found.kind == "non_finite"


def test_no_relation_for_unrelated_numbers() -> None:
    assert find_relation(RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))) is None


def test_the_grammar_prefers_named_sizes_and_says_when_two_are_equal() -> None:
    assert [term.text for term in name_factor(0.5, [("d_k", 4)])] == ["1/√d_k"]
    assert [term.text for term in name_factor(0.5, [("d_k", 4), ("n", 4)])] == ["1/√d_k", "1/√n"]
    assert name_factor(1.0, [("d_k", 4)]) == [] and name_factor(0.3721, [("d_k", 4)]) == []
    assert [term.text for term in name_offset(7.0, [("d_k", 3), ("d_v", 4)])] == ["+ d_k + d_v"]
    assert name_shape((9, 3), [("n", 9), ("d_k", 3), ("d_v", 3)], prefer=(None, "d_v")) == "(n, d_v)"


REFERENCE = """import numpy as np


def project(X, W, h):
    n, d_model = X.shape
    d_head = d_model // h
    d_k = np.shape(W)[1]
    return X @ W  # (n, d_k)
"""


def test_the_sizes_of_a_call_come_from_its_reference() -> None:
    assert reference_params(REFERENCE, "project") == ["X", "W", "h"]
    X, W = np.zeros((9, 4)), np.zeros((4, 3))
    sizes = call_sizes((X, W, 2), ["X", "W", "h"], None, reference_axes(REFERENCE, "project"))
    assert dict(sizes) == {"h": 2, "n": 9, "d_model": 4, "d_k": 3, "d_head": 2}
    assert reference_outputs(REFERENCE, "project") == [["n", "d_k"]]
    assert output_sizes(np.zeros((9, 3)), [["n", "d_k"]]) == [("n", 9), ("d_k", 3)]
    declared = call_sizes((X, W, 2), ["X", "W", "h"], {"W": ("d_in", "d_out")})
    assert dict(declared) == {"h": 2, "d_in": 4, "d_out": 3}


def test_a_list_where_a_tuple_belongs_and_keys_in_another_case() -> None:
    found = find_relation([4, 7], (4, 7), label="your Q")
    assert (
        found is not None
        and found.kind == "container"
        and "in a list; a tuple is asked for" in found.sentence
    )
    keys = find_relation({"q": (1, 2), "k": (1, 2)}, {"Q": (1, 2), "K": (1, 2)})
    assert keys is not None and keys.kind == "keys" and "'q' for 'Q'" in keys.sentence
    assert find_relation([np.zeros(2)], (np.zeros(2),)) is None  # arrays inside: no crash
