"""Instructors and courses on one server: no course at all works as before, a hand-made instructor needs
a course once there are courses, an administrator has every course and every learner, and a sign-in link
made for a learner says who made it."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.store import MembershipSource, StaffRole
from tests.web.backend_fixtures import Browser, instructor_csrf, sign_in_instructor

HTML = {"accept": "text/html"}


def _signed_in(app: FastAPI, token: str) -> tuple[TestClient, str]:
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    return client, instructor_csrf(client)


def test_without_courses_every_instructor_sees_every_learner(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    Browser(app).open_lesson().answer("q", "3, 2")
    client, _ = _signed_in(app, app.state.qkv.store.instructors.add("Grace")[1])
    assert client.get("/api/instructor/class").json()["learners"] == 1
    assert 'id="course-picker"' not in client.get("/instructor", headers=HTML).text


def test_courses_an_instructor_without_one_and_an_administrator(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    store = app.state.qkv.store
    Browser(app).open_lesson().answer("q", "3, 2")  # an anonymous learner: in no course
    course = store.courses.create("Attention 101")
    ada = store.accounts.find_or_create(None, "s-1", "Ada Lovelace")
    store.courses.enrol(course.id, ada, MembershipSource.ROSTER)
    # A hand-made instructor with no course, on a server that has courses, sees nothing.
    lost, _ = _signed_in(app, store.instructors.add("Nobody")[1])
    refused = lost.get("/api/instructor/class")
    assert refused.status_code == 403 and "has no course on this server" in refused.json()["detail"]
    # An administrator opens on every learner of the server, and may narrow it to one course.
    dean, token = store.instructors.add("Dean")
    store.courses.grant_all_courses(dean.id)
    admin, _ = _signed_in(app, token)
    assert admin.get("/api/instructor/class").json()["learners"] == 2
    assert admin.get("/api/instructor/class", params={"course": course.id}).json()["learners"] == 1
    assert "Every learner of the server" in admin.get("/instructor", headers=HTML).text
    # A page opened on one course keeps its live fragments on that course.
    grid = admin.get("/instructor/class", params={"course": course.id}, headers=HTML).text
    live = re.search(r'data-live-src="([^"]+)"', grid)
    assert live is not None and f"course={course.id}" in live.group(1)
    fragment = admin.get(live.group(1).replace("&amp;", "&"), headers=HTML)
    assert fragment.status_code == 200 and "Ada Lovelace" in fragment.text
    # The course's instructor makes a link for their roster learner; the learner's page says who did.
    grace, token = store.instructors.add("Grace")
    store.courses.set_staff(course.id, grace.id, StaffRole.INSTRUCTOR)
    teacher, csrf = _signed_in(app, token)
    assert teacher.get("/api/instructor/class").json()["learners"] == 1
    made = teacher.post(f"/instructor/learners/{ada}/sign-in-link", data={"csrf_token": csrf}, headers=HTML)
    assert made.status_code == 200
    page = teacher.get(f"/instructor/learners/{ada}", headers=HTML).text
    assert "Sign-in links made for this learner" in page and "By Grace, " in page
