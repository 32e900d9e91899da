"""A term on the fake LMSs (issue 46): due, extended, late and closed work credited alike by the LMS score
(Moodle-like and Canvas-like gradebooks), the class grid and every export, with a clock the test moves.

L4.1 is due a day after the term starts, closes two days later, and late work counts at half. Ada solves on
time; two days later Grace solves late, and Alan, whose extension runs four days, on time; five days in,
Edsger solves after the close. Each score carries the time of the work as its timestamp and says "late"
(or "after the lesson closed") in its comment; each number is the same everywhere.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from qkv.cli import build
from qkv.store import LearnerScope, StaffRole
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.sql.clock import use_clock
from tests.term_clock import TermClock, term_clock
from tests.web.backend_fixtures import sign_in_instructor
from tests.web.lti.fake_platform import CONTEXT_ID, DEPLOYMENT_ID, FakePlatform
from tests.web.lti.launching import LmsBrowser, solvable, wait_for

PEOPLE = {"learner-1": "Ada", "learner-2": "Alan", "learner-3": "Grace", "learner-4": "Edsger"}
# What each earns on L4.1 (one exercise solved), and whether it is marked late, everywhere.
EXPECTED = {"Ada": (1, False), "Alan": (1, False), "Grace": (0.5, True), "Edsger": (0, True)}


def _launch(platform: FakePlatform, url: str, sub: str) -> tuple[LmsBrowser, str]:
    browser = LmsBrowser(url)
    page = browser.open(browser.launch(platform, f"{url}/lessons/L4.1", sub))
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token, page.text[:500]
    return browser, token.group(1)


def _solve(browser: LmsBrowser, url: str, token: str, app: Any) -> dict[str, Any]:
    exercise, right = solvable(app)
    answer = browser.client.post(
        f"{url}/api/lessons/L4.1/answers",
        json={"exercise_id": exercise, "answer": right},
        headers={"X-CSRF-Token": token},
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["progress"])


def _last_scores(platform: FakePlatform) -> dict[str, dict[str, Any]]:
    return {PEOPLE[s["userId"]]: s for s in platform.received("L4.1")}


def _term(platform: FakePlatform, url: str, app: Any, clock: TermClock) -> tuple[str, dict[str, datetime]]:
    """The story above; the course's id and each learner's time of work."""
    store = app.state.qkv.store
    course = store.courses.for_lti_context(platform.issuer, DEPLOYMENT_ID, CONTEXT_ID, "Attention").id
    start = clock()
    store.due_dates.set_due(course, "L4.1", start + timedelta(days=1), start + timedelta(days=3), 0.5)
    for sub, name in PEOPLE.items():
        platform.add_user(sub, name)
    opened = {name: _launch(platform, url, sub) for sub, name in PEOPLE.items()}
    wait_for(lambda: len(_last_scores(platform)) == 4, "each launch's starting score")
    (alan,) = [
        r.id for r in store.instructors.within(LearnerScope(course)).learners() if r.display_name == "Alan"
    ]
    store.due_dates.extend(course, alan, "L4.1", start + timedelta(days=4))
    worked: dict[str, datetime] = {}
    for name, days in (("Ada", 0), ("Grace", 2), ("Alan", 0), ("Edsger", 3)):
        if days:
            clock.advance(days=days)
        browser, token = opened[name]
        worked[name] = clock()
        _solve(browser, url, token, app)
    for browser, _ in opened.values():
        browser.close()
    return course, worked


def _instructor(app: Any, course: str) -> TestClient:
    store = app.state.qkv.store
    instructor, token = store.instructors.add("Turing")
    store.courses.set_staff(course, instructor.id, StaffRole.INSTRUCTOR)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    return client


def _lesson_column(rows: list[dict[str, str]]) -> str:
    return next(key for key in rows[0] if key.startswith("L4.1 "))


def _check_exports(client: TestClient, database_url: str, course: str) -> None:
    """The gradebook (CSV, JSON), the LMS file and the events, from the view and from qkv progress export."""

    def from_view(name: str, fmt: str) -> str:
        return client.get(f"/instructor/export/{name}").text

    def from_cli(name: str, fmt: str) -> str:
        args = ["progress", "export", "--format", fmt, "--course", course, "--database-url", database_url]
        done = CliRunner().invoke(build(), args)  # type: ignore[arg-type]
        assert done.exit_code == 0, done.output
        return done.stdout

    for source, read in (("view", from_view), ("cli", from_cli)):
        rows = [r for r in csv.DictReader(io.StringIO(read("gradebook.csv", "csv"))) if r["solved"] == "True"]
        marks = {r["display_name"]: (r["late"], r["late_credit"]) for r in rows}
        late = {
            name: (str(is_late), str(float(credit) if is_late else 1.0))
            for name, (credit, is_late) in EXPECTED.items()
        }
        assert marks == late, source
        records = json.loads(read("gradebook.json", "json"))
        solved = {r["display_name"]: r["late"] for r in records if r["solved"]}
        assert solved == {name: is_late for name, (_, is_late) in EXPECTED.items()}, source
        lms = list(csv.DictReader(io.StringIO(read("lms.csv", "lms"))))
        column = _lesson_column(lms)
        assert {r["display_name"]: r[column] for r in lms} == {
            name: str(score) for name, (score, _) in EXPECTED.items()
        }, source
        events = list(csv.DictReader(io.StringIO(read("events.csv", "events"))))
        due = {e["display_name"]: e["due_at"] for e in events if e["lesson_id"] == "L4.1"}
        assert due["Alan"] > due["Ada"] == due["Grace"] == due["Edsger"], source  # his extension's date


@pytest.mark.parametrize("mode", ["moodle", "canvas"])
def test_a_term_is_credited_alike_by_the_lms_the_grid_and_every_export(
    lms: tuple[FakePlatform, str, Any], mode: str
) -> None:
    platform, url, app = lms
    platform.mode = mode
    with term_clock() as clock:
        course, worked = _term(platform, url, app, clock)
        wait_for(
            lambda: all(s["activityProgress"] != "Started" for s in _last_scores(platform).values()),
            "the four solves' scores",
        )
        scores = _last_scores(platform)
        solved_at = {
            r.display_name: r.first_solved_at for r in app.state.qkv.store.gradebook.rows() if r.solved
        }
        for name, (credit, _) in EXPECTED.items():
            assert scores[name]["scoreGiven"] == credit, name
            assert platform.grade("L4.1", next(s for s, n in PEOPLE.items() if n == name)) == credit, name
            # The time of the work, to the second, on the term's clock (Ada's may be a second after her
            # launch's score, which Moodle needs strictly older).
            at = datetime.fromisoformat(scores[name]["timestamp"]).replace(tzinfo=None)
            assert at >= worked[name].replace(microsecond=0), name
            if name != "Ada":
                assert at == solved_at[name].replace(microsecond=0), name
        assert "late" not in scores["Ada"].get("comment", "") and "late" not in scores["Alan"].get(
            "comment", ""
        )
        assert scores["Grace"]["comment"] == "1 exercise solved late (counts at half)."
        assert scores["Edsger"]["comment"] == "1 exercise solved after the lesson closed (earns nothing)."
        assert scores["Edsger"]["activityProgress"] == "Submitted"  # handed in, though it earns nothing
        assert app.state.qkv_lti.outbox.parked() == []  # Moodle and Canvas took every score
        client = _instructor(app, course)
        grid = client.get("/api/instructor/class").json()["rows"]
        cells = {row["display_name"]: row["cells"] for row in grid}
        for name, (credit, is_late) in EXPECTED.items():
            (cell,) = [c for c in cells[name] if c["lesson_id"] == "L4.1"]
            assert (cell["solved"], cell["late"] + cell["closed"] > 0) == (credit, is_late), name
        assert [c["closed"] for c in cells["Edsger"] if c["lesson_id"] == "L4.1"] == [1]
        page = client.get("/instructor/class", headers={"accept": "text/html"}).text
        assert "1 late (counts at half)" in page and "1 after the close (earns nothing)" in page
        _check_exports(client, str(app.state.qkv.settings.database_url), course)


def test_a_score_queued_later_carries_the_time_of_the_work(lms: tuple[FakePlatform, str, Any]) -> None:
    """A score queued an hour after the work (a launch, a regrade) is stamped with the work's time."""
    from qkv.store.lti.links import LtiLinks
    from qkv.web.lti.scores import ScoreHook, queue_lesson_score
    from qkv.web.solution_credit import HelpPolicy

    _platform, _url, app = lms
    store = app.state.qkv.store
    hook = ScoreHook(LtiLinks(store.database), ScoreOutbox(store.database))
    hook.links.remember_line_item("b" * 36, "L4.1", "i", "c", "sub-9", "https://lms.example/li/9")
    progress = {"done": 1, "total": 4, "solves": [{"helped": "", "solved_at": "2030-01-02T03:04:05.678Z"}]}
    with use_clock(lambda: datetime(2030, 1, 2, 4, 4, 5)):
        assert queue_lesson_score(hook, store.due_dates, "b" * 36, "L4.1", progress, HelpPolicy())
    (entry,) = [e for e in hook.outbox.waiting() if e.learner_id == "b" * 36]
    assert entry.document["timestamp"] == "2030-01-02T03:04:05+00:00"
    assert entry.created_at == datetime(2030, 1, 2, 4, 4, 5)  # queued an hour later
