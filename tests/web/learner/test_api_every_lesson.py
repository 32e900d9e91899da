"""The back end serves every lesson of the catalog alike: its page, its progress and its answers.

Parametrised from ``tests.lesson_contract.catalog()``: no lesson id or exercise is named here, so a lesson
added as a folder and a corpus is served and checked like the others (tests/lessons/test_a_new_lesson.py).
"""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from qkv.lessons import Lesson
from tests import lesson_contract as contract
from tests.web.backend_fixtures import Browser

LESSONS = contract.catalog().lessons

pytestmark = pytest.mark.content


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_the_lesson_page_and_its_progress_are_served(app: FastAPI, lesson: Lesson) -> None:
    learner = Browser(app, lesson.id).open_lesson()
    progress = learner.progress()
    assert set(progress["exercises"]) == set(lesson.exercises)
    assert all(entry["attempts"] == 0 for entry in progress["exercises"].values())
    page = learner.client.get(learner.url, headers={"accept": "text/html"}).text
    for section in lesson.render(None):
        assert f'id="{section.id}"' in page, section.id


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_an_answer_to_each_answered_exercise_is_judged_and_kept(app: FastAPI, lesson: Lesson) -> None:
    learner = Browser(app, lesson.id).open_lesson()
    answered = [exercise for exercise in lesson.exercises.values() if exercise.kind != "code"]
    for exercise in answered:
        response = learner.answer(exercise.id, "not an answer at all")
        assert response.status_code in {200, 422}, (exercise.id, response.text[:300])
        if response.status_code == 422:  # refused as unreadable: a sentence, and nothing counted
            assert response.json()["detail"].endswith((".", "?")), response.text
    progress = learner.progress()["exercises"]
    for exercise in answered:
        assert progress[exercise.id]["status"] != "correct", exercise.id
