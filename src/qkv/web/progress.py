"""The PROGRESS document: a learner's saved work on one lesson, in the shape the page and API share."""

from __future__ import annotations

from typing import Any

from qkv.store import LessonActivity


def build_progress(lesson: Any, activity: LessonActivity) -> dict[str, Any]:
    """Combine a lesson's exercises with the learner's saved activity.

    A Part 1 answer is restored only for the variant it was given for, since another variant
    has other numbers; whether the exercise was ever solved is kept across variants.

    Parameters
    ----------
    lesson : qkv.lessons.Lesson
        Supplies the exercises, in page order.
    activity : qkv.store.LessonActivity
        The learner's saved work.

    Returns
    -------
    dict
        ``{"lesson_id", "variant_seed", "done", "total", "exercises": {...}, "code": {...}}``.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> lesson = NS(id="L4.1", exercises={"v": NS(kind="letter", part="part1")})
    >>> build_progress(lesson, LessonActivity("L4.1", None))["exercises"]["v"]["status"]
    'untouched'
    """
    exercises: dict[str, dict[str, Any]] = {}
    code: dict[str, dict[str, Any]] = {}
    seed = activity.variant_seed
    for exercise_id, exercise in lesson.exercises.items():
        done = activity.exercises.get(exercise_id)
        status = "untouched" if done is None else "correct" if done.solved else "attempted"
        entry: dict[str, Any] = {
            "kind": exercise.kind,
            "status": status,
            "attempts": done.attempts if done else 0,
            "last_answer": None,
            "feedback": None,
        }
        if exercise.kind == "code":
            last_code = done.last_code if done else None
            code[exercise_id] = {
                "source": last_code.source if last_code else None,
                "result": last_code.result if last_code else None,
            }
        else:
            last = done.last_answer if done else None
            if last is not None and (exercise.part != "part1" or last.variant_seed == seed):
                entry["last_answer"] = last.answer
                entry["feedback"] = {
                    "correct": last.correct,
                    "message": last.message,
                    "counted_as_attempt": last.counted_as_attempt,
                }
        exercises[exercise_id] = entry
    return {
        "lesson_id": lesson.id,
        "variant_seed": seed,
        "done": sum(1 for entry in exercises.values() if entry["status"] == "correct"),
        "total": len(exercises),
        "exercises": exercises,
        "code": code,
    }
