"""``qkv mistakes list | name | unname | export``: the groups of a course's failing programs, read and named
from the command line on the same database the server uses."""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from qkv.cli import build
from qkv.grading import sandbox_available
from qkv.lessons import load_catalog
from qkv.store import MembershipSource, Store
from qkv.store.work.mistake_signatures import first_message
from tests.class_mistakes import EXERCISE, FUNCTION, LESSON, OTHERS, STYLES

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is needed to grade programs")


def run(*args: str) -> Result:
    command = build()
    return CliRunner().invoke(command, list(args))  # type: ignore[arg-type]


def _graded(grader: Any, program: str) -> dict[str, Any]:
    suite = load_catalog().code_exercise(f"{LESSON}/{EXERCISE}").suite
    document: dict[str, Any] = grader.grade(program, suite).to_dict()
    return document


def test_list_name_unname_and_export(tmp_path: Path, grader: Any) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    results = [_graded(grader, program) for program in [*STYLES, OTHERS[0]]]
    with closing(Store(url)) as store:
        course = store.courses.create("Attention")
        for index, result in enumerate(results[:4] + results[5:]):
            learner = f"{index:036d}"
            store.code.record(learner, LESSON, EXERCISE, STYLES[index] if index < 4 else OTHERS[0], result)
            store.courses.enrol(course.id, learner, MembershipSource.ROSTER)
    listed = json.loads(run("mistakes", "list", "--lesson", LESSON, "--json", "--database-url", url).output)
    assert [(g["function"], g["learners"], g["programs"]) for g in listed] == [
        (FUNCTION, 4, 4),
        (FUNCTION, 1, 1),
    ]
    group = listed[0]
    assert {"id", "lesson", "exercise", "first_message", "sentence"} <= set(group) and group[
        "sentence"
    ] is None
    assert group["first_message"] == first_message(results[0], FUNCTION) != ""
    assert run("mistakes", "list", "--course", course.id, "--database-url", url).output.startswith(
        group["id"]
    )

    named = run("mistakes", "name", group["id"], "Divide by √d_k, not by √(n_q·d_k).", "--database-url", url)
    assert named.exit_code == 0, named.output
    assert f"in the course {course.id}" in named.output
    with closing(Store(url)) as store:
        fifth = store.mistakes.notes_for(f"{0:036d}", LESSON, EXERCISE, results[4])
        other = store.mistakes.notes_for(f"{0:036d}", LESSON, EXERCISE, results[5])
    assert [note.sentence for note in fifth] == ["Divide by √d_k, not by √(n_q·d_k)."] and other == []

    exported = run(
        "mistakes", "export", "--lesson", LESSON, "--to", str(tmp_path / "out"), "--database-url", url
    )
    assert exported.exit_code == 0, exported.output
    catalogue = (tmp_path / "out" / "catalogue.py").read_text()
    constant = f"CLASS_{FUNCTION.upper()}_{group['id'][:6].upper()}"
    assert f'{constant} = "Divide by √d_k, not by √(n_q·d_k)."' in catalogue
    program = (tmp_path / "out" / "wrong" / f"{constant.lower()}.py").read_text()
    assert f"# expected hint: {constant}" in program
    # The corpus program behaves as the group does.
    assert _graded(grader, program)["signatures"][FUNCTION] == results[0]["signatures"][FUNCTION]

    assert run("mistakes", "unname", group["id"], "--database-url", url).exit_code == 0
    with closing(Store(url)) as store:
        assert store.mistakes.notes_for(f"{0:036d}", LESSON, EXERCISE, results[4]) == []


def test_bad_names_get_sentences(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    unknown = run("mistakes", "name", "0123456789abcdef", "A note.", "--database-url", url)
    assert unknown.exit_code == 1
    assert "There is no group of mistakes '0123456789abcdef'" in unknown.output
    assert (
        "There is no course 'nope'"
        in run("mistakes", "list", "--course", "nope", "--database-url", url).output
    )
    assert (
        "No group of L9.1 is named"
        in run("mistakes", "export", "--lesson", "L9.1", "--database-url", url).output
    )
    assert "No failing program has been grouped yet." in run("mistakes", "list", "--database-url", url).output
