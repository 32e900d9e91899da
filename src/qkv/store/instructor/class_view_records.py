"""The records the class view returns (a learner's standing, an exercise's counts, a group of wrong
answers, a page of events, the rule for who is stuck) and the SQL they are read with: the counts per
exercise from the kept totals, the solved exercises per lesson, one event or program as a record.
:mod:`qkv.store.instructor.class_view` re-exports them.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    Table,
    case,
    func,
    literal,
    select,
)

from qkv.store.instructor.courses import LearnerScope
from qkv.store.instructor.instructors import AnswerEvent, CodeEvent, HelpEvent
from qkv.store.sql.tables import Answer, CodeSubmission, ExerciseTotals, HelpShown, LearnerRow

_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]
_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_HELP: Table = HelpShown.__table__  # type: ignore[assignment]
__all__ = [
    "ACTIVE_MINUTES",
    "DEFAULT_STUCK_ATTEMPTS",
    "DEFAULT_STUCK_MINUTES",
    "CurrentExercise",
    "EventPage",
    "ExerciseCounts",
    "LearnerStanding",
    "Standing",
    "StuckRule",
    "WrongAnswerGroup",
    "median_of_histogram",
]

DEFAULT_STUCK_ATTEMPTS = 3
DEFAULT_STUCK_MINUTES = 10
ACTIVE_MINUTES = 15


@dataclass(frozen=True)
class StuckRule:
    """When a learner counts as stuck on the exercise they are working on.

    A learner is *working on* the exercise they touched last if that was at most ``active_minutes``
    ago; they are *stuck* on it when it is not solved and they have made ``attempts`` failed attempts
    on it, or have been on it for ``minutes`` minutes without solving it.

    Raises
    ------
    ValueError
        If a number is not a whole number of at least 1.

    Examples
    --------
    >>> StuckRule().attempts, StuckRule().minutes
    (3, 10)
    >>> StuckRule(attempts=0)
    Traceback (most recent call last):
    ...
    ValueError: The stuck rule's attempts must be a whole number of at least 1, not 0.
    """

    attempts: int = DEFAULT_STUCK_ATTEMPTS
    minutes: int = DEFAULT_STUCK_MINUTES
    active_minutes: int = ACTIVE_MINUTES

    def __post_init__(self) -> None:
        for name in ("attempts", "minutes", "active_minutes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"The stuck rule's {name} must be a whole number of at least 1, not {value!r}."
                )


class Standing(enum.Enum):
    """Where a learner is on the exercise they touched last."""

    SOLVED = "solved"
    WORKING = "working"
    STUCK = "stuck"
    AWAY = "away"  # not active within the rule's window


@dataclass(frozen=True)
class CurrentExercise:
    """The exercise a learner touched last, with their totals on it."""

    lesson_id: str
    exercise_id: str
    solved: bool
    attempts: int
    started_at: datetime
    last_activity_at: datetime

    def minutes_on(self, now: datetime) -> float:
        """Minutes since the learner began this exercise (never negative)."""
        return max(0.0, (now - self.started_at).total_seconds() / 60)

    def standing(self, now: datetime, rule: StuckRule) -> Standing:
        """Solved, working, stuck or away, by ``rule`` at ``now``.

        Examples
        --------
        >>> t = datetime(2024, 1, 1, 12, 0)
        >>> current = CurrentExercise("L9.1", "area", False, 3, t, t)
        >>> current.standing(t, StuckRule()).value, current.standing(t, StuckRule(attempts=4)).value
        ('stuck', 'working')
        >>> current.standing(t + timedelta(minutes=11), StuckRule(attempts=9)).value
        'stuck'
        >>> current.standing(t + timedelta(hours=1), StuckRule()).value
        'away'
        """
        if now - self.last_activity_at > timedelta(minutes=rule.active_minutes):
            return Standing.AWAY
        if self.solved:
            return Standing.SOLVED
        if self.attempts >= rule.attempts or self.minutes_on(now) >= rule.minutes:
            return Standing.STUCK
        return Standing.WORKING


@dataclass(frozen=True)
class LearnerStanding:
    """One learner in the grid: exercises solved per lesson (those that count), totals, where they are."""

    id: str
    display_name: str | None
    last_activity_at: datetime | None
    solved_by_lesson: dict[str, int]
    started_by_lesson: dict[str, int]
    solved: int
    submissions: int
    current: CurrentExercise | None
    external_id: str | None = None  # a roster's or an LMS's id: shown beside the name
    # Of the solves counted per lesson: those after the reference solution was shown, and those after hints
    # only (the instructor's credit for each applies to them; qkv.web.solution_credit).
    after_solution_by_lesson: dict[str, int] = field(default_factory=dict)
    after_hints_by_lesson: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The display name, or ``anonymous`` and the id's first 8 characters."""
        return self.display_name or f"anonymous {self.id[:8]}"


@dataclass(frozen=True)
class ExerciseCounts:
    """One exercise over the class, from the kept totals.

    ``solvers_counted`` are the solvers whose attempts to solve are known (saved after migration 10); the
    first-try share and the median are over them.
    """

    lesson_id: str
    exercise_id: str
    started: int
    solved: int
    solved_first_try: int
    solvers_counted: int
    median_attempts: float | None
    attempts: int
    submissions: int

    @property
    def first_try_share(self) -> float | None:
        """Of the solvers counted, the share who solved it at their first attempt (None: no solver)."""
        return self.solved_first_try / self.solvers_counted if self.solvers_counted else None


@dataclass(frozen=True)
class WrongAnswerGroup:
    """Identical kept wrong answers to one exercise: the text, its named mistake, its variant, how often."""

    exercise_id: str
    answer: str
    mistake: str | None
    variant_seed: int | None
    count: int
    learners: int


@dataclass(frozen=True)
class EventPage:
    """One page of a learner's events, oldest first, and how many there are in all."""

    answers: list[AnswerEvent]
    programs: list[CodeEvent]
    total: int
    offset: int
    limit: int
    order: list[tuple[str, int]] = field(default_factory=list)  # ("answer" | "program" | "help", id) in order
    help: list[HelpEvent] = field(default_factory=list)  # hints and solutions shown


def median_of_histogram(histogram: Mapping[int, int]) -> float | None:
    """The median of values given as ``{value: how many}``.

    Examples
    --------
    >>> median_of_histogram({1: 2, 3: 1}), median_of_histogram({1: 1, 2: 1}), median_of_histogram({})
    (1.0, 1.5, None)
    """
    total = sum(histogram.values())
    if not total:
        return None
    ordered = sorted(histogram.items())

    def nth(n: int) -> int:  # the n-th value (0-based) of the sorted sample
        seen = 0
        for value, count in ordered:
            seen += count
            if n < seen:
                return value
        raise AssertionError("unreachable: n is below the total")

    middle = total // 2
    if total % 2:
        return float(nth(middle))
    return (nth(middle - 1) + nth(middle)) / 2


def _exercise_counts_query() -> Select[Any]:
    """Per exercise and attempts to solve: learners, solvers, attempts, submissions (built once)."""
    t = _TOTALS.c
    solved_in = case((t.solved, t.attempts_to_solve), else_=None).label("solved_in")
    # One scan of the index on (lesson, exercise, solved, …): grouped by the attempts each solver needed
    # too, then summed up per exercise in Python (a few rows per exercise).
    return select(
        t.lesson_id,
        t.exercise_id,
        solved_in,
        func.count().label("learners"),
        func.sum(case((t.solved, 1), else_=0)).label("solved"),
        func.sum(t.attempts).label("attempts"),
        func.sum(t.submissions).label("submissions"),
    ).group_by(t.lesson_id, t.exercise_id, solved_in)


_EXERCISE_COUNTS = _exercise_counts_query()


def _counted(counted: Mapping[str, Sequence[str]]) -> ColumnElement[int]:
    """1 for a row of an exercise that counts toward done (by lesson), else 0.

    A CASE on the lesson first: each row compares its lesson until one matches, then looks its exercise up
    in that lesson's list only (an OR of every lesson's test cost several times more on SQLite).
    """
    t = _TOTALS.c
    whens = [
        (t.lesson_id == lesson, case((t.exercise_id.in_(list(ids)), 1), else_=0))
        for lesson, ids in counted.items()
        if ids
    ]
    return case(*whens, else_=0) if whens else literal(0)


def _per_lesson(counted: Mapping[str, Sequence[str]], scope: LearnerScope) -> Select[Any]:
    """Per learner and lesson: counted exercises solved (and of those, after the solution and after hints
    only), counted exercises started, submissions and the last activity."""
    t = _TOTALS.c
    after_hints = (
        t.solved & t.solved_after_solution.is_not(True) & (func.coalesce(t.hints_before_solve, 0) > 0)
    )
    rows = (
        select(
            t.learner_id,
            t.lesson_id,
            t.submissions,
            t.last_activity_at,
            _counted(counted).label("counts"),
            case((t.solved, 1), else_=0).label("solved"),
            case((t.solved & t.solved_after_solution.is_(True), 1), else_=0).label("after_solution"),
            case((after_hints, 1), else_=0).label("after_hints"),
        )
        .where(scope.admits(t.learner_id))
        .subquery()
    )
    r = rows.c
    return select(
        r.learner_id,
        r.lesson_id,
        func.sum(r.counts * r.solved).label("solved"),
        func.sum(r.counts * r.after_solution).label("after_solution"),
        func.sum(r.counts * r.after_hints).label("after_hints"),
        func.sum(r.counts).label("started"),
        func.sum(r.submissions).label("submissions"),
        func.max(r.last_activity_at).label("last_activity_at"),
    ).group_by(r.learner_id, r.lesson_id)


def _event(row: Any) -> AnswerEvent:
    return AnswerEvent(
        id=int(row.id),
        learner_id=row.learner_id,
        lesson_id=row.lesson_id,
        exercise_id=row.exercise_id,
        answer=row.answer,
        correct=bool(row.correct),
        message=row.message,
        counted_as_attempt=bool(row.counted_as_attempt),
        mistake=row.mistake,
        variant_seed=row.variant_seed,
        created_at=row.created_at,
    )


def _program(row: Any) -> CodeEvent:
    try:
        result = json.loads(row.result_json)
    except ValueError:
        result = {}
    return CodeEvent(
        id=int(row.id),
        learner_id=row.learner_id,
        lesson_id=row.lesson_id,
        exercise_id=row.exercise_id,
        source=row.source,
        status=row.status,
        passed=int(row.passed),
        total=int(row.total),
        result=result if isinstance(result, dict) else {},
        created_at=row.created_at,
    )
