"""Late work in the instructor's exports (issue 46): the gradebook (CSV, JSON) marks each late solve and its
credit, the LMS file weighs it, the events file has the due date in force per event; an extension makes a
solve on time, a close makes it earn nothing; a course without dates exports the files as before."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.store import MembershipSource, StaffRole
from qkv.store.sql.clock import utc_now
from qkv.web.instructor.exports import GRADEBOOK_COLUMNS
from tests.web.backend_fixtures import sign_in_instructor


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
