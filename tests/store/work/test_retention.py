"""Bounded storage: only the last few answers and programs are kept, but every count stays exact."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from qkv.store import Store

ADA = "a" * 36


def _rows(store: Store, table: str, column: str) -> list[object]:
    with store.database.engine.connect() as conn:
        return [row[0] for row in conn.execute(text(f"SELECT {column} FROM {table} ORDER BY id"))]


def test_answers_keep_the_last_few_and_the_first_right_one_with_exact_counts(database_url: str) -> None:
    store = Store(database_url, keep=3)
    try:
        for number in range(10):
            store.progress.record_answer(
                ADA,
                "L9.1",
                "area",
                f"{number}",
                correct=number == 3,
                message="m",
                counted_as_attempt=number != 9,
            )
        assert _rows(store, "answers", "answer") == [
            "3",
            "7",
            "8",
            "9",
        ]  # the first right one, then the last 3
        activity = store.progress.lesson_activity(ADA, "L9.1").exercises["area"]
        assert (activity.attempts, activity.submissions, activity.solved) == (9, 10, True)
        assert activity.last_answer is not None and activity.last_answer.answer == "9"
        (row,) = store.gradebook.rows()
        assert (row.attempts, row.submissions, row.solved) == (9, 10, True)
        assert row.first_solved_at is not None and row.last_activity_at >= row.first_solved_at
    finally:
        store.close()


def test_programs_keep_the_last_few_and_the_best_one_with_exact_counts(database_url: str) -> None:
    store = Store(database_url, keep=2)
    try:
        for passed in (1, 5, 2, 3, 0, 1):
            tests = [{"status": "pass"}] * passed + [{"status": "fail"}] * (5 - passed)
            status = "pass" if passed == 5 else "fail"
            store.code.record(ADA, "L9.1", "shapes", f"# passes {passed}", {"status": status, "tests": tests})
        assert _rows(store, "code_submissions", "passed") == [5, 0, 1]  # the best, then the last 2
        activity = store.progress.lesson_activity(ADA, "L9.1").exercises["shapes"]
        assert (activity.attempts, activity.submissions, activity.solved) == (6, 6, True)
        assert activity.last_code is not None and activity.last_code.source == "# passes 1"
        (row,) = store.gradebook.rows()
        assert (row.submissions, row.solved, row.best_score) == (6, True, "5/5")
    finally:
        store.close()


def test_other_learners_and_exercises_are_not_pruned(database_url: str) -> None:
    store = Store(database_url, keep=1)
    try:
        store.progress.record_answer(ADA, "L9.1", "area", "1", correct=False, message="m")
        store.progress.record_answer("b" * 36, "L9.1", "area", "2", correct=False, message="m")
        store.progress.record_answer(ADA, "L9.1", "perimeter", "3", correct=False, message="m")
        store.progress.record_answer(ADA, "L9.1", "area", "4", correct=False, message="m")
        assert _rows(store, "answers", "answer") == ["2", "3", "4"]
    finally:
        store.close()


@pytest.mark.parametrize("keep", [0, -1, True, 2.5])
def test_keep_must_be_a_positive_whole_number(keep: object) -> None:
    with pytest.raises(ValueError, match=rf"^keep must be a whole number of at least 1, not {keep!r}\.$"):
        Store("sqlite://", keep=keep)  # type: ignore[arg-type]
