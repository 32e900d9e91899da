"""What the store reads back of a learner's work on a lesson: typed, frozen records."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class AnswerRecord:
    """One saved answer."""

    exercise_id: str
    answer: str
    correct: bool
    message: str
    counted_as_attempt: bool
    variant_seed: int | None
    created_at: datetime


@dataclass(frozen=True)
class CodeRecord:
    """One saved code submission; ``result`` is the grader's JSON document."""

    exercise_id: str
    source: str
    status: str
    passed: int
    total: int
    result: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class ExerciseActivity:
    """What a learner did on one exercise: counted attempts, all submissions, solved ever, the latest."""

    attempts: int
    submissions: int
    solved: bool
    last_answer: AnswerRecord | None = None
    last_code: CodeRecord | None = None
    failed_runs: int = 0  # code: the learner's own new programs that did not pass every test
    solved_after_solution: bool = False  # code: first solved after the reference solution was shown
    hints_shown: int = 0  # code: the hints the learner was shown
    solved_after_hints: bool = False  # code: first solved after at least one hint was shown
    first_solved_at: datetime | None = None  # when it was first solved (UTC): its lateness is judged by it
    last_activity_at: datetime | None = None  # the learner's latest work on it (UTC)


@dataclass(frozen=True)
class LessonActivity:
    """A learner's saved work on one lesson."""

    lesson_id: str
    variant_seed: int | None
    exercises: dict[str, ExerciseActivity] = field(default_factory=dict)
    # code exercise id -> the editor's latest saved text (a draft, or the last program sent to the grader)
    drafts: dict[str, str] = field(default_factory=dict)


__all__ = ["AnswerRecord", "CodeRecord", "ExerciseActivity", "LessonActivity"]
