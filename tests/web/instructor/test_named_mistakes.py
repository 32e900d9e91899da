"""A hand answer whose feedback named a mistake the checker knows by itself (the right numbers in reverse
order) is saved with that mistake's id, and counted as named: in the item statistics, the lesson's numbers,
the "stuck now" list's sentence and the events export's ``mistake`` column."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.lessons import CHECKER_MISTAKES, load_catalog
from qkv.lessons.feedback import REVERSE_ORDER
from tests.web.backend_fixtures import LESSON, Browser, sign_in_instructor

HTML = {"accept": "text/html"}


def _reversed_answer() -> tuple[str, str]:
    """A numeric exercise of the lesson whose answer, reversed, is no mistake the lesson names."""
    lesson = load_catalog().lesson(LESSON)
    for exercise_id, exercise in lesson.exercises.items():
        if exercise.kind == "numeric":
            expected = lesson.variant(None)[exercise.answer]
            typed = ", ".join(str(number) for number in reversed(expected))
            feedback = lesson.check(exercise_id, typed)
            if feedback.mistake == REVERSE_ORDER:
                return exercise_id, typed
    raise AssertionError(f"{LESSON} has no numeric answer that reads as reversed")


def test_a_reversed_answer_is_counted_as_a_named_mistake(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    exercise_id, typed = _reversed_answer()
    learner = Browser(app).open_lesson()
    feedback = learner.answer(exercise_id, typed).json()["feedback"]
    assert feedback["message"].startswith(CHECKER_MISTAKES[REVERSE_ORDER]) and not feedback["correct"]
    client = TestClient(app)
    sign_in_instructor(app, client)
    items = html.unescape(client.get(f"/instructor/lessons/{LESSON}/items", headers=HTML).text)
    section = items[items.index(f'id="item-{exercise_id}"') :]
    section = section[: section.index("</section>")]
    assert f"{REVERSE_ORDER}</code>: {CHECKER_MISTAKES[REVERSE_ORDER]}" in section
    assert typed not in section[section.index("no named mistake matched") :]  # not among the unnamed
    events = list(csv.DictReader(io.StringIO(client.get("/instructor/export/events.csv").text)))
    assert [(row["exercise_id"], row["mistake"]) for row in events] == [(exercise_id, REVERSE_ORDER)]
    numbers = client.get(f"/api/instructor/lessons/{LESSON}").json()
    (entry,) = [ex for ex in numbers["lesson"]["exercises"] if ex["id"] == exercise_id]
    counted = {m["id"]: m["count"] for m in entry["stats"]["mistakes"]}
    assert counted[REVERSE_ORDER] == 1
    items_csv = list(csv.DictReader(io.StringIO(client.get("/instructor/export/items.csv").text)))
    (row,) = [row for row in items_csv if row["exercise_id"] == exercise_id]
    assert row["wrong_1_mistake"] == f"{REVERSE_ORDER}: {CHECKER_MISTAKES[REVERSE_ORDER]}"
