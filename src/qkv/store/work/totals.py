"""The kept totals of each learner and exercise: the gradebook's numbers, exact whatever rows were pruned."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, case, func, literal, update

from qkv.store.sql.database import Database
from qkv.store.sql.tables import ExerciseTotals, HelpShown
from qkv.store.work.exercise_key import ExerciseKey, rows_of

_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]
_HELP: Table = HelpShown.__table__  # type: ignore[assignment]


def count_work(
    conn: Connection,
    key: ExerciseKey,
    now: datetime,
    *,
    attempt: bool,
    solved: bool,
    score: tuple[int, int] | None = None,
    new_try: bool = True,
    copies_solution: bool = False,
) -> None:
    """Add one answer or program to the learner's totals for the exercise (one atomic row update).

    Parameters
    ----------
    conn : sqlalchemy.Connection
        A connection inside ``Database.write()``.
    key : ExerciseKey
        The learner, lesson and exercise.
    now : datetime
        The time of the work (UTC).
    attempt : bool
        Whether it counts as an attempt.
    solved : bool
        Whether it solved the exercise (the first time is kept as ``first_solved_at``).
    score : (passed, total), optional
        A program's tests passed of its tests; the best is kept.
    new_try : bool
        For a program that did not pass: whether it counts among the failed runs.
    copies_solution : bool
        Whether the work is the exercise's reference solution (the caller's judgement): a first solve
        with it is marked ``solved_after_solution`` as one after the solution was shown, whoever was
        shown it.

    Examples
    --------
    >>> from sqlalchemy import select
    >>> from qkv.store.sql.clock import utc_now
    >>> database = Database("sqlite://")
    >>> with database.write() as conn:
    ...     database.ensure_learner(conn, "a" * 36)
    ...     count_work(conn, ("a" * 36, "L9.1", "area"), utc_now(), attempt=True, solved=False)
    ...     count_work(conn, ("a" * 36, "L9.1", "area"), utc_now(), attempt=True, solved=True)
    >>> with database.read() as conn:
    ...     row = conn.execute(select(ExerciseTotals.__table__)).one()
    >>> row.attempts, row.submissions, row.solved, row.attempts_to_solve
    (2, 2, True, 2)
    >>> database.close()
    """
    learner_id, lesson_id, exercise_id = key
    zero = {
        "attempts": 0,
        "submissions": 0,
        "solved": False,
        "failed_runs": 0,
        "last_activity_at": now,
        "started_at": now,
    }
    Database.insert_ignore(
        conn,
        _TOTALS,
        {"learner_id": learner_id, "lesson_id": lesson_id, "exercise_id": exercise_id, **zero},
        ["learner_id", "lesson_id", "exercise_id"],
    )
    t = _TOTALS.c
    changes: dict[str, Any] = {
        "attempts": t.attempts + (1 if attempt else 0),
        "submissions": t.submissions + 1,
        "last_activity_at": now,
    }
    if solved:
        changes["solved"] = True
        changes["first_solved_at"] = func.coalesce(t.first_solved_at, now)
        # The right-hand side reads the row as it was, so this attempt is added here too.
        changes["attempts_to_solve"] = case(
            (t.solved, t.attempts_to_solve), else_=t.attempts + (1 if attempt else 0)
        )
        # The first solve is marked when the reference solution had been shown before it, or is it.
        shown = literal(True) if copies_solution else t.solution_shown_at.is_not(None)
        changes["solved_after_solution"] = case((t.solved, t.solved_after_solution), else_=shown)
        # And how many hints had been shown before it.
        changes["hints_before_solve"] = case(
            (t.solved, t.hints_before_solve), else_=func.coalesce(t.hints_shown, 0)
        )
    if score is not None:
        if not solved and new_try:
            changes["failed_runs"] = t.failed_runs + 1
        better = (t.best_passed.is_(None)) | (t.best_passed < score[0])
        changes["best_passed"] = case((better, score[0]), else_=t.best_passed)
        changes["best_total"] = case((better, score[1]), else_=t.best_total)
    conn.execute(update(_TOTALS).where(*rows_of(_TOTALS, key)).values(**changes))


def mark_solution_shown(conn: Connection, key: ExerciseKey, now: datetime) -> None:
    """Note that the learner was shown the exercise's reference solution (the first time is kept).

    Examples
    --------
    >>> from sqlalchemy import select
    >>> from qkv.store.sql.clock import utc_now
    >>> database = Database("sqlite://")
    >>> key = ("a" * 36, "L9.1", "code")
    >>> with database.write() as conn:
    ...     database.ensure_learner(conn, key[0])
    ...     count_work(conn, key, utc_now(), attempt=True, solved=False, score=(0, 2))
    ...     mark_solution_shown(conn, key, utc_now())
    ...     count_work(conn, key, utc_now(), attempt=True, solved=True, score=(2, 2))
    >>> with database.read() as conn:
    ...     conn.execute(select(ExerciseTotals.__table__.c.solved_after_solution)).scalar()
    True
    >>> database.close()
    """
    t = _TOTALS.c
    shown = {"solution_shown_at": func.coalesce(t.solution_shown_at, now)}
    conn.execute(update(_TOTALS).where(*rows_of(_TOTALS, key)).values(**shown))


def mark_help_shown(conn: Connection, key: ExerciseKey, hint: int, now: datetime) -> bool:
    """Keep that the learner was shown hint ``hint`` (from 1) of the exercise, or its reference solution
    (``hint`` 0), the first time only; a new hint is counted in the totals' ``hints_shown``, the solution
    marks ``solution_shown_at``. Whether it was new.

    Examples
    --------
    >>> from sqlalchemy import select
    >>> from qkv.store.sql.clock import utc_now
    >>> database = Database("sqlite://")
    >>> key = ("a" * 36, "L9.1", "code")
    >>> with database.write() as conn:
    ...     database.ensure_learner(conn, key[0])
    ...     count_work(conn, key, utc_now(), attempt=True, solved=False, score=(0, 2))
    ...     mark_help_shown(conn, key, 1, utc_now()), mark_help_shown(conn, key, 1, utc_now())
    ...     count_work(conn, key, utc_now(), attempt=True, solved=True, score=(2, 2))
    (True, False)
    >>> with database.read() as conn:
    ...     conn.execute(select(_TOTALS.c.hints_shown, _TOTALS.c.hints_before_solve)).one()
    (1, 1)
    >>> database.close()
    """
    learner_id, lesson_id, exercise_id = key
    row = {"learner_id": learner_id, "lesson_id": lesson_id, "exercise_id": exercise_id, "hint": hint}
    new = Database.insert_ignore(conn, _HELP, {**row, "shown_at": now}, list(row))
    if hint == 0:
        mark_solution_shown(conn, key, now)
    elif new:
        t = _TOTALS.c
        counted = {"hints_shown": func.coalesce(t.hints_shown, 0) + 1}
        conn.execute(update(_TOTALS).where(*rows_of(_TOTALS, key)).values(**counted))
    return new


__all__ = ["count_work", "mark_help_shown", "mark_solution_shown"]
