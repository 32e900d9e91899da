""" "Did this help?" over HTTP: one mark per learner and message (CSRF, bounded), counted per kind of message
for the instructor, and a group whose message learners often found unhelpful raised to the top."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading import sandbox_available
from qkv.store import EVERYONE
from qkv.store.instructor.mistake_groups import MAX_MARKS
from tests.class_mistakes import EXERCISE, FUNCTION, LESSON, OTHERS, STYLES
from tests.web.backend_fixtures import Browser, learner_id_of, sign_in_instructor

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is needed to grade programs")


def _ran(app: FastAPI, program: str) -> tuple[Browser, dict[str, Any]]:
    learner = Browser(app, LESSON).open_lesson()
    response = learner.submit_code(program, EXERCISE)
    assert response.status_code == 200, response.text
    return learner, response.json()["result"]


def _first_failure(result: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in result["tests"] if t["function"] == FUNCTION and t["status"] != "pass")


def _mark(learner: Browser, result: dict[str, Any], helpful: bool, **extra: Any) -> Any:
    test = _first_failure(result)
    body = {
        "exercise_id": EXERCISE,
        "message": test.get("hint") or test["message"],
        "kind": test.get("hint_from", "plain") if test.get("hint") else "plain",
        "helpful": helpful,
        "function": FUNCTION,
        "signature": result["signatures"][FUNCTION],
        **extra,
    }
    return learner.post(f"{learner.api}/message-feedback", body)


def test_one_mark_per_learner_and_message_counted_per_kind(app: FastAPI) -> None:
    learner, result = _ran(app, OTHERS[0])
    assert _first_failure(result)["hint_from"] == "lesson"  # a catalogued hint names dividing by d_k
    first = _mark(learner, result, False, line="I did not see which size.")
    assert first.status_code == 200 and first.json() == {"saved": True}
    assert _mark(learner, result, True).json() == {"saved": False}, "the first mark is kept"
    shares = {
        s.kind: (s.unhelpful, s.marked) for s in app.state.qkv.store.mistakes.unhelpful_by_kind(EVERYONE)
    }
    assert shares["lesson"] == (1, 1) and shares["note"] == (0, 0)
    listed = app.state.qkv.store.mistakes.groups(EVERYONE, "")
    assert [group.to_dict()["lines"] for group in listed] == [["I did not see which size."]]  # the JSON's

    no_csrf = learner.client.post(f"{learner.api}/message-feedback", json={"exercise_id": EXERCISE})
    assert no_csrf.status_code == 403
    bad_kind = _mark(learner, result, False, kind="shouting")
    assert bad_kind.status_code == 422 and "'shouting' is not a kind of message" in bad_kind.text
    assert _mark(learner, result, False, line="x" * 301).status_code == 422
    assert _mark(learner, result, False, message="y" * 5000).status_code == 422
    unknown = _mark(learner, result, False, exercise_id="nope")
    assert unknown.status_code == 422 and "has no exercise 'nope'" in unknown.text


def test_a_group_whose_message_is_often_unhelpful_is_raised_to_the_top(app: FastAPI) -> None:
    for program in STYLES[:3]:
        _ran(app, program)
    marked = [_ran(app, OTHERS[1]) for _ in range(2)]
    instructor = TestClient(app)
    sign_in_instructor(app, instructor)
    before = instructor.get("/api/instructor/mistakes").json()
    assert [g["learners"] for g in before] == [3, 2]
    for learner, result in marked:
        assert _mark(learner, result, False).json() == {"saved": True}
    after = instructor.get("/api/instructor/mistakes").json()
    assert [(g["learners"], g["unhelpful"], g["marked"]) for g in after] == [(2, 2, 2), (3, 0, 0)]
    page = instructor.get("/instructor/mistakes", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert page.text.index(after[0]["id"]) < page.text.index(after[1]["id"])
    assert "often marked unhelpful" in page.text


def test_a_learner_s_marks_are_bounded_per_exercise(app: FastAPI) -> None:
    learner, result = _ran(app, OTHERS[0])
    store = app.state.qkv.store
    who = learner_id_of(learner)
    for number in range(MAX_MARKS):
        assert store.mistakes.mark(who, LESSON, EXERCISE, f"message {number}", kind="plain", helpful=True)
    refused = _mark(learner, result, False)
    assert refused.status_code == 429
    assert (
        f"You have answered 'Did this help?' {MAX_MARKS} times for this exercise" in refused.json()["detail"]
    )


def _stored(app: FastAPI) -> list[tuple[str, int | None, int | None]]:
    """Every mark kept: its kind, and the program and the hand answer it is stored with."""
    from sqlalchemy import text

    with app.state.qkv.store.database.read() as conn:
        rows = conn.execute(text("SELECT kind, submission_id, answer_id FROM message_feedback ORDER BY id"))
        return [(row[0], row[1], row[2]) for row in rows]


def _newest(app: FastAPI, table: str) -> int:
    from sqlalchemy import text

    with app.state.qkv.store.database.read() as conn:
        return int(conn.execute(text(f"SELECT MAX(id) FROM {table}")).scalar_one())


def test_a_hand_answer_s_message_is_marked_too(app: FastAPI) -> None:
    from qkv.lessons import load_catalog

    lesson = load_catalog().lesson(LESSON)
    answered = next(exercise.id for exercise in lesson.exercises.values() if exercise.kind != "code")
    learner = Browser(app, LESSON).open_lesson()
    wrong = learner.answer(answered, "0").json()["feedback"]
    assert wrong["correct"] is False
    line = "Say which rule the answer breaks."
    body = {
        "exercise_id": answered,
        "message": wrong["message"],
        "kind": "answer",
        "helpful": False,
        "line": line,
    }
    assert learner.post(f"{learner.api}/message-feedback", body).json() == {"saved": True}
    shares = {
        s.kind: (s.unhelpful, s.marked) for s in app.state.qkv.store.mistakes.unhelpful_by_kind(EVERYONE)
    }
    assert shares["answer"] == (1, 1)
    assert _stored(app) == [("answer", None, _newest(app, "answers"))], "stored with the answer it was on"
    instructor = TestClient(app)
    sign_in_instructor(app, instructor)
    page = instructor.get("/instructor/mistakes", headers={"accept": "text/html"}).text
    assert '<th scope="row">hand-answer message</th>' in page
    lines = page[page.index('class="exercise-lines"') :]
    assert f"{LESSON} {answered}" in lines and line in lines, "the instructor reads the line per exercise"
    assert f"On the message: {wrong['message']}" in lines.replace("&#39;", "'").replace("&#34;", '"')


def test_a_test_s_mark_is_stored_with_its_program_whatever_made_its_message(app: FastAPI) -> None:
    learner, result = _ran(app, OTHERS[0])
    program = _newest(app, "code_submissions")
    assert _mark(learner, result, True).json() == {"saved": True}
    # The kinds the page sends besides the catalogued hint's: a crashing line named, a relation, a mutant.
    for number, kind in enumerate(("crash", "relation", "mutant", "note", "plain")):
        marked = _mark(learner, result, False, kind=kind, message=f"message {number}")
        assert marked.status_code == 200, marked.text
    assert _stored(app) == [
        (kind, program, None) for kind in ("lesson", "crash", "relation", "mutant", "note", "plain")
    ]
