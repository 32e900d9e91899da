"""``qkv courses``, ``qkv learners import --course`` and ``qkv instructor ... --course | --all-courses``."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner, Result

from qkv.cli import build
from qkv.store import LearnerScope, StaffRole, Store


def run(*args: str) -> Result:
    command = build()
    return CliRunner().invoke(command, list(args))  # type: ignore[arg-type]


def test_courses_rosters_and_instructors_by_course(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    assert "No courses yet" in run("courses", "list", "--database-url", url).output
    # No course on the server: an instructor without --course sees every learner, as before courses.
    assert run("instructor", "add", "Owner", "--database-url", url).exit_code == 0
    made = run("courses", "create", "Attention 101", "--database-url", url)
    assert made.exit_code == 0, made.output
    course_id = re.search(r"with the id ([0-9a-f-]{36})\.", made.output).group(1)  # type: ignore[union-attr]
    listed = run("courses", "list", "--database-url", url)
    assert f"{course_id}  manual  0 learners  Attention 101" in listed.output
    # Now the server has a course: a roster and an instructor must say which one.
    roster = tmp_path / "roster.csv"
    roster.write_text("name,external id\nAda Lovelace,s-1\nAlan Turing,s-2\n", encoding="utf-8")
    refused = run("learners", "import", str(roster), "--database-url", url)
    assert (
        refused.exit_code == 1 and "This server has courses: say which one the roster fills" in refused.output
    )
    unknown = run("learners", "import", str(roster), "--course", "nope", "--database-url", url)
    assert unknown.exit_code == 1 and "There is no course with the id 'nope'" in unknown.output
    imported = run("learners", "import", str(roster), "--course", course_id, "--database-url", url)
    assert imported.exit_code == 0, imported.output
    assert "2 learners" in run("courses", "list", "--database-url", url).output
    assert run("instructor", "add", "Grace", "--database-url", url).exit_code == 1
    both = run("instructor", "add", "Grace", "--course", course_id, "--all-courses", "--database-url", url)
    assert both.exit_code == 1 and "not both" in both.output
    grace = run("instructor", "add", "Grace", "--course", course_id, "--database-url", url)
    assert grace.exit_code == 0 and "Grace is instructor of the course 'Attention 101'." in grace.output
    alan = run(
        "instructor",
        "add",
        "Alan",
        "--course",
        course_id,
        "--role",
        "teaching-assistant",
        "--database-url",
        url,
    )
    assert alan.exit_code == 0 and "teaching assistant" in alan.output
    admin = run("instructor", "add", "Dean", "--all-courses", "--database-url", url)
    assert admin.exit_code == 0 and "every course of the server" in admin.output
    store = Store(url)
    try:
        members = {r.display_name for r in store.instructors.within(LearnerScope(course_id)).learners()}
        assert members == {"Ada Lovelace", "Alan Turing"}
        access = {
            name: store.courses.access(store.instructors.find(name).id) for name in ("Grace", "Alan", "Dean")
        }  # type: ignore[union-attr]
        assert access["Grace"].role_in(course_id) is StaffRole.INSTRUCTOR
        assert access["Alan"].role_in(course_id) is StaffRole.TEACHING_ASSISTANT
        assert access["Dean"].all_courses
    finally:
        store.close()
    # link --course gives an existing instructor a course.
    linked = run("instructor", "link", "Owner", "--course", course_id, "--database-url", url)
    assert linked.exit_code == 0 and "Owner is instructor of the course" in linked.output
