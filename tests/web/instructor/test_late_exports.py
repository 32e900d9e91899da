"""Late work in the instructor's exports (issue 46): the gradebook (CSV, JSON) marks each late solve and its
credit, the LMS file weighs it, the events file has the due date in force per event; an extension makes a
solve on time, a close makes it earn nothing; a course without dates exports the files as before."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.store import MembershipSource, StaffRole
from qkv.store.sql.clock import utc_now
from qkv.web.instructor.exports import GRADEBOOK_COLUMNS
from qkv.web.instructor.late_work import LateWork
from tests.term_clock import term_clock
from tests.web.backend_fixtures import CORRECT_SOLUTION, Browser, learner_id_of, sign_in_instructor


def _class(app: FastAPI, *, dated: bool) -> tuple[TestClient, dict[str, str]]:
    """Ada (late: her extension ended, her close not yet), Alan (extended: on time) and Grace (after the
    close) each solve L4.1's q now."""
    store = app.state.qkv.store
    course = store.courses.create("Attention 101").id
    people = {}
    for name, external in (("Ada", "s-1"), ("Alan", "s-2"), ("Grace", "s-3")):
        learner = store.accounts.find_or_create(None, external, name)
        store.courses.enrol(course, learner, MembershipSource.ROSTER)
        people[name] = learner
    now = utc_now()
    if dated:  # due two days ago, closed yesterday; Ada's extension ends just before now, Alan's in two days
        store.due_dates.set_due(course, "L4.1", now - timedelta(days=2), now - timedelta(days=1), 0.5)
        store.due_dates.extend(course, people["Ada"], "L4.1", now - timedelta(hours=2))
        store.due_dates.extend(course, people["Alan"], "L4.1", now + timedelta(days=2))
    for learner in people.values():
        store.progress.record_answer(learner, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    instructor, token = store.instructors.add("Turing")
    store.courses.set_staff(course, instructor.id, StaffRole.INSTRUCTOR)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    return client, {learner: name for name, learner in people.items()}


def _csv(client: TestClient, name: str) -> list[dict[str, Any]]:
    answer = client.get(f"/instructor/export/{name}")
    assert answer.status_code == 200, answer.text
    return list(csv.DictReader(io.StringIO(answer.text)))


def test_late_solves_are_marked_and_credited_in_every_export(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    client, names = _class(app, dated=True)
    rows = [r for r in _csv(client, "gradebook.csv") if (r["lesson_id"], r["exercise_id"]) == ("L4.1", "q")]
    marks = {names[r["learner_id"]]: (r["late"], r["late_credit"]) for r in rows}
    # Ada solved late (half); Alan's extension made his solve on time; Grace solved after the close.
    assert marks == {"Ada": ("True", "0.5"), "Alan": ("False", "1.0"), "Grace": ("True", "0.0")}
    unsolved = [
        r for r in _csv(client, "gradebook.csv") if r["exercise_id"] != "q" and r["solved"] == "False"
    ]
    assert unsolved and all(r["late"] == "" for r in unsolved)
    records = json.loads(client.get("/instructor/export/gradebook.json").text)
    as_json = {names[r["learner_id"]]: r["late_credit"] for r in records if r["exercise_id"] == "q"}
    assert as_json == {"Ada": 0.5, "Alan": 1.0, "Grace": 0.0}
    lms = _csv(client, "lms.csv")
    column = next(key for key in lms[0] if key.startswith("L4.1 "))
    assert {names[r["learner_id"]]: r[column] for r in lms} == {"Ada": "0.5", "Alan": "1", "Grace": "0"}
    events = [e for e in _csv(client, "events.csv") if e["exercise_id"] == "q"]
    due = {names[e["learner_id"]]: e["due_at"] for e in events}
    assert len(set(due.values())) == 3  # each event has its learner's due date in force
    assert all(value.endswith("Z") for value in due.values())


def test_a_course_without_dates_exports_the_files_as_before(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    client, _ = _class(app, dated=False)
    assert list(_csv(client, "gradebook.csv")[0]) == GRADEBOOK_COLUMNS
    assert "due_at" not in _csv(client, "events.csv")[0]
    lms = _csv(client, "lms.csv")
    column = next(key for key in lms[0] if key.startswith("L4.1 "))
    assert {r[column] for r in lms} == {"1"}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_program_sent_before_the_due_date_is_on_time_however_long_its_grading(
    make_app: Callable[..., FastAPI],
) -> None:
    """The program is sent an hour before the due date; the term's clock jumps a day while it waits for its
    grader: it is kept, and solves, at the time it was sent (issue 46)."""
    app = make_app()
    store = app.state.qkv.store
    learner = Browser(app).open_lesson()
    learner.progress()
    course = store.courses.create("Attention 101").id
    store.courses.enrol(course, learner_id_of(learner), MembershipSource.ROSTER)
    queue = app.state.qkv.queue
    submit = queue.submit
    with term_clock() as clock:
        due = clock() + timedelta(hours=1)
        store.due_dates.set_due(course, "L4.1", due, None, 0.5)

        def submit_then_a_day_passes(*args: Any, **kwargs: Any) -> Any:
            future = submit(*args, **kwargs)
            clock.advance(days=1)  # the program waits for its grader past the due date
            return future

        queue.submit = submit_then_a_day_passes
        try:
            assert learner.submit_code(CORRECT_SOLUTION).json()["result"]["status"] == "pass"
        finally:
            queue.submit = submit
        assert clock() > due + timedelta(hours=23)
    (row,) = [r for r in store.gradebook.rows() if r.exercise_id == "functions" and r.solved]
    assert row.first_solved_at is not None and row.first_solved_at < due
    assert LateWork.of_course(store, course).marks(row) == {"late": False, "late_credit": 1.0}  # type: ignore[union-attr]
