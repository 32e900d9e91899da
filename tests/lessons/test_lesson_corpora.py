"""Every lesson's solution corpora, graded for real in the sandbox.

Layout: ``tests/lesson_corpora/<lesson id>/<exercise id>/correct/*.py`` must pass every test, and
``.../wrong/*.py`` must fail with the hint named on their ``# expected hint: NAME`` line, where NAME is a
module-level constant of the lesson's ``grading.py`` (or ``STUB`` / the grader's own hints). No other
hint may be blamed. (L4.1's corpora live in tests/grading, with the grader's own tests.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qkv.grading import hints as grading_hints
from qkv.lessons import load_catalog
from qkv.lessons.pyfiles import import_lesson_file

pytestmark = [pytest.mark.timeout(180), pytest.mark.sandbox]
CORPORA = Path(__file__).parents[1] / "lesson_corpora"
CATALOG = load_catalog()


def corpus(kind: str) -> list[Path | None]:
    """The files of one kind; ``[None]`` while no later lesson has a corpus (an empty list would be a skip)."""
    return list(sorted(CORPORA.glob(f"*/*/{kind}/*.py"))) or [None]


def _no_later_code_exercise() -> None:
    later = [entry.id for entry in CATALOG.code_exercises() if not entry.id.startswith("L4.1/")]
    assert later == [], f"{later} have no corpora under {CORPORA}"


def exercise_of(path: Path) -> str:
    """``L4.2/scores`` for ``lesson_corpora/L4.2/scores/wrong/x.py``."""
    return f"{path.parents[2].name}/{path.parents[1].name}"


def expected_hint(path: Path) -> str:
    match = re.search(r"^# expected hint: (\w+)", path.read_text(), re.MULTILINE)
    assert match, f"{path} does not say which hint it expects"
    entry = CATALOG.code_exercise(exercise_of(path))
    module, problems = import_lesson_file(entry.lesson.source.parent / "grading.py")
    assert module is not None, problems
    found = getattr(module, match.group(1), None) or getattr(grading_hints, match.group(1), None)
    assert isinstance(found, str), f"{path}: no hint called {match.group(1)}"
    return found


def _id(path: Path | None) -> str:
    return f"{exercise_of(path)}:{path.stem}" if path else "none-yet"


@pytest.mark.parametrize("path", corpus("correct"), ids=_id)
@pytest.mark.parametrize("seed", [1, 20261201])
def test_correct_solutions_pass(grader, path: Path | None, seed: int) -> None:
    if path is None:
        return _no_later_code_exercise()
    result = grader.grade(path.read_text(), CATALOG.code_exercise(exercise_of(path)).suite, seed=seed)
    failures = [(test.name, test.message) for test in result.tests if test.status != "pass"]
    assert result.status == "pass", failures or result.message


@pytest.mark.parametrize("path", corpus("wrong"), ids=_id)
@pytest.mark.parametrize("seed", [7, 31337])
def test_wrong_solutions_fail_with_their_hint(grader, path: Path | None, seed: int) -> None:
    if path is None:
        return _no_later_code_exercise()
    result = grader.grade(path.read_text(), CATALOG.code_exercise(exercise_of(path)).suite, seed=seed)
    assert result.status == "fail", result.message
    failing = [test for test in result.tests if test.status != "pass"]
    given = {test.hint for test in failing}
    assert expected_hint(path) in given, [(test.name, test.message, test.hint) for test in failing]
    assert given <= {expected_hint(path), None}, given  # no other misconception is blamed


def test_every_code_exercise_of_a_later_lesson_has_corpora() -> None:
    later = [entry.id for entry in CATALOG.code_exercises() if not entry.id.startswith("L4.1/")]
    for exercise_id in later:
        assert (CORPORA / exercise_id / "correct").is_dir(), f"{exercise_id} has no correct corpus"
        assert len(list((CORPORA / exercise_id / "wrong").glob("*.py"))) >= 3, (
            f"{exercise_id}: few wrong programs"
        )


SOLVED = [entry for entry in CATALOG.code_exercises() if entry.exercise.solution is not None]


@pytest.mark.parametrize("entry", SOLVED or [None], ids=lambda entry: entry.id if entry else "none")
@pytest.mark.parametrize("seed", [3, 20261201])
def test_every_reference_solution_passes_its_tests(grader, entry, seed: int) -> None:
    """The solution a learner is shown once they earn it (the ``solution`` key) passes every test."""
    if entry is None:
        return
    result = grader.grade(entry.exercise.solution, entry.suite, seed=seed)
    failures = [(test.name, test.message) for test in result.tests if test.status != "pass"]
    assert result.status == "pass", failures or result.message
