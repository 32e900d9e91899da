"""Late work in the instructor's exports: which solves came after the due date in force, and what they earn.

A course's dates (``qkv.store.instructor.due_dates``) are read once per export. A learner's solve of an
exercise is late when it came after their due date of the lesson (an extension included); it then earns the
lesson's late credit, or nothing once the lesson had closed. The gradebook (CSV, JSON) gains ``late`` and
``late_credit`` columns, the LMS file weighs each solve by its credit, and the events file gains the due date
in force for each event (``due_at``); on a course without dates the files are as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from qkv.store import GradebookRow
from qkv.store.instructor.due_dates import DatesInForce, DueDate, Extension, Standing, apply_extension
from qkv.web.solution_credit import HelpPolicy, Solve

LATE_COLUMNS = ["late", "late_credit"]
DUE_COLUMN = "due_at"


@dataclass(frozen=True)
class LateSolves:
    """One learner's counted solves of one dated lesson, and their dates of it."""

    solves: list[Solve]
    dates: DatesInForce


class LateWork:
    """One course's dates, read once, as the exports ask them.

    Parameters
    ----------
    due : list of DueDate
        The course's lesson dates.
    extensions : list of Extension
        The course's extensions.

    Examples
    --------
    >>> due = DueDate("c1", "L4.1", datetime(2026, 1, 10), None, 0.5, datetime(2026, 1, 1))
    >>> late = LateWork([due], [])
    >>> day_after = datetime(2026, 1, 11)
    >>> late.credit("a" * 36, "L4.1", day_after), late.credit("a" * 36, "L4.2", day_after)
    (0.5, 1.0)
    """

    def __init__(self, due: list[DueDate], extensions: list[Extension]) -> None:
        self.due = {d.lesson_id: d for d in due}
        self.extensions = {(e.learner_id, e.lesson_id): e for e in extensions}

    @classmethod
    def of_course(cls, store: Any, course_id: str | None) -> LateWork | None:
        """The course's dates (None: no course, or a course without dates: the files stay as they were)."""
        if course_id is None:
            return None
        due = store.due_dates.for_course(course_id)
        return cls(due, store.due_dates.extensions(course_id)) if due else None

    def dates(self, learner_id: str, lesson_id: str) -> DatesInForce | None:
        """The learner's dates of the lesson, or None."""
        due = self.due.get(lesson_id)
        return None if due is None else apply_extension(due, self.extensions.get((learner_id, lesson_id)))

    def credit(self, learner_id: str, lesson_id: str, at: datetime | None) -> float:
        """What work at ``at`` earns: 1 without dates or on time, the late credit when late, 0 once closed
        (the late step of ``HelpPolicy.credit``, alone)."""
        return float(HelpPolicy().credit([Solve("", at)], self.dates(learner_id, lesson_id)))

    def marks(self, row: GradebookRow) -> dict[str, Any]:
        """The gradebook row's ``late`` (after the due date in force, the close included) and ``late_credit``
        (what its lateness leaves of it: 1, the late credit, 0 after the close; None for an exercise not
        solved)."""
        if not row.solved or row.first_solved_at is None:
            return {"late": None, "late_credit": None}
        standing = Solve("", row.first_solved_at).standing(self.dates(row.learner_id, row.lesson_id))
        late = standing is not Standing.ON_TIME
        return {"late": late, "late_credit": self.credit(row.learner_id, row.lesson_id, row.first_solved_at)}

    def solves(
        self, rows: Iterable[GradebookRow], counted: Mapping[str, Sequence[str]]
    ) -> dict[tuple[str, str], LateSolves]:
        """Per learner and dated lesson, the counted exercises solved (how helped, when) and the dates in
        force: what the class grid weighs each cell with (``HelpPolicy.credit``, as the exports).

        Examples
        --------
        >>> due = DueDate("c1", "L4.1", datetime(2026, 1, 10), None, 0.5, datetime(2026, 1, 1))
        >>> row = GradebookRow("a", None, "L4.1", "q", 1, 1, True, None, datetime(2026, 1, 11), None)
        >>> found = LateWork([due], []).solves([row], {"L4.1": ["q"]})[("a", "L4.1")]
        >>> found.solves, found.dates.late_credit
        ([Solve(helped='', at=datetime.datetime(2026, 1, 11, 0, 0))], 0.5)
        """
        found: dict[tuple[str, str], LateSolves] = {}
        for row in rows:
            dates = self.dates(row.learner_id, row.lesson_id)
            if dates is None or not row.solved or row.exercise_id not in counted.get(row.lesson_id, ()):
                continue
            key = (row.learner_id, row.lesson_id)
            entry = found.setdefault(key, LateSolves([], dates))
            entry.solves.append(Solve(row.helped, row.first_solved_at))
        return found

    def due_at(self, learner_id: str, lesson_id: str) -> str | None:
        """The due date in force for the learner's work on the lesson, ISO 8601 UTC, or None."""
        dates = self.dates(learner_id, lesson_id)
        return None if dates is None else dates.due_at.isoformat() + "Z"


__all__ = ["DUE_COLUMN", "LATE_COLUMNS", "LateSolves", "LateWork"]
