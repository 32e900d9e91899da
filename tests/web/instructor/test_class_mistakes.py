"""A class's mistakes over HTTP, on SQLite and PostgreSQL: four programs of one mistake in four styles form
one group; the instructor names it; the sentence reaches a fifth style, the group's learners on their next
look, and the events export, and never another mistake, another course, or a learner in no course."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading import sandbox_available
from qkv.store import MembershipSource, StaffRole
from tests.class_mistakes import EXERCISE, FUNCTION, LESSON, OTHERS, STYLES
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import Browser, learner_id_of, sign_in_instructor

__all__ = ["postgres_admin_url", "postgres_url"]  # fixtures of the store's tests, used here

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is needed to grade programs")
HTML = {"accept": "text/html"}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def class_app(request: pytest.FixtureRequest, tmp_path: Any) -> FastAPI:
    """The app on each database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'class.sqlite3'}"
    else:  # the database first, so that it is dropped after the app has stopped (its threads read it)
        url = str(request.getfixturevalue("postgres_url"))
    make_app: Callable[..., FastAPI] = request.getfixturevalue("make_app")
    return make_app(database_url=url)


def _staff(app: FastAPI, name: str, course_id: str, role: StaffRole = StaffRole.INSTRUCTOR) -> TestClient:
    store = app.state.qkv.store
    instructor, token = store.instructors.add(name)
    store.courses.set_staff(course_id, instructor.id, role)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    return client


def _csrf(client: TestClient) -> str:
    page = client.get("/instructor/mistakes", headers=HTML)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found
    return found.group(1)


def _learner(app: FastAPI, course_id: str | None) -> Browser:
    learner = Browser(app, LESSON).open_lesson()
    learner.submit_code("x = 1\n", EXERCISE)  # saves the learner, so that they can join a course
    if course_id is not None:
        app.state.qkv.store.courses.enrol(course_id, learner_id_of(learner), MembershipSource.ROSTER)
    return learner


def _run(learner: Browser, program: str) -> dict[str, Any]:
    response = learner.submit_code(program, EXERCISE)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    assert result["status"] == "fail"
    return result


def _notes(result: dict[str, Any]) -> list[str]:
    return [test["note"] for test in result["tests"] if test.get("note")]


def test_four_styles_form_one_group_and_its_note_reaches_a_fifth_style_only(class_app: FastAPI) -> None:
    app = class_app
    store = app.state.qkv.store
    ours, theirs = store.courses.create("Attention A"), store.courses.create("Attention B")
    grace, bob = _staff(app, "Grace", ours.id), _staff(app, "Bob", theirs.id)
    class_ = [_learner(app, ours.id) for _ in range(6)]
    first = [_run(learner, program) for learner, program in zip(class_[:4], STYLES[:4], strict=True)]
    signatures = {result["signatures"][FUNCTION] for result in first}
    assert len(signatures) == 1, "four styles of one mistake must share one signature"
    other = _run(class_[4], OTHERS[0])
    assert other["signatures"][FUNCTION] not in signatures

    listed = grace.get("/api/instructor/mistakes", params={"lesson": LESSON}).json()
    group = next(g for g in listed if g["learners"] == 4)
    assert (group["lesson"], group["exercise"], group["function"], group["programs"]) == (
        LESSON,
        EXERCISE,
        FUNCTION,
        4,
    )
    assert group["sentence"] is None and group["first_message"] and len(group["examples"]) == 3
    assert listed[0]["id"] == group["id"], "the group of most learners comes first"
    assert bob.get("/api/instructor/mistakes").json() == [], "another course's instructor sees none of it"
    refused = bob.post(
        f"/instructor/mistakes/{group['id']}",
        data={"csrf_token": _csrf(bob), "sentence": "Mine."},
        headers=HTML,
    )
    assert refused.status_code == 404

    sentence = "You divided by the square root of Q's whole size; d_k is the number of columns of Q alone."
    named = grace.post(
        f"/instructor/mistakes/{group['id']}",
        data={"csrf_token": _csrf(grace), "sentence": sentence},
        headers=HTML,
        follow_redirects=False,
    )
    assert named.status_code == 303, named.text
    assert grace.get("/api/instructor/mistakes").json()[-1]["sentence"] == sentence  # named ones go last

    fifth = _run(class_[5], STYLES[4])
    assert _notes(fifth)[0] == sentence
    assert fifth["notes"] == [
        {"group": group["id"], "function": FUNCTION, "sentence": sentence, "by": "instructor"}
    ]
    assert _notes(_run(class_[4], OTHERS[1])) == [], "another mistake never gets the note"
    elsewhere = _learner(app, theirs.id)
    assert _notes(_run(elsewhere, STYLES[0])) == [], "another course's learner does not get it"
    alone = _learner(app, None)
    assert _notes(_run(alone, STYLES[0])) == [], "nor a learner in no course"

    # The first learner of the group sees it on their next look at their last result.
    again = class_[0].progress()["code"][EXERCISE]["result"]
    assert _notes(again)[0] == sentence
    page = class_[0].page_progress()["code"][EXERCISE]["result"]
    assert _notes(page)[0] == sentence

    events = list(csv.DictReader(io.StringIO(grace.get("/instructor/export/events.csv").text)))
    shown = [row for row in events if row["event"] == "note"]
    assert {row["learner_id"] for row in shown} == {learner_id_of(class_[5]), learner_id_of(class_[0])}
    assert {row["mistake"] for row in shown} == {group["id"]} and shown[0]["message"] == sentence
    assert not [row for row in bob.get("/instructor/export/events.csv").text.splitlines() if ",note," in row]

    unnamed = grace.post(
        f"/instructor/mistakes/{group['id']}",
        data={"csrf_token": _csrf(grace), "action": "unname"},
        headers=HTML,
        follow_redirects=False,
    )
    assert unnamed.status_code == 303
    assert _notes(_run(class_[3], STYLES[3] + "\n# again\n")) == []


def test_a_teaching_assistant_proposes_and_the_note_waits_for_an_instructor(class_app: FastAPI) -> None:
    app = class_app
    course = app.state.qkv.store.courses.create("Attention")
    assistant = _staff(app, "Tom", course.id, StaffRole.TEACHING_ASSISTANT)
    learners = [_learner(app, course.id) for _ in range(2)]
    _run(learners[0], STYLES[0])
    group = assistant.get("/api/instructor/mistakes").json()[0]
    token = _csrf(assistant)
    proposed = assistant.post(
        f"/instructor/mistakes/{group['id']}",
        data={"csrf_token": token, "sentence": "Divide by √d_k."},
        headers=HTML,
        follow_redirects=False,
    )
    assert proposed.status_code == 303
    listed = assistant.get("/api/instructor/mistakes").json()[0]
    assert (listed["sentence"], listed["proposed"]) == (None, "Divide by √d_k.")
    assert _notes(_run(learners[1], STYLES[1])) == [], "a proposal reaches nobody"
    taken = assistant.post(
        f"/instructor/mistakes/{group['id']}", data={"csrf_token": token, "action": "unname"}, headers=HTML
    )
    assert taken.status_code == 403


def test_bad_notes_and_unknown_groups_get_sentences(class_app: FastAPI) -> None:
    app = class_app
    course = app.state.qkv.store.courses.create("Attention")
    grace = _staff(app, "Grace", course.id)
    _run(_learner(app, course.id), STYLES[0])
    group = grace.get("/api/instructor/mistakes").json()[0]["id"]
    token = _csrf(grace)
    empty = grace.post(
        f"/instructor/mistakes/{group}", data={"csrf_token": token, "sentence": "  "}, headers=HTML
    )
    assert empty.status_code == 422
    assert "The note is empty" in empty.text
    long = grace.post(
        f"/instructor/mistakes/{group}", data={"csrf_token": token, "sentence": "x" * 401}, headers=HTML
    )
    assert long.status_code == 422 and "401 characters" in long.text
    unknown = grace.post(
        "/instructor/mistakes/0123456789abcdef", data={"csrf_token": token, "sentence": "A."}
    )
    assert unknown.status_code == 404
    no_csrf = grace.post(f"/instructor/mistakes/{group}", data={"sentence": "A."}, headers=HTML)
    assert no_csrf.status_code == 403
