"""The gradebook: one row per learner and exercise, from the kept totals (``qkv progress export``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, select

from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.sql.database import Database
from qkv.store.sql.tables import ExerciseTotals, LearnerRow

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class GradebookRow:
    """One learner on one exercise, as ``qkv progress export`` prints it."""

    learner_id: str
    display_name: str | None
    lesson_id: str
    exercise_id: str
    attempts: int
    submissions: int
    solved: bool
    best_score: str | None
    first_solved_at: datetime | None
    last_activity_at: datetime | None
    solved_after_solution: bool = False  # first solved after the reference solution was shown
    hints_shown: int = 0  # the exercise's hints the learner was shown
    solved_after_hints: bool = False  # first solved after at least one hint was shown

    @property
    def helped(self) -> str:
        """How a solve was helped, in a word: ``solution``, ``hints`` or ``""`` (unhelped, or unsolved).

        Examples
        --------
        >>> row = GradebookRow("a", None, "L9.1", "c", 2, 2, True, "2/2", None, None, solved_after_hints=True)
        >>> row.helped
        'hints'
        """
        if not self.solved:
            return ""
        return "solution" if self.solved_after_solution else "hints" if self.solved_after_hints else ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, times as ISO 8601 strings (UTC).

        Examples
        --------
        >>> from datetime import datetime
        >>> row = GradebookRow("a", None, "L9.1", "area", 1, 1, True, None, datetime(2024, 1, 2), None)
        >>> row.to_dict()["first_solved_at"], row.to_dict()["last_activity_at"]
        ('2024-01-02T00:00:00Z', None)
        """
        row = dict(self.__dict__)
        for key in ("first_solved_at", "last_activity_at"):
            value = row[key]
            row[key] = value.isoformat() + "Z" if value is not None else None
        return row


_UNTOUCHED: dict[str, Any] = {
    "attempts": 0,
    "submissions": 0,
    "solved": False,
    "best_score": None,
    "first_solved_at": None,
    "last_activity_at": None,
}


class Gradebook:
    """Every learner's totals on every exercise.

    Parameters
    ----------
    database : Database
        The database to use.
    scope : LearnerScope
        The learners it reads: every learner by default, or one course's (``within``).

    Examples
    --------
    >>> from qkv.store.learner.learners import Learners
    >>> database = Database("sqlite://")
    >>> _ = Learners(database).set_display_name("a" * 36, "Ada")
    >>> rows = Gradebook(database).rows([("L9.1", "area")])
    >>> [(row.display_name, row.exercise_id, row.attempts) for row in rows]
    [('Ada', 'area', 0)]
    >>> database.close()
    """

    def __init__(self, database: Database, scope: LearnerScope = EVERYONE) -> None:
        self.database = database
        self.scope = scope

    def within(self, scope: LearnerScope) -> Gradebook:
        """The same gradebook over the learners of ``scope`` only.

        Examples
        --------
        >>> from qkv.store.instructor.courses import LearnerScope
        >>> from qkv.store.learner.learners import Learners
        >>> database = Database("sqlite://")
        >>> _ = Learners(database).set_display_name("a" * 36, "Ada")
        >>> course_view = Gradebook(database).within(LearnerScope("c1"))
        >>> len(Gradebook(database).rows([("L9.1", "q")])), course_view.rows()
        (1, [])
        >>> database.close()
        """
        return Gradebook(self.database, scope)

    def rows(self, exercises: Iterable[tuple[str, str]] = ()) -> list[GradebookRow]:
        """One row per learner and exercise, sorted by learner, then the exercises in the order given.

        Parameters
        ----------
        exercises : iterable of (lesson_id, exercise_id)
            Exercises every learner gets a row for, even untouched ones (attempts 0). Exercises
            with saved work get a row whether listed or not (after the listed ones).

        Returns
        -------
        list of GradebookRow

        Examples
        --------
        >>> Gradebook(Database("sqlite://")).rows()
        []
        """
        rows: dict[tuple[str, str, str], dict[str, Any]] = {}
        with self.database.read() as conn:
            learners = {
                row.id: row.display_name
                for row in conn.execute(
                    select(_LEARNERS.c.id, _LEARNERS.c.display_name).where(self.scope.admits(_LEARNERS.c.id))
                )
            }
            for row in conn.execute(select(_TOTALS).where(self.scope.admits(_TOTALS.c.learner_id))):
                best = None if row.best_passed is None else f"{int(row.best_passed)}/{int(row.best_total)}"
                rows[(row.learner_id, row.lesson_id, row.exercise_id)] = {
                    "attempts": int(row.attempts),
                    "submissions": int(row.submissions),
                    "solved": bool(row.solved),
                    "best_score": best,
                    "first_solved_at": row.first_solved_at,
                    "last_activity_at": row.last_activity_at,
                    "solved_after_solution": bool(row.solved_after_solution),
                    "hints_shown": int(row.hints_shown or 0),
                    "solved_after_hints": bool(row.solved) and int(row.hints_before_solve or 0) > 0,
                }
        wanted = list(exercises)
        for learner_id in learners:
            for lesson_id, exercise_id in wanted:
                rows.setdefault((learner_id, lesson_id, exercise_id), dict(_UNTOUCHED))
        order = {key: index for index, key in enumerate(wanted)}
        keys = sorted(rows, key=lambda k: (k[0], order.get((k[1], k[2]), len(order)), k[1], k[2]))
        return [
            GradebookRow(
                learner_id=key[0],
                display_name=learners.get(key[0]),
                lesson_id=key[1],
                exercise_id=key[2],
                **rows[key],
            )
            for key in keys
        ]


__all__ = ["Gradebook", "GradebookRow"]
