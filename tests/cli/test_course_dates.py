"""``qkv courses due | dates | extend | extensions | unextend`` (issue 46): stored in UTC, shown in the course's
time zone, bad input refused with a sentence naming it."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner, Result

from qkv.cli import build
from qkv.store import MembershipSource, Store

ADA = "a" * 36


def run(*args: str) -> Result:
    return CliRunner().invoke(build(), list(args))  # type: ignore[arg-type]


def _course(url: str) -> str:
    made = run("courses", "create", "Attention 101", "--database-url", url)
    return re.search(r"with the id ([0-9a-f-]{36})\.", made.output).group(1)  # type: ignore[union-attr]


def test_due_dates_are_stored_in_utc_and_shown_in_the_courses_zone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    course = _course(url)
    args = ("--late-credit", "0.5", "--timezone", "Europe/Paris", "--database-url", url)
    set_due = run("courses", "due", course, "L4.1", "2026-12-24 17:00", "--close", "2026-12-26 17:00", *args)
    assert set_due.exit_code == 0, set_due.output
    assert "L4.1 is due 2026-12-24 17:00 CET, closes 2026-12-26 17:00 CET; late work counts at 0.5." in (
        set_due.output
    )
    store = Store(url)
    try:
        due = store.due_dates.due(course, "L4.1")
        assert due is not None and due.due_at == datetime(2026, 12, 24, 16, 0)  # UTC
        assert due.close_at == datetime(2026, 12, 26, 16, 0)
        store.courses.enrol(course, ADA, MembershipSource.ROSTER)
    finally:
        store.close()
    listed = run("courses", "dates", course, "--database-url", url)
    assert (
        "L4.1  due 2026-12-24 17:00 CET  closes 2026-12-26 17:00 CET  late work counts at 0.5"
        in listed.output
    )
    extended = run("courses", "extend", course, ADA, "L4.1", "--days", "2", "--database-url", url)
    assert extended.exit_code == 0, extended.output
    assert f"{ADA} now has L4.1 due 2026-12-26 17:00 CET, closing 2026-12-28 17:00 CET." in extended.output
    listing = run("courses", "extensions", course, "--database-url", url)
    assert f"{ADA}  (no name)  L4.1  until 2026-12-26 17:00 CET" in listing.output
    until = run(
        "courses", "extend", course, ADA, "L4.1", "--until", "2026-12-25 09:00", "--database-url", url
    )
    assert "now has L4.1 due 2026-12-25 09:00 CET" in until.output
    revoked = run("courses", "unextend", course, ADA, "L4.1", "--database-url", url)
    assert revoked.exit_code == 0 and "Revoked" in revoked.output
    assert (
        "No learner of this course has an extension."
        in run("courses", "extensions", course, "--database-url", url).output
    )
    again = run("courses", "unextend", course, ADA, "L4.1", "--database-url", url)
    assert again.exit_code == 1 and "has no extension of 'L4.1'" in again.output
    cleared = run("courses", "due", course, "L4.1", "--clear", "--database-url", url)
    assert "no more due date" in cleared.output
    assert (
        "No lesson of this course has a due date"
        in run("courses", "dates", course, "--database-url", url).output
    )


def test_bad_input_gets_a_sentence_naming_the_value(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    course = _course(url)
    db = ("--database-url", url)
    cases = {
        (
            "courses",
            "due",
            course,
            "L4.1",
            "next friday",
            *db,
        ): "'next friday' is not a date and time qkv can read",
        ("courses", "due", course, "L4.1", "2026-12-24 17:00", "--close", "2026-12-23", *db): (
            "must not come before the due date"
        ),
        ("courses", "due", course, "L4.1", "2026-12-24", "--late-credit", "2", *db): "not 2.0",
        (
            "courses",
            "due",
            course,
            "L4.1",
            "2026-12-24",
            "--timezone",
            "Mars/Base",
            *db,
        ): "'Mars/Base' is not a time zone",
        ("courses", "due", "nope", "L4.1", "2026-12-24", *db): "There is no course with the id 'nope'",
        ("courses", "due", course, "Z9.9", "2026-12-24", *db): "Z9.9",
        (
            "courses",
            "extend",
            course,
            ADA,
            "L4.1",
            "--days",
            "2",
            *db,
        ): f"The learner {ADA!r} is not in this course",
    }
    for args, sentence in cases.items():
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        assert sentence in result.output and "Traceback" not in result.output, (args, result.output)
    store = Store(url)
    try:
        store.courses.enrol(course, ADA, MembershipSource.ROSTER)
    finally:
        store.close()
    nothing = run("courses", "extend", course, ADA, "L4.1", "--days", "2", *db)
    assert nothing.exit_code == 1 and "has no due date in this course" in nothing.output
    assert run("courses", "due", course, "L4.1", "2026-12-24 17:00", "--timezone", "UTC", *db).exit_code == 0
    both = run("courses", "extend", course, ADA, "L4.1", "--days", "2", "--until", "2026-12-30", *db)
    assert both.exit_code == 1 and "one of them" in both.output
    zero = run("courses", "extend", course, ADA, "L4.1", "--days", "0", *db)
    assert zero.exit_code == 1 and "not 0" in zero.output
    early = run("courses", "extend", course, ADA, "L4.1", "--until", "2026-12-20", *db)
    assert early.exit_code == 1 and "must end after the due date" in early.output


def test_progress_export_names_a_course_it_does_not_know(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    _course(url)
    done = run("progress", "export", "--course", "no-such-course", "--database-url", url)
    assert done.exit_code != 0
    assert "There is no course 'no-such-course'; 'qkv courses list' shows them." in done.output
    assert "Traceback" not in done.output
