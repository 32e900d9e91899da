"""The PROGRESS document decides, on the server, what is done: per exercise, per part and in total."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any

from qkv.lessons import Exercise, LessonPart
from qkv.store import AnswerRecord, CodeRecord, ExerciseActivity, LessonActivity
from qkv.web.lesson_progress import build_progress

WHEN = datetime(2026, 1, 1)


def _lesson() -> SimpleNamespace:
    """A two-part lesson plus a warm-up part that does not count toward done."""
    return SimpleNamespace(
        id="L9.1",
        parts=(
            LessonPart("warm-up", "Warm-up", counts_toward_done=False),
            LessonPart("drill", "Drill", changes_with_variant=True),
            LessonPart("build", "Build it"),
        ),
        exercises={
            "guess": Exercise(id="guess", kind="choice", part="warm-up", prompt="", prompt_template=""),
            "a": Exercise(id="a", kind="numeric", part="drill", prompt="", prompt_template=""),
            "b": Exercise(id="b", kind="numeric", part="drill", prompt="", prompt_template=""),
            "program": Exercise(id="program", kind="code", part="build", prompt="", prompt_template=""),
        },
    )


def _answer(exercise_id: str, correct: bool, seed: int | None = None) -> ExerciseActivity:
    record = AnswerRecord(exercise_id, "[1, 2]", correct, "Right." if correct else "No.", True, seed, WHEN)
    return ExerciseActivity(attempts=1, submissions=1, solved=correct, last_answer=record)


def _code(status: str, solved: bool) -> ExerciseActivity:
    result: dict[str, Any] = {"status": status, "tests": []}
    record = CodeRecord("program", "def f(): ...", status, 0, 0, result, WHEN)
    return ExerciseActivity(attempts=1, submissions=1, solved=solved, last_code=record)


def test_parts_and_totals_count_only_parts_that_count_toward_done() -> None:
    activity = LessonActivity(
        "L9.1", 5, {"guess": _answer("guess", True), "a": _answer("a", True, 5), "b": _answer("b", False, 5)}
    )
    progress = build_progress(_lesson(), activity)
    assert progress["parts"] == [
        {
            "id": "warm-up",
            "title": "Warm-up",
            "done": 1,
            "total": 1,
            "exercise_ids": ["guess"],
            "complete": True,
        },
        {
            "id": "drill",
            "title": "Drill",
            "done": 1,
            "total": 2,
            "exercise_ids": ["a", "b"],
            "complete": False,
        },
        {
            "id": "build",
            "title": "Build it",
            "done": 0,
            "total": 1,
            "exercise_ids": ["program"],
            "complete": False,
        },
    ]
    # The warm-up's solved exercise is shown as done but left out of the lesson's count.
    assert (progress["done"], progress["total"]) == (1, 3)
    assert {key: entry["done"] for key, entry in progress["exercises"].items()} == {
        "guess": True,
        "a": True,
        "b": False,
        "program": False,
    }


def test_a_code_exercise_is_done_when_it_passed() -> None:
    passed = build_progress(_lesson(), LessonActivity("L9.1", None, {"program": _code("pass", True)}))
    assert passed["exercises"]["program"] == {
        "kind": "code",
        "status": "correct",
        "done": True,
        "attempts": 1,
        "last_answer": None,
        "feedback": None,
    }
    assert passed["parts"][2]["complete"] is True
    assert (passed["done"], passed["total"]) == (1, 3)
    # Solved once, then a failing submission: still done (the store keeps "solved ever").
    failed_later = build_progress(_lesson(), LessonActivity("L9.1", None, {"program": _code("fail", True)}))
    assert failed_later["exercises"]["program"]["done"] is True
    never = build_progress(_lesson(), LessonActivity("L9.1", None, {"program": _code("fail", False)}))
    assert never["exercises"]["program"]["done"] is False
    assert never["parts"][2] == {
        "id": "build",
        "title": "Build it",
        "done": 0,
        "total": 1,
        "exercise_ids": ["program"],
        "complete": False,
    }


def test_answers_of_a_variant_part_are_restored_only_for_their_variant() -> None:
    activity = LessonActivity("L9.1", 8, {"a": _answer("a", True, 7), "guess": _answer("guess", False, 7)})
    progress = build_progress(_lesson(), activity)
    assert progress["exercises"]["a"]["last_answer"] is None  # given for variant 7, now 8
    assert progress["exercises"]["a"]["done"] is True  # solved is kept across variants
    assert progress["exercises"]["guess"]["last_answer"] == "[1, 2]"  # its part keeps its numbers
    same = build_progress(_lesson(), LessonActivity("L9.1", 7, {"a": _answer("a", True, 7)}))
    assert same["exercises"]["a"]["feedback"] == {
        "correct": True,
        "message": "Right.",
        "counted_as_attempt": True,
    }


def test_a_lesson_without_parts_has_an_empty_progress_panel() -> None:
    lesson = _lesson()
    lesson.parts = ()
    lesson.exercises = {}
    progress = build_progress(lesson, LessonActivity("L9.1", None))
    assert (progress["parts"], progress["done"], progress["total"]) == ([], 0, 0)
