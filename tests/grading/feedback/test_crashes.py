"""Crashes named by what the failing line does (qkv.grading.feedback.crashes): the harness reports the failing
expression's columns and the frame's names, the grader parses the learner's line and writes the sentence.
Graded for real in the sandbox, with the lesson's hints off (a suite of this file's own)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from qkv.grading import Close, Suite, TestCase
from qkv.grading.feedback.crashes import Place, crash_sentence

pytestmark = pytest.mark.timeout(120)

REFERENCE = """import numpy as np


def scores(Q, K):
    return Q @ K.T  # (n_q, n_k)
"""


def _pair(rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4))


SUITE = Suite(
    ["scores"],
    [TestCase("scores of 3 queries and 5 keys", "scores", _pair, lambda Q, K: Q @ K.T, Close())],
    reference=REFERENCE,
)


def _first(grader: Any, source: str) -> Any:
    result = grader.grade(source, SUITE, seed=1)
    return next(test for test in result.tests if test.status != "pass")


def test_a_matmul_of_mismatched_sizes_names_the_shapes_and_the_transpose(grader: Any) -> None:
    first = _first(grader, "import numpy as np\n\n\ndef scores(Q, K):\n    S = Q @ K\n    return S\n")
    assert first.status == "error" and first.hint_source == "crash"
    assert first.hint == (
        "Line 5, column 9: @ multiplies Q by K, shapes (3, 4) and (5, 4): the inner sizes must agree, and "
        "here 4 meets 5. The usual fix: one operand probably needs a transpose, or the order is swapped: "
        "Q @ K.T would fit."
    )


def test_an_elementwise_operator_names_both_shapes(grader: Any) -> None:
    first = _first(grader, "def scores(Q, K):\n    return Q * K\n")
    assert first.hint_source == "crash"
    assert "Q * K combines its operands element by element (*), shapes (3, 4) and (5, 4)" in first.hint


def test_an_index_past_the_end_names_the_array_s_range(grader: Any) -> None:
    source = "import numpy as np\n\n\ndef scores(Q, K):\n    last = K[5]\n    return Q @ K.T\n"
    first = _first(grader, source)
    assert first.hint_source == "crash"
    assert first.hint.startswith(
        "Line 5, column 12: K[5] indexes K, an array of shape (5, 4): its indices run"
    )


def test_a_none_operand_is_named_with_its_type(grader: Any) -> None:
    source = "def helper(Q):\n    Q.T\n\n\ndef scores(Q, K):\n    H = helper(Q)\n    return H @ K.T\n"
    first = _first(grader, source)
    assert first.hint_source == "crash"
    assert "H @ K.T applies @ to operands it cannot combine: H is a NoneType" in first.hint


def test_an_axis_the_array_lacks() -> None:
    names = {"x": {"shape": [4], "dtype": "float64"}}
    said = crash_sentence(
        "y = x.sum(axis=1)\n", Place(1, 4, 17, names), "ValueError", "axis 1 is out of bounds"
    )
    assert said is not None and "with an axis it does not have (the array has 1 axis)" in said


def test_a_line_whose_expression_is_not_found_says_nothing() -> None:
    assert crash_sentence("x = 1\n", Place(3, 0, 4, {}), "ValueError", "") is None
    assert crash_sentence("def (:\n", Place(1, 0, 4, {}), "ValueError", "") is None


def test_a_forged_place_is_a_malformed_report_and_an_odd_name_is_left_out() -> None:
    from qkv.grading.sandbox.limits import Limits
    from qkv.grading.values import MalformedReport
    from qkv.grading.verdict import judge

    case = SUITE.cases(1)[0]
    event = {
        "outcome": "raised",
        "type": "ValueError",
        "bases": ["ValueError", "Exception"],
        "message": "no",
        "line": 2,
        "errno": None,
        "own_raise": False,
        "params": ["Q", "K"],
        "span": [2, "4", 9],
        "names": {},
    }
    with pytest.raises(MalformedReport):
        judge(case, event, Limits(), None, "def scores(Q, K):\n    return Q @ K\n")
    odd = {**event, "span": [2, 11, 16], "names": {".0": {"type": "x"}, "Q": {"shape": "(3, 4)", "dtype": 1}}}
    result = judge(case, odd, Limits(), None, "def scores(Q, K):\n    return Q @ K\n")
    assert result.hint_source == "crash" and "shapes" not in (result.hint or "")
