"""``qkv progress export``: the gradebook as CSV and JSON, read from the store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from qkv.cli.progress import progress
from qkv.lessons import load_catalog
from qkv.store import Store
from qkv.web.instructor.exports import GRADEBOOK_COLUMNS

ALICE = "a" * 36
BOB = "b" * 36


@pytest.fixture
def filled_url(database_url: str) -> str:
    store = Store(database_url)
    store.learners.set_display_name(ALICE, "Alice")
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 1", correct=False, message="No.")
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    store.code.record(
        ALICE, "L4.1", "functions", "src", {"status": "pass", "tests": [{"status": "pass"}] * 4}
    )
    store.progress.record_answer(BOB, "L4.1", "quiz", "B", correct=False, message="No.")
    store.close()
    return database_url


def test_csv_has_one_row_per_learner_and_exercise(filled_url: str) -> None:
    result = CliRunner().invoke(progress, ["export", "--database-url", filled_url])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == GRADEBOOK_COLUMNS
    # Every exercise of every written lesson, in teaching order, for each learner.
    exercises = [(lesson.id, e) for lesson in load_catalog().lessons for e in lesson.exercises]
    assert exercises[1:5] == [("L4.1", "q"), ("L4.1", "k"), ("L4.1", "v"), ("L4.1", "averaged")]
    assert [(r["learner_id"], r["lesson_id"], r["exercise_id"]) for r in rows] == [
        (ALICE, *e) for e in exercises
    ] + [(BOB, *e) for e in exercises]
    by_key = {(r["learner_id"], r["exercise_id"]): r for r in rows if r["lesson_id"] == "L4.1"}
    q = by_key[(ALICE, "q")]
    assert (q["display_name"], q["attempts"], q["solved"]) == ("Alice", "2", "True")
    assert by_key[(ALICE, "functions")]["best_score"] == "4/4"
    assert (by_key[(ALICE, "k")]["attempts"], by_key[(ALICE, "k")]["last_activity_at"]) == ("0", "")
    assert by_key[(BOB, "quiz")]["solved"] == "False"


def test_json_holds_the_same_rows(filled_url: str) -> None:
    result = CliRunner().invoke(progress, ["export", "--format", "json", "--database-url", filled_url])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 2 * sum(len(lesson.exercises) for lesson in load_catalog().lessons)
    first = rows[1]
    assert set(first) == set(GRADEBOOK_COLUMNS)
    assert (first["learner_id"], first["exercise_id"], first["attempts"], first["solved"]) == (
        ALICE,
        "q",
        2,
        True,
    )
    assert first["first_solved_at"].endswith("Z")


def test_a_missing_database_is_a_sentence_not_a_new_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite3"
    result = CliRunner().invoke(progress, ["export", "--database-url", f"sqlite:///{missing}"])
    assert result.exit_code == 1
    assert f"Error: There is no qkv database at {missing}; nothing has been saved there yet." in result.output
    assert not missing.exists()


def test_an_empty_database_prints_the_header_and_says_so(sqlite_url: str) -> None:
    Store(sqlite_url).close()
    result = CliRunner().invoke(progress, ["export", "--database-url", sqlite_url])
    assert result.exit_code == 0
    assert result.stdout_bytes == (",".join(GRADEBOOK_COLUMNS) + "\r\n").encode()  # RFC 4180 line ends
    assert "No learner has saved any work yet." in result.stderr
