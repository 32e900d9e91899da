"""Retention: how many answers and programs are kept per learner and exercise, and pruning the rest."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Table, delete, func, select

from qkv.store.work.budget import Keeping
from qkv.store.work.exercise_key import ExerciseKey, rows_of

DEFAULT_KEEP = 20  # answers and programs kept per learner and exercise (besides the first right / best one)


def check_keep(keep: int) -> int:
    """``keep`` if it is a whole number of at least 1; otherwise a ValueError in a sentence.

    Examples
    --------
    >>> check_keep(3)
    3
    >>> check_keep(0)
    Traceback (most recent call last):
    ...
    ValueError: keep must be a whole number of at least 1, not 0.
    """
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"keep must be a whole number of at least 1, not {keep!r}.")
    return keep


def prune(
    conn: Connection, table: Table, key: ExerciseKey, *, keep: int, keep_also: Any, keeping: Keeping
) -> None:
    """Delete the rows of ``key`` beyond the last ``keep`` (the last one past a client's budget),
    except the one ``keep_also`` selects (a scalar subquery of an id, or None).

    Examples
    --------
    >>> from sqlalchemy import func, insert, select
    >>> from qkv.store.sql.clock import utc_now
    >>> from qkv.store.sql.database import Database
    >>> from qkv.store.sql.tables import Answer
    >>> answers = Answer.__table__
    >>> database = Database("sqlite://")
    >>> key = ("a" * 36, "L9.1", "area")
    >>> with database.write() as conn:
    ...     database.ensure_learner(conn, key[0])
    ...     for text in "12345":
    ...         _ = conn.execute(insert(answers).values(
    ...             learner_id=key[0], lesson_id=key[1], exercise_id=key[2], answer=text, correct=text == "1",
    ...             message="", counted_as_attempt=True, created_at=utc_now()))
    ...     first_right = select(func.min(answers.c.id)).where(answers.c.correct).scalar_subquery()
    ...     prune(conn, answers, key, keep=2, keep_also=first_right, keeping=Keeping.ALL)
    >>> with database.read() as conn:
    ...     conn.execute(select(answers.c.answer).order_by(answers.c.id)).scalars().all()
    ['1', '4', '5']
    >>> database.close()
    """
    kept = keep if keeping is Keeping.ALL else 1
    newest = select(table.c.id).where(*rows_of(table, key)).order_by(table.c.id.desc()).limit(kept).subquery()
    conn.execute(
        delete(table).where(
            *rows_of(table, key),
            table.c.id.not_in(select(newest.c.id)),
            table.c.id != func.coalesce(keep_also, -1),
        )
    )


__all__ = ["DEFAULT_KEEP", "check_keep", "prune"]
