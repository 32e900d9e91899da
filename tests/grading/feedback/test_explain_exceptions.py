"""Mutants that raise as the learner's code does (qkv.grading.feedback.explain): a check left out, a check that
raises another class. Graded for real in the sandbox, so that what the learner's code raised, and whether
a raise statement of theirs raised it, come from the harness's report."""

from __future__ import annotations

from typing import Any

import pytest

from qkv.grading import Close, Raises, Suite, TestCase
from qkv.grading.feedback import explain as explaining
from qkv.grading.feedback.mutants import prepare

pytestmark = pytest.mark.timeout(120)
REFERENCE = """import numpy as np


def scores(Q, K):
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"Q has {Q.shape[1]} columns but K has {K.shape[1]}.")
    return Q @ K.T
"""
NAMESPACE: dict[str, Any] = {}
exec(REFERENCE, NAMESPACE)
MISMATCH = Raises("ValueError", "Q and K have different numbers of columns")


def _draw(n_q: int, d_q: int, d_k: int) -> Any:
    return lambda rng: (rng.normal(size=(n_q, d_q)), rng.normal(size=(4, d_k)))


SUITE = Suite(
    ["scores"],
    [
        TestCase("scores of 3 queries", "scores", _draw(3, 2, 2), NAMESPACE["scores"], Close()),
        TestCase("scores raises ValueError (2 and 3 columns)", "scores", _draw(3, 2, 3), MISMATCH),
        TestCase("scores raises ValueError (5 and 4 columns)", "scores", _draw(2, 5, 4), MISMATCH),
    ],
    reference=REFERENCE,
)


@pytest.fixture(autouse=True)
def _prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(REFERENCE, ["scores"])
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)  # what is found, not how fast a busy machine finds it


def _first_failure(grader: Any, source: str) -> Any:
    result = grader.grade(source, SUITE, seed=3)
    return next(test for test in result.tests if test.status not in ("pass", "not_run"))


def test_a_check_left_out_is_named(grader: Any) -> None:
    source = REFERENCE.replace("    if Q.shape[1] != K.shape[1]:\n        raise ValueError(", "    print(")
    first = _first_failure(grader, source)
    assert first.name.startswith("scores raises ValueError")  # NumPy's own ValueError does not count
    assert first.hint_source == "mutant"
    assert "without the input check that raises: no check (in " in first.hint
    assert "Q.shape[1] != K.shape[1]" not in first.hint  # the reference's check is not quoted


def test_a_check_raising_another_class_is_named(grader: Any) -> None:
    first = _first_failure(grader, REFERENCE.replace("raise ValueError", "raise TypeError"))
    assert first.hint_source == "mutant"
    assert "raising TypeError instead of ValueError" in first.hint


def test_a_wrong_value_and_a_missing_check_each_get_their_own_mutant(grader: Any) -> None:
    source = REFERENCE.replace("    if Q.shape[1] != K.shape[1]:\n        raise ValueError(", "    print(")
    source = source.replace("return Q @ K.T", "return 2 * (Q @ K.T)")
    result = grader.grade(source, SUITE, seed=3)
    failing = {test.name: test for test in result.tests if test.status != "pass"}
    unchecked = failing["scores raises ValueError (2 and 3 columns)"]
    assert unchecked.hint_source == "mutant" and "without the input check" in (unchecked.hint or "")
    doubled = failing["scores of 3 queries"]  # no change of the reference doubles it: a relation says so
    assert doubled.hint_source == "relation:factor" and "without the input check" not in (doubled.hint or "")
