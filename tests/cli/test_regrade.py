"""``qkv regrade`` (issue 46): every verdict records its suite version; after a change to a lesson's tests a
regrade turns the affected verdicts, and no other, stores the changes, sets the totals again and queues the
changed LMS scores only. Real sandbox, the test chapter of tests/sample_lessons copied and then edited."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from qkv.cli import build
from qkv.grading import Grader
from qkv.lessons import load_catalog
from qkv.lessons.suite_versions import suite_version
from qkv.store import Store
from qkv.store.lti.links import LtiLinks
from qkv.store.lti.outbox import ScoreOutbox

SAMPLE = Path(__file__).parents[1] / "sample_lessons" / "T1"
GOOD = (
    "def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('negative')\n    return w * h\n\n\n"
    "def perimeter(w, h):\n    return 2 * (w + h)\n"
)
NO_SIGN_CHECK = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
HALF_WAY = GOOD.replace("2 * (w + h)", "w + h")
ADA, ALAN, GRACE = "a" * 36, "b" * 36, "c" * 36
NEGATIVE_TEST = """        TestCase(
            "area raises ValueError for a negative side",
            "area",
            (-2, 5),
            check_raises(area, Raises("ValueError", "a side is negative")),
            hints=[Returned(NO_SIGN_CHECK), Raised(ASSERTED, "AssertionError")],
        ),
"""


@pytest.fixture(autouse=True)
def _own_live_gradings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """These regrades wait for gaps in this test's gradings only, not in other test processes'."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))


def run(*args: str) -> Result:
    return CliRunner().invoke(build(), list(args))  # type: ignore[arg-type]


def _graded_work(content: Path, url: str, *, ada_hinted: bool = False) -> str:
    """Three learners' programs graded by today's suite and stored with its version (Ada shown a hint
    first when ``ada_hinted``); that version."""
    catalog = load_catalog(content)
    exercise = catalog.code_exercise("T1.1/shapes")
    version = suite_version(exercise.lesson)
    store = Store(url)
    try:
        with Grader(warm_spares=0, zygote=False) as grader:
            for learner, program in ((ADA, NO_SIGN_CHECK), (ALAN, HALF_WAY), (GRACE, GOOD)):
                if learner == ADA and ada_hinted:  # she failed once, saw a hint, then sent this program
                    store.code.record(learner, "T1.1", "shapes", "x = 1\n", {"status": "fail", "tests": []})
                    store.code.help_shown(ADA, "T1.1", "shapes", 1)
                result = grader.grade(program, exercise.suite).to_dict()
                store.code.record(learner, "T1.1", "shapes", program, {**result, "suite_version": version})
        links = LtiLinks(store.database)
        for learner in (ADA, ALAN):  # both launched from an LMS: only a changed score may be queued
            links.remember_line_item(
                learner, "T1.1", "https://lms", "c", f"sub-{learner[0]}", "https://lms/li/1"
            )
        statuses = ["fail", "fail", "pass"]
        assert [p.status for p in store.regrades.programs()] == ["fail"] * ada_hinted + statuses
    finally:
        store.close()
    return version


def _drop_the_negative_test(content: Path) -> None:
    grading = content / "T1" / "T1.1-rectangles" / "grading.py"
    text = grading.read_text(encoding="utf-8")
    assert NEGATIVE_TEST in text
    grading.write_text(text.replace(NEGATIVE_TEST, ""), encoding="utf-8")  # the author drops a test


@pytest.mark.sandbox
@pytest.mark.timeout(300)
def test_a_suite_change_then_regrade_turns_the_affected_verdicts_and_no_other(tmp_path: Path) -> None:
    content = tmp_path / "content"
    shutil.copytree(SAMPLE, content / "T1")
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    old = _graded_work(content, url)
    _drop_the_negative_test(content)
    new = suite_version(load_catalog(content).lesson("T1.1"))
    assert new != old
    store = Store(url)
    try:
        assert store.regrades.older_counts({"T1.1": new}) == {"T1.1": 3}
        assert store.regrades.older_counts({"T1.1": old}) == {"T1.1": 0}
    finally:
        store.close()
    nice_before = os.nice(0)
    dry = run("regrade", "--content", str(content), "--dry-run", "--database-url", url)
    assert dry.exit_code == 0, dry.output
    assert os.nice(0) == nice_before  # the background priority was the regrading thread's, not ours
    assert f"T1.1/shapes, learner {ADA[:8]}, program 1: fail → pass" in dry.output
    assert (
        "Regraded 3 programs: 1 would change (1 pass/fail turned, 0 with another first message)" in dry.output
    )
    store = Store(url)
    try:  # a dry run stores nothing
        assert [p.status for p in store.regrades.programs()] == ["fail", "fail", "pass"]
        assert store.regrades.changes() == [] and ScoreOutbox(store.database).waiting() == []
    finally:
        store.close()
    done = run("regrade", "--content", str(content), "--database-url", url)
    assert done.exit_code == 0, done.output
    assert f"learner {ADA[:8]}, program 1: fail → pass" in done.output
    assert ALAN[:8] not in done.output and GRACE[:8] not in done.output
    assert "1 changed (1 pass/fail turned, 0 with another first message); 1 LMS score queued." in done.output
    store = Store(url)
    try:
        assert [(p.status, p.suite_version) for p in store.regrades.programs()] == [
            ("pass", new),
            ("fail", new),
            ("pass", new),
        ]
        (change,) = store.regrades.changes()
        assert (change.learner_id, change.before_status, change.after_status) == (ADA, "fail", "pass")
        rows = {row.learner_id: row for row in store.gradebook.rows()}
        assert rows[ADA].solved and not rows[ALAN].solved and rows[GRACE].solved
        assert store.regrades.older_counts({"T1.1": new}) == {"T1.1": 0}
        (queued,) = ScoreOutbox(store.database).waiting()
        assert queued.learner_id == ADA  # Alan's score did not change: nothing queued for him
    finally:
        store.close()


@pytest.mark.sandbox
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("setting", "earned"), [((), 1), (("--after-hint-credit", "none"), 0)])
def test_regrade_sends_the_lms_scores_with_the_servers_help_credits(
    tmp_path: Path, setting: tuple[str, ...], earned: int
) -> None:
    # Ada saw a hint before her program; the regrade turns it to a pass: a solve after hints, which earns
    # what the server's --after-hint-credit says (full by default, as qkv serve's), never the default alone.
    content = tmp_path / "content"
    shutil.copytree(SAMPLE, content / "T1")
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    _graded_work(content, url, ada_hinted=True)
    _drop_the_negative_test(content)
    done = run("regrade", "--content", str(content), *setting, "--database-url", url)
    assert done.exit_code == 0, done.output
    store = Store(url)
    try:
        (queued,) = ScoreOutbox(store.database).waiting()
        assert queued.learner_id == ADA and queued.document["scoreGiven"] == earned
        assert store.gradebook.rows()[0].solved
    finally:
        store.close()
    wrong = run("regrade", "--after-solution-credit", "some", "--database-url", url)
    assert wrong.exit_code == 2 and "'some' is not one of 'full', 'reduced', 'none'" in wrong.output


def test_regrade_refuses_an_unknown_lesson_or_course(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    lesson = run("regrade", "--lesson", "Z9.9", "--database-url", url)
    assert lesson.exit_code == 1 and "Z9.9" in lesson.output and "Traceback" not in lesson.output
    course = run("regrade", "--course", "nope", "--database-url", url)
    assert course.exit_code == 1 and "There is no course with the id 'nope'" in course.output
    empty = run("regrade", "--latest-only", "--database-url", url)
    assert empty.exit_code == 0 and "Regraded 0 programs: 0 changed" in empty.output


# A right program that loops where it finds itself at a background nice value (a stand-in for a machine so
# busy that a sandbox in the background runs out of time), and one that loops wherever it runs.
LOOPS_IN_THE_BACKGROUND = (
    GOOD + "\nimport os\n\nif os.getpriority(os.PRIO_PROCESS, 0) > 0:\n    while True:\n        pass\n"
)
ALWAYS_LOOPS = GOOD + "\nwhile True:\n    pass\n"


@pytest.mark.sandbox
@pytest.mark.timeout(300)
def test_a_verdict_that_ran_out_of_time_in_the_background_counts_only_once_graded_at_normal_priority(
    tmp_path: Path,
) -> None:
    content = tmp_path / "content"
    shutil.copytree(SAMPLE, content / "T1")
    grading = content / "T1" / "T1.1-rectangles" / "grading.py"
    text = grading.read_text(encoding="utf-8")
    assert "    ],\n)\n\nSUITES" in text
    grading.write_text(text.replace("    ],\n)\n\nSUITES", "    ],\n    time_limit_s=1.0,\n)\n\nSUITES"))
    url = f"sqlite:///{tmp_path / 'school.sqlite3'}"
    store = Store(url)
    try:
        for learner, program in ((ADA, LOOPS_IN_THE_BACKGROUND), (ALAN, ALWAYS_LOOPS)):
            kept = {"status": "pass", "tests": [], "suite_version": "an older one"}
            store.code.record(learner, "T1.1", "shapes", program, kept)
    finally:
        store.close()
    done = run("regrade", "--content", str(content), "--database-url", url)
    assert done.exit_code == 0, done.output
    assert "2 programs ran out of time in the background" in done.output
    assert f"learner {ALAN[:8]}, program 2: pass → error" in done.output  # too slow at any priority
    assert ADA[:8] not in done.output  # out of time only in the background: her verdict stands
    assert "Regraded 2 programs: 1 changed (1 pass/fail turned" in done.output
    store = Store(url)
    try:
        statuses = {p.learner_id: p.status for p in store.regrades.programs()}
        assert statuses == {ADA: "pass", ALAN: "error"}
    finally:
        store.close()
