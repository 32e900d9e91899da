"""Wrong programs of kinds that no lesson lists (tests/grading/unlisted/<lesson>/), graded for real in
the sandbox. Each says where its kind of bug was seen (``# source:``), which sources of a first message
name it (``# expected:``) and the words a true cause has (``# cause:``). Every one fails; none gets a
misleading first message beyond the benchmark's bound (a cause stated, by a lesson's hint, a mutant, a
crash or a repeated call, that is not the program's: the strict reading of benchmarks/mistakes.py); the
programs marked ``# pinned:`` are named first one by one."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from qkv.grading.feedback import explain as explaining
from qkv.grading.feedback.mutants import prepare
from qkv.lessons import load_catalog

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from mistakes import MISLEADING_TARGET, unlisted_verdict

pytestmark = pytest.mark.timeout(600)
UNLISTED = sorted((Path(__file__).parent / "unlisted").glob("*/*.py"))
PINNED = [path for path in UNLISTED if "\n# pinned:" in path.read_text()]
CATALOG = load_catalog()


def header(path: Path, field: str) -> str:
    match = re.search(rf"^# {field}: (.+)$", path.read_text(), re.MULTILINE)
    assert match, f"{path.name} has no '# {field}:' line"
    return match.group(1).strip()


def grade(grader: Any, path: Path, seed: int) -> Any:
    suite = CATALOG.code_exercise(header(path, "exercise")).suite
    prepare(suite.reference, suite.functions)
    return grader.grade(path.read_text(), suite, seed=seed)


def test_the_corpus_spans_every_lesson_with_sixty_programs_each_with_its_source_and_cause() -> None:
    assert len(UNLISTED) >= 60
    assert len({path.parent.name for path in UNLISTED}) == 6
    for path in UNLISTED:
        header(path, "source"), header(path, "expected")
        re.compile(header(path, "cause"))


@pytest.mark.parametrize("path", PINNED, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("seed", [7, 31337])
def test_a_pinned_unlisted_mistake_is_named_first(grader, path: Path, seed: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # What is tested is what the search finds, not how fast a busy machine finds it.
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)
    result = grade(grader, path, seed)
    assert result.status == "fail", result.message
    first = next(test for test in result.tests if test.status not in ("pass", "not_run"))
    assert first.hint_source in header(path, "expected").split(), (first.name, first.hint_source, first.hint)
    assert unlisted_verdict(result, path.read_text()) == "named", first.hint


def test_every_unlisted_program_fails_and_few_first_messages_mislead(grader, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)
    verdicts = {
        f"{path.parent.name}/{path.stem}": unlisted_verdict(grade(grader, path, 7), path.read_text())
        for path in UNLISTED
    }
    assert [name for name, verdict in verdicts.items() if verdict == "pass"] == []
    misleading = [name for name, verdict in verdicts.items() if verdict == "misleading"]
    assert len(misleading) <= MISLEADING_TARGET * len(verdicts), misleading
