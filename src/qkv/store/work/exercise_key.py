"""The key of one learner's work on one exercise, and the conditions that pick its rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table

ExerciseKey = tuple[str, str, str]
"""(learner_id, lesson_id, exercise_id): one learner's work on one exercise."""


def rows_of(table: Table, key: ExerciseKey) -> tuple[Any, ...]:
    """The conditions that pick one learner's rows for one exercise in ``table``.

    Examples
    --------
    >>> from qkv.store.sql.tables import Answer
    >>> for condition in rows_of(Answer.__table__, ("a", "L9.1", "area")):
    ...     print(condition)
    answers.learner_id = :learner_id_1
    answers.lesson_id = :lesson_id_1
    answers.exercise_id = :exercise_id_1
    """
    learner_id, lesson_id, exercise_id = key
    return (
        table.c.learner_id == learner_id,
        table.c.lesson_id == lesson_id,
        table.c.exercise_id == exercise_id,
    )


__all__ = ["ExerciseKey", "rows_of"]
