"""The PROGRESS document: a learner's saved work on one lesson, in the shape the page and API share."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from qkv.lessons import SOLUTION_AFTER_FAILED_RUNS, Lesson
from qkv.lessons.help_ladder import hints_open, next_hint_sentence
from qkv.store import ExerciseActivity, LessonActivity


def build_progress(lesson: Lesson, activity: LessonActivity) -> dict[str, Any]:
    """Combine a lesson's parts and exercises with the learner's saved activity.

    This is the one place that decides what is done: an exercise is done when it was ever solved,
    or, for code, when its last saved result passed. The page and its scripts only show the result.
    An answer in a part that changes with the variant is restored only for the variant it was
    given for, since another variant has other numbers; whether it was ever solved is kept.

    Parameters
    ----------
    lesson : qkv.lessons.Lesson
        Supplies the parts and the exercises, in page order.
    activity : qkv.store.LessonActivity
        The learner's saved work.

    Returns
    -------
    dict
        ``{"lesson_id", "variant_seed", "done", "total", "parts": [...], "exercises": {...},
        "code": {...}}``; ``done`` and ``total`` count the exercises of the parts that count
        toward done; each part is ``{"id", "title", "done", "total", "exercise_ids", "complete"}``;
        each code exercise is ``{"source", "result", "draft", "failed_runs", "solution", "hints", ...}``,
        where ``draft`` is the editor's latest saved text, ``solution`` is None (no reference solution)
        or ``{"open", "after_failed_runs"}`` and ``hints`` is the "Stuck?" ladder (``hints_state``).
        ``solved_after_solution`` and ``solved_after_hints`` count the exercises that count toward done
        solved after that help (a solve after the solution is not also one after hints). ``solves`` lists
        the exercises that count and are done, each ``{"exercise_id", "helped", "solved_at"}`` (the help:
        ``solution``, ``hints`` or ``""``; the first solve's time, ISO 8601 UTC), what a lesson's score and
        its lateness are computed from (``HelpPolicy.credit``); ``worked_at`` is the learner's latest work
        on the lesson (ISO 8601 UTC, or None).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> parts = (NS(id="drill", title="Drill", changes_with_variant=True, counts_toward_done=True),)
    >>> lesson = NS(id="L9.1", parts=parts, exercises={"v": NS(kind="letter", part="drill")})
    >>> progress = build_progress(lesson, LessonActivity("L9.1", None))
    >>> progress["exercises"]["v"]["status"], progress["exercises"]["v"]["done"]
    ('untouched', False)
    >>> progress["parts"]
    [{'id': 'drill', 'title': 'Drill', 'done': 0, 'total': 1, 'exercise_ids': ['v'], 'complete': False}]
    """
    exercises: dict[str, dict[str, Any]] = {}
    code: dict[str, dict[str, Any]] = {}
    seed = activity.variant_seed
    bound_to_variant = {part.id for part in lesson.parts if part.changes_with_variant}
    for exercise_id, exercise in lesson.exercises.items():
        done = activity.exercises.get(exercise_id)
        status = "untouched" if done is None else "correct" if done.solved else "attempted"
        entry: dict[str, Any] = {
            "kind": exercise.kind,
            "status": status,
            "done": status == "correct",
            "attempts": done.attempts if done else 0,
            "last_answer": None,
            "feedback": None,
        }
        if exercise.kind == "code":
            code[exercise_id] = _code_progress(exercise, done, activity.drafts.get(exercise_id))
            entry["done"] = entry["done"] or _passed(code[exercise_id]["result"])
        elif done is not None and done.last_answer is not None:
            last = done.last_answer
            if exercise.part not in bound_to_variant or last.variant_seed == seed:
                entry["last_answer"] = last.answer
                entry["feedback"] = {
                    "correct": last.correct,
                    "message": last.message,
                    "counted_as_attempt": last.counted_as_attempt,
                }
        exercises[exercise_id] = entry
    parts, counted = _parts_progress(lesson, exercises)
    after = [
        eid for eid in counted if exercises[eid]["done"] and code.get(eid, {}).get("solved_after_solution")
    ]
    after_hints = [
        eid
        for eid in counted
        if exercises[eid]["done"] and eid not in after and code.get(eid, {}).get("solved_after_hints")
    ]
    return {
        "lesson_id": lesson.id,
        "variant_seed": seed,
        "solves": _solves(activity, [eid for eid in counted if exercises[eid]["done"]], after, after_hints),
        "worked_at": _iso(
            max((e.last_activity_at for e in activity.exercises.values() if e.last_activity_at), default=None)
        ),
        "solved_after_solution": len(after),
        "solved_after_hints": len(after_hints),
        "done": sum(1 for exercise_id in counted if exercises[exercise_id]["done"]),
        "total": len(counted),
        "parts": parts,
        "exercises": exercises,
        "code": code,
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat() + "Z"


def _solves(activity: LessonActivity, done: list[str], after: list[str], after_hints: list[str]) -> list[Any]:
    """The counted exercises done: how each was helped and when it was first solved."""
    solves = []
    for exercise_id in done:
        found = activity.exercises.get(exercise_id)
        helped = "solution" if exercise_id in after else "hints" if exercise_id in after_hints else ""
        at = found.first_solved_at if found else None
        solves.append({"exercise_id": exercise_id, "helped": helped, "solved_at": _iso(at)})
    return solves


def _code_progress(exercise: Any, done: ExerciseActivity | None, draft: str | None) -> dict[str, Any]:
    """A code exercise's last program and result, its draft, and whether its solution is open."""
    last_code = done.last_code if done else None
    failed_runs = done.failed_runs if done else 0
    return {
        "source": last_code.source if last_code else None,
        "result": last_code.result if last_code else None,
        "draft": draft,
        "failed_runs": failed_runs,
        "solution": _solution_state(getattr(exercise, "solution", None), done, failed_runs),
        "solved_after_solution": bool(done.solved_after_solution) if done else False,
        "solved_after_hints": bool(done.solved_after_hints) if done else False,
        "hints": hints_state(exercise, done),
    }


def hints_state(exercise: Any, done: ExerciseActivity | None) -> dict[str, Any]:
    """The "Stuck?" ladder as the learner stands on it: ``total`` hints, the first ``open`` of them earned,
    ``shown`` to them so far, and ``next`` (a sentence: what opens the next one).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> state = hints_state(NS(hints=("a", "b"), solution_hints=()), None)
    >>> state["total"], state["open"], state["shown"]
    (2, 0, 0)
    >>> state["next"]
    'Hint 1 of 2 opens after a run of your own code that does not pass all the tests.'

    """
    total = len(getattr(exercise, "hints", ()))
    marked = tuple(getattr(exercise, "solution_hints", ()))
    solved = bool(done.solved) if done else False
    failed_runs = done.failed_runs if done else 0
    opened = hints_open(total, marked, solved=solved, failed_runs=failed_runs)
    return {
        "total": total,
        "open": opened,
        "shown": done.hints_shown if done else 0,
        "next": next_hint_sentence(total, opened, failed_runs, marked),
    }


def _parts_progress(
    lesson: Lesson, exercises: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each part's exercises and how many are done; the ids of the exercises that count toward done."""
    parts = []
    counted: list[str] = []
    for part in lesson.parts:
        ids = [exercise_id for exercise_id, exercise in lesson.exercises.items() if exercise.part == part.id]
        solved = sum(1 for exercise_id in ids if exercises[exercise_id]["done"])
        parts.append(
            {
                "id": part.id,
                "title": part.title,
                "done": solved,
                "total": len(ids),
                "exercise_ids": ids,
                "complete": bool(ids) and solved == len(ids),
            }
        )
        if part.counts_toward_done:
            counted += ids
    return parts, counted


def solution_open(solved: bool, failed_runs: int) -> bool:
    """Whether a code exercise's reference solution is earned: it was solved, or enough runs failed.

    Examples
    --------
    >>> solution_open(False, SOLUTION_AFTER_FAILED_RUNS - 1), solution_open(False, SOLUTION_AFTER_FAILED_RUNS)
    (False, True)
    """
    return solved or failed_runs >= SOLUTION_AFTER_FAILED_RUNS


def _solution_state(solution: str | None, done: Any, failed_runs: int) -> dict[str, Any] | None:
    """None when the exercise has no reference solution; the text itself is never part of PROGRESS."""
    if solution is None:
        return None
    solved = bool(done.solved) if done else False
    return {"open": solution_open(solved, failed_runs), "after_failed_runs": SOLUTION_AFTER_FAILED_RUNS}


def _passed(result: Any) -> bool:
    return isinstance(result, dict) and result.get("status") == "pass"
