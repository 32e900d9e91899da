"""``qkv instructor`` and the class exports of ``qkv progress export``, as a teacher runs them."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

from qkv.store import Store


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkv", *args], capture_output=True, text=True, timeout=120)


def test_add_prints_a_one_time_link_that_signs_in(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    added = run("instructor", "add", "Grace Hopper", "--database-url", url, "--url", "https://qkv.example/")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Created the instructor Grace Hopper.\n")
    found = re.search(r"https://qkv\.example/instructor/sign-in#token=([A-Za-z0-9_-]+)\n", added.stdout)
    assert found, added.stdout
    again = run("instructor", "add", "Grace Hopper", "--database-url", url)
    assert again.returncode == 1
    assert "An instructor named 'Grace Hopper' already exists" in again.stderr
    link = run("instructor", "link", "Grace Hopper", "--database-url", url)
    assert link.returncode == 0 and "http://127.0.0.1:8000/instructor/sign-in#token=" in link.stdout
    listed = run("instructor", "list", "--database-url", url)
    assert listed.stdout.startswith("Grace Hopper  (since ")
    store = Store(url)
    try:
        desk = store.instructors
        session = desk.redeem(found.group(1))
        assert desk.instructor_for_session(session) is not None
        removed = run("instructor", "remove", "Grace Hopper", "--database-url", url)
        assert removed.returncode == 0
        assert desk.instructor_for_session(session) is None
    finally:
        store.close()
    missing = run("instructor", "remove", "Grace Hopper", "--database-url", url)
    assert missing.returncode == 1 and "There is no instructor named 'Grace Hopper'" in missing.stderr


def test_progress_export_writes_the_lms_and_event_files(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    store = Store(url)
    learner = "e" * 36
    store.progress.record_answer(learner, "L9.1", "q", "=1+2", correct=False, message="-wrong", mistake="sum")
    store.learners.set_display_name(learner, "@Ada")
    store.close()
    events = run("progress", "export", "--format", "events", "--database-url", url)
    assert events.returncode == 0, events.stderr
    (row,) = list(csv.DictReader(io.StringIO(events.stdout)))
    assert (row["answer"], row["message"], row["display_name"], row["mistake"]) == (
        "'=1+2",
        "'-wrong",
        "'@Ada",
        "sum",
    )
    lms = run("progress", "export", "--format", "lms", "--database-url", url)
    assert lms.returncode == 0, lms.stderr
    header, line = lms.stdout.splitlines()
    assert header.startswith("learner_id,display_name,") and re.search(r",total \(out of \d+\)$", header)
    assert line.startswith(f"{learner},'@Ada,") and line.endswith(",0")


def test_progress_export_has_each_hint_as_an_event_and_credits_a_solve_after_hints(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    store = Store(url)
    learner = "f" * 36
    store.code.record(
        learner, "L4.1", "functions", "x = 1\n", {"status": "fail", "tests": [{"status": "fail"}]}
    )
    store.code.help_shown(learner, "L4.1", "functions", 1)
    store.code.record(learner, "L4.1", "functions", "x = 2\n", {"status": "pass", "tests": []})
    store.close()
    events = run("progress", "export", "--format", "events", "--database-url", url)
    assert events.returncode == 0, events.stderr
    rows = list(csv.DictReader(io.StringIO(events.stdout)))
    assert [(row["event"], row["hint_number"]) for row in rows] == [
        ("program", ""),
        ("hint", "1"),
        ("program", ""),
    ]
    scores = {}
    for credit in ("full", "reduced", "none"):
        lms = run(
            "progress", "export", "--format", "lms", "--after-hint-credit", credit, "--database-url", url
        )
        assert lms.returncode == 0, lms.stderr
        (row,) = list(csv.DictReader(io.StringIO(lms.stdout)))
        scores[credit] = next(value for name, value in row.items() if name.startswith("L4.1 "))
    assert scores == {"full": "1", "reduced": "0.5", "none": "0"}
    gradebook = run("progress", "export", "--format", "json", "--database-url", url)
    (row,) = [
        r for r in json.loads(gradebook.stdout) if (r["lesson_id"], r["exercise_id"]) == ("L4.1", "functions")
    ]
    assert (row["hints_shown"], row["solved_after_hints"]) == (1, True)
    wrong = run("progress", "export", "--format", "lms", "--after-hint-credit", "some", "--database-url", url)
    assert wrong.returncode == 2 and "'some' is not one of 'full', 'reduced', 'none'" in wrong.stderr


def test_help_lists_the_instructor_command() -> None:
    result = run("--help")
    assert "  instructor " in result.stdout
