"""The instructor's dates page and a learner's extensions (issue 46): set, shown in the course's time zone,
refused with a sentence, extended and revoked from the learner's page; a teaching assistant only reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from html import unescape
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading.results import GradeResult, TestResult
from qkv.lessons.suite_versions import suite_version
from qkv.store import MembershipSource, StaffRole
from qkv.web.runs.local_queue import GradingQueue
from tests.web.backend_fixtures import Browser, instructor_csrf, sign_in_instructor

HTML = {"accept": "text/html"}


def _school(app: FastAPI) -> tuple[str, str, TestClient, str]:
    store = app.state.qkv.store
    course = store.courses.create("Attention 101").id
    ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    store.courses.enrol(course, ada, MembershipSource.ROSTER)
    store.progress.record_answer(ada, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    instructor, token = store.instructors.add("Grace")
    store.courses.set_staff(course, instructor.id, StaffRole.INSTRUCTOR)
    store.due_dates.set_time_zone(course, "Europe/Paris")
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    return course, ada, client, instructor_csrf(client)


def test_an_instructor_sets_dates_and_extends_a_learner(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    course, ada, client, csrf = _school(app)
    store = app.state.qkv.store
    form = {"csrf_token": csrf, "lesson": "L4.1", "due": "2026-12-24 17:00", "close": "2026-12-26 17:00"}
    made = client.post("/instructor/dates", data={**form, "late_credit": "0.5"}, follow_redirects=False)
    assert made.status_code == 303, made.text
    due = store.due_dates.due(course, "L4.1")
    assert due is not None and due.due_at == datetime(2026, 12, 24, 16, 0) and due.late_credit == 0.5
    page = client.get("/instructor/dates", headers=HTML).text
    assert "<td>2026-12-24 17:00 CET</td><td>2026-12-26 17:00 CET</td><td>at 0.5</td>" in page
    assert "Europe/Paris" in page
    bad = {
        "next week": "'next week' is not a date and time qkv can read",
        "2026-12-27 10:00": "must not come before the due date",
    }
    for due_text, sentence in bad.items():
        refused = client.post("/instructor/dates", data={**form, "due": due_text}, headers=HTML)
        assert refused.status_code == 400 and sentence in unescape(refused.text)
    credit = client.post("/instructor/dates", data={**form, "late_credit": "2"}, headers=HTML)
    assert credit.status_code == 400 and "not 2.0" in unescape(credit.text)
    url = f"/instructor/learners/{ada}"
    assert "No extension: the course's dates hold for this learner." in unescape(
        client.get(url, headers=HTML).text
    )
    extended = client.post(f"{url}/extension", data={"csrf_token": csrf, "lesson": "L4.1", "days": "3"})
    assert extended.status_code == 200  # followed to the learner's page
    assert "L4.1 until 2026-12-27 17:00 CET" in extended.text
    assert "L4.1 until 2026-12-27 17:00 CET" in client.get("/instructor/dates", headers=HTML).text
    forged = client.post(f"{url}/extension", data={"csrf_token": "forged", "lesson": "L4.1", "revoke": "1"})
    assert forged.status_code == 403 and store.due_dates.extensions(course)
    revoked = client.post(f"{url}/extension", data={"csrf_token": csrf, "lesson": "L4.1", "revoke": "1"})
    assert revoked.status_code == 200 and store.due_dates.extensions(course) == []
    early = client.post(
        f"{url}/extension", data={"csrf_token": csrf, "lesson": "L4.1", "until": "2026-12-20"}
    )
    assert early.status_code == 400 and "must end after the due date" in early.json()["detail"]


def test_a_teaching_assistant_reads_the_dates_and_changes_none(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    course, ada, _, _ = _school(app)
    store = app.state.qkv.store
    store.due_dates.set_due(course, "L4.1", datetime(2026, 12, 24, 16, 0))
    assistant, token = store.instructors.add("Alan")
    store.courses.set_staff(course, assistant.id, StaffRole.TEACHING_ASSISTANT)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    csrf = instructor_csrf(client)
    page = client.get("/instructor/dates", headers=HTML).text
    assert "2026-12-24 17:00 CET" in page and 'action="/instructor/dates"' not in page
    form = {"csrf_token": csrf, "lesson": "L4.1", "due": "2027-01-01 12:00"}
    assert client.post("/instructor/dates", data=form).status_code == 403
    extension = {"csrf_token": csrf, "lesson": "L4.1", "days": "2"}
    assert client.post(f"/instructor/learners/{ada}/extension", data=extension).status_code == 403
    assert store.due_dates.due(course, "L4.1").due_at == datetime(2026, 12, 24, 16, 0)  # type: ignore[union-attr]


def test_a_program_keeps_its_suite_version_and_the_page_counts_older_ones(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app()
    course, ada, client, _ = _school(app)
    services = app.state.qkv

    def grade(source: str, suite: Any, seed: int | None = None) -> GradeResult:
        return GradeResult("fail", "Not graded in this test.", [TestResult("t", "fail", "No.")], 1, 1, "test")

    original, services.queue = services.queue, GradingQueue(grade, concurrency=1, capacity=5, per_client=2)
    try:
        learner = Browser(app).open_lesson()
        assert learner.submit_code("x = 1").status_code == 200
    finally:
        services.queue.close(timeout_s=10)
        services.queue = original
    lesson = services.catalog.lesson("L4.1")
    (program,) = services.store.regrades.programs()
    assert program.suite_version == suite_version(lesson)
    services.store.courses.enrol(course, program.learner_id, MembershipSource.LTI)
    page = client.get("/instructor/dates", headers=HTML).text
    assert "L4.1: every program graded with today's version" in page
    old = {"status": "pass", "tests": [], "suite_version": "0" * 16}
    services.store.code.record(ada, "L4.1", "functions", "x = 2\n", old)
    page = client.get("/instructor/dates", headers=HTML).text
    assert "L4.1: 1 program graded with an older version of this lesson" in page
