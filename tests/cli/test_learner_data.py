"""``qkv learners export`` / ``erase``: a learner's data on request, as an operator runs it, on SQLite and
PostgreSQL (the store's database fixtures)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from qkv.store import Store
from tests.store.conftest import (  # noqa: F401  (fixtures)
    database_url,
    postgres_admin_url,
    postgres_url,
    sqlite_url,
)


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "qkv", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, input=stdin)


def _seed(url: str) -> tuple[str, str]:
    store = Store(url)
    try:
        ada = store.accounts.find_or_create(None, "s-1", "Ada")
        store.accounts.open_session(ada)
        store.progress.record_answer(ada, "L9.1", "area", "12", correct=True, message="Yes.")
        store.code.save_draft(ada, "L9.1", "code", "def f(): pass")
        bea = "b" * 36
        store.progress.record_answer(bea, "L9.1", "area", "11", correct=False, message="No.")
        return ada, bea
    finally:
        store.close()


def test_export_writes_everything_as_private_json_by_id_or_external_id(
    database_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    ada, _ = _seed(database_url)
    out = tmp_path / "ada.json"
    done = run("learners", "export", "s-1", "--out", str(out), "--database-url", database_url)
    assert done.returncode == 0, done.stderr
    assert f"about the learner {ada} to {out}" in done.stdout
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    document = json.loads(out.read_text(encoding="utf-8"))
    tables = document["tables"]
    assert tables["learners"][0]["display_name"] == "Ada" and tables["learners"][0]["external_id"] == "s-1"
    assert [row["answer"] for row in tables["answers"]] == ["12"]
    assert len(tables["learner_sessions"]) == 1 and len(tables["code_drafts"]) == 1
    by_id = run("learners", "export", ada, "--database-url", database_url)
    assert by_id.returncode == 0 and json.loads(by_id.stdout)["learner_id"] == ada
    missing = run("learners", "export", "s-9", "--database-url", database_url)
    assert missing.returncode == 1 and "No learner has the id or external id 's-9'" in missing.stderr


def test_erase_asks_first_then_removes_everything_and_notes_it(
    database_url: str,  # noqa: F811
) -> None:
    ada, bea = _seed(database_url)
    kept = run("learners", "erase", "s-1", "--database-url", database_url, stdin="n\n")
    assert kept.returncode == 1 and "Aborted" in kept.stderr
    done = run("learners", "erase", "s-1", "--database-url", database_url, "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Erased the learner {ada}:" in done.stdout and "learner_sessions 1" in done.stdout
    store = Store(database_url)
    try:
        assert store.personal_data.export(ada) is None and store.accounts.find(None, "s-1") is None
        assert store.personal_data.export(bea) is not None
        assert [line["action"] for line in store.personal_data.audit(ada)] == ["erase"]
    finally:
        store.close()
    again = run("learners", "erase", ada, "--database-url", database_url, "--yes")
    assert again.returncode == 1 and f"No learner has the id or external id {ada!r}" in again.stderr


def test_help_names_export_and_erase() -> None:
    done = run("learners", "--help")
    assert "export" in done.stdout and "erase" in done.stdout
