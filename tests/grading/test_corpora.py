"""The solution corpora, graded for real in the sandbox: correct ones pass, wrong ones fail with their hint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import lesson_contract as contract
from tests.builtin_lessons import L41_EXERCISE, L41_GRADING, L41_SUITE, L41_TESTS

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent


def corpus(kind: str) -> list[Path]:
    return sorted((HERE / kind).glob("*.py"))


@pytest.mark.parametrize("path", corpus("correct"), ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [1, 20261129])
def test_correct_solutions_pass(grader, path: Path, seed: int) -> None:
    result = grader.grade(path.read_text(), L41_SUITE, seed=seed)
    failures = [test for test in result.tests if test.status != "pass"]
    assert result.status == "pass", failures or result.message
    assert result.score == (L41_TESTS, L41_TESTS)
    assert result.message == f"All {L41_TESTS} tests passed."


def test_the_wrong_corpus_covers_at_least_15_distinct_mistakes() -> None:
    # The lesson's own hints, or one of the grader's (the stub is the same for every lesson).
    assert len({contract.expected_hint(L41_EXERCISE.lesson, path) for path in corpus("wrong")}) >= 15


@pytest.mark.parametrize("path", corpus("wrong"), ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [7, 31337])
def test_wrong_solutions_fail_with_their_hint(grader, path: Path, seed: int) -> None:
    # Its hint, and no other but those that its "# also hint:" lines name (where no test tells two causes
    # apart), as the lesson contract checks every lesson's wrong corpus.
    contract.check_fails_with_its_hint(grader, L41_EXERCISE, path, seed)


def test_a_failure_shows_expected_and_got(grader) -> None:
    result = grader.grade(
        (Path(__file__).parent / "wrong" / "output_with_nk.py").read_text(), L41_SUITE, seed=5
    )
    failure = next(test for test in result.tests if test.status == "fail")
    assert failure.name == "output_with_nk" or failure.name.startswith("output_shape")
    assert re.fullmatch(r"Expected the shape \(\d+, \d+\), but got \(\d+, \d+\)\.", failure.message or "")
    assert failure.hint == L41_GRADING.OUTPUT_WITH_NK
