"""The library routes (``/api/project``, ``/api/attention``) give away no lesson's unearned answer.

Those routes compute for any numbers a widget sends; typed with a lesson's own inputs, they would compute
the answers the lesson asks for. Before answering, the result is compared with the unanswered numeric
answers of every lesson of the catalog (``Lesson.answers_given_away``): for the numbers every visitor
sees first (the page's own variant), and for the variant this learner works on; when the inputs sent are
that variant's own numbers, whole-number answers too. A result that holds one is refused with a sentence
naming the lesson and the questions: the lesson's page computes them (its guarded routes,
``/api/lessons/{id}/attention`` and ``/api/lessons/{id}/project``) once the learner has answered them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import HTTPException

from qkv.lessons import Exercise, Lesson
from qkv.web.lesson_progress import build_progress
from qkv.web.services import Services

__all__ = ["refuse_unearned"]


def _earned(services: Services, lesson: Lesson, learner_id: str) -> tuple[int | None, set[str]]:
    """The variant the learner works on, and the exercises they answered correctly for it."""
    progress = build_progress(lesson, services.store.progress.lesson_activity(learner_id, lesson.id))
    earned = {
        exercise_id
        for exercise_id, entry in progress["exercises"].items()
        if entry["feedback"] is not None and entry["feedback"]["correct"]
    }
    return progress["variant_seed"], earned


def given_away(
    services: Services,
    learner_id: str | None,
    shown: Sequence[Sequence[float | None]],
    inputs: Sequence[Any] = (),
) -> list[tuple[Lesson, list[Exercise]]]:
    """Per lesson, the unanswered exercises whose answers ``shown`` holds (lessons with none left out).

    ``inputs`` are the numbers the result was computed from: when they are a lesson's own (its page's
    or the learner's variant), whole-number answers count too (``Lesson.answers_given_away``).
    The variant seeds are read first (one small query per lesson); the learner's answers only where the
    result would give something away, so a widget's ordinary numbers cost little.
    """
    found: list[tuple[Lesson, list[Exercise]]] = []
    known = learner_id is not None and services.store.learners.has_saved_work(learner_id)
    for lesson in services.catalog.lessons:
        seed = services.store.progress.variant_seed(learner_id, lesson.id) if known and learner_id else None
        page_numbers = lesson.answers_given_away(shown, variant_seed=None, earned=(), inputs=inputs)
        own_numbers = (
            lesson.answers_given_away(shown, variant_seed=seed, earned=(), inputs=inputs) if seed else []
        )
        if not (page_numbers or own_numbers):
            continue
        earned: set[str] = set()
        if known and learner_id is not None:
            _, earned = _earned(services, lesson, learner_id)
        # The page's own numbers are earned only by a learner who works on them (no variant of their own).
        left = [exercise for exercise in page_numbers if seed is not None or exercise.id not in earned]
        left += [exercise for exercise in own_numbers if exercise.id not in earned]
        unique = list({exercise.id: exercise for exercise in left}.values())
        if unique:
            found.append((lesson, unique))
    return found


def refuse_unearned(
    services: Services,
    learner_id: str | None,
    shown: Sequence[Sequence[float | None]],
    inputs: Sequence[Any] = (),
) -> None:
    """Raise 403 with a sentence if ``shown`` holds an unearned answer of any lesson; return otherwise.

    ``inputs``: the vectors and matrices ``shown`` was computed from (see ``given_away``).

    Raises
    ------
    fastapi.HTTPException
        403, naming the lesson and the questions whose answers the numbers would give away.
    """
    found = given_away(services, learner_id, shown, inputs)
    if not found:
        return
    lesson, exercises = found[0]
    ids = ", ".join(f"'{exercise.id}'" for exercise in exercises)
    raise HTTPException(
        403,
        f"These numbers are those of lesson {lesson.id} ({lesson.title}): the result would give away the "
        f"answer to {ids} before it was typed. Open the lesson and answer there; its page shows every step "
        "once you have. Other numbers work here now.",
    )
