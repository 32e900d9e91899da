"""A test that expects an exception expects the learner's own check: NumPy's error of the same class, from
the computation on the same inputs, does not stand in for it. Graded for real in the sandbox."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from qkv.grading import Limits, Raises, Suite, TestCase
from qkv.grading.compare import Whole
from qkv.grading.suite import Case
from qkv.grading.values import MalformedReport
from qkv.grading.verdict import judge

pytestmark = pytest.mark.timeout(120)

MISMATCHED = (np.ones((2, 3)), np.ones((4, 2)))  # A @ B raises NumPy's own ValueError
REASON = "the inner sizes differ (A has 3 columns, B 4 rows)"


def _suite(checked: bool = True) -> Suite:
    return Suite(
        ["dot"],
        [
            TestCase(
                "dot raises ValueError when the inner sizes differ",
                "dot",
                MISMATCHED,
                Raises("ValueError", REASON, checked),
            )
        ],
    )


CHECKS_FIRST = """
def dot(A, B):
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A has {A.shape[1]} columns but B has {B.shape[0]} rows")
    return A @ B
"""
IN_A_HELPER = """
def _check(A, B):
    if A.shape[1] != B.shape[0]:
        raise ValueError("the inner sizes differ")

def dot(A, B):
    _check(A, B)
    return A @ B
"""
RAISED_FROM_NUMPY_S = """
def dot(A, B):
    try:
        return A @ B
    except ValueError as error:
        raise ValueError(f"A has {A.shape[1]} columns but B has {B.shape[0]} rows") from error
"""
NO_CHECK = """
def dot(A, B):
    return A @ B
"""
NUMPY_S_RERAISED = """
def dot(A, B):
    try:
        return A @ B
    except ValueError:
        raise
"""
NUMPY_S_DOT = """
import numpy as np

def dot(A, B):
    return np.dot(A, B)
"""


@pytest.mark.parametrize(
    "program", [CHECKS_FIRST, IN_A_HELPER, RAISED_FROM_NUMPY_S], ids=["first", "helper", "from"]
)
def test_a_raise_statement_of_the_learner_passes(grader: Any, program: str) -> None:
    result = grader.grade(program, _suite(), seed=1)
    assert result.status == "pass", [(test.name, test.message) for test in result.tests]


@pytest.mark.parametrize(
    "program", [NO_CHECK, NUMPY_S_RERAISED, NUMPY_S_DOT], ids=["none", "reraised", "np.dot"]
)
def test_numpy_s_own_value_error_does_not_stand_in_for_the_check(grader: Any, program: str) -> None:
    result = grader.grade(program, _suite(), seed=1)
    (test,) = result.tests
    assert (result.status, test.status) == ("fail", "fail")
    assert test.message is not None
    assert test.message.startswith(
        f"Expected ValueError because {REASON}, raised by a check of your own; this "
    )
    assert (
        "came from the computation on line " in test.message and "not from a raise statement" in test.message
    )
    assert test.message.endswith(
        "dot must check its inputs before computing and raise ValueError itself, with a message that says "
        "what is wrong."
    )
    assert test.got is not None and test.got.startswith("raised ValueError: ")


def test_a_test_that_accepts_any_source_passes_numpy_s_error(grader: Any) -> None:
    assert grader.grade(NO_CHECK, _suite(checked=False), seed=1).status == "pass"


def test_a_report_that_garbles_whether_the_learner_raised_is_tampering() -> None:
    case = Case("dot raises", "dot", MISMATCHED, Raises("ValueError", REASON), Whole())
    event = {"outcome": "raised", "type": "ValueError", "bases": ["ValueError"], "message": "m", "line": 3}
    assert judge(case, {**event, "own_raise": True}, Limits()).status == "pass"
    assert judge(case, event, Limits()).status == "fail"  # not said to be the learner's: not taken as it
    with pytest.raises(MalformedReport, match="does not say whether"):
        judge(case, {**event, "own_raise": "yes"}, Limits())
