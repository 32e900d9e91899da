"""Wrong programs of kinds that no lesson lists (tests/grading/unlisted/<lesson>/), graded for real in
the sandbox: each fails, and its first failure shown carries the generic sentence its ``# expected:``
line names (a mutant of the reference, or a relation of that kind; ``lesson`` where a lesson's hint
already says the same)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qkv.grading import explain as explaining
from qkv.grading.mutants import prepare
from qkv.lessons import load_catalog

pytestmark = pytest.mark.timeout(120)
UNLISTED = sorted((Path(__file__).parent / "unlisted").glob("*/*.py"))
CATALOG = load_catalog()


def header(path: Path, field: str) -> str:
    match = re.search(rf"^# {field}: (.+)$", path.read_text(), re.MULTILINE)
    assert match, f"{path.name} has no '# {field}:' line"
    return match.group(1).strip()


def test_there_are_unlisted_programs_for_most_lessons() -> None:
    assert len(UNLISTED) >= 10
    assert len({path.parent.name for path in UNLISTED}) >= 5


@pytest.mark.parametrize("path", UNLISTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("seed", [7, 31337])
def test_an_unlisted_mistake_is_named_first(grader, path: Path, seed: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # What is tested is what the search finds, not how fast a busy machine finds it.
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)
    suite = CATALOG.code_exercise(header(path, "exercise")).suite
    prepare(suite.reference, suite.functions)
    result = grader.grade(path.read_text(), suite, seed=seed)
    assert result.status == "fail", result.message
    failing = [test for test in result.tests if test.status not in ("pass", "not_run")]
    first = failing[0]
    assert first.hint_source in header(path, "expected").split(), (first.name, first.hint_source, first.hint)
    assert first.hint
