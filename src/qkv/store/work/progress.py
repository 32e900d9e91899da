"""A learner's progress through a lesson: the variant they work on, their answers, and all of it read back.

``lesson_activity`` reads a lesson's work whole, answers and programs and drafts alike: the counts
from the kept totals (exact after old rows were pruned), the last answer or program from the rows.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Row, Table, func, insert, select, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import Answer, CodeDraft, CodeSubmission, ExerciseTotals, LessonState
from qkv.store.work.activity import AnswerRecord, CodeRecord, ExerciseActivity, LessonActivity
from qkv.store.work.budget import Keeping, text_bytes
from qkv.store.work.client_budgets import ClientBudgets
from qkv.store.work.exercise_key import rows_of
from qkv.store.work.program_texts import programs
from qkv.store.work.retention import DEFAULT_KEEP, check_keep, prune
from qkv.store.work.totals import count_work

_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_STATE: Table = LessonState.__table__  # type: ignore[assignment]
_DRAFTS: Table = CodeDraft.__table__  # type: ignore[assignment]
_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]

MAX_MISTAKE_ID = 64


class Progress:
    """The learners' variants and answers, and each lesson's saved work read back.

    Parameters
    ----------
    database : Database
        The database to use.
    budgets : ClientBudgets
        The clients' storage budgets the answers count against.
    keep : int
        Answers kept per learner and exercise besides the first right one.

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> progress = Progress(database, ClientBudgets(database))
    >>> progress.record_answer("a" * 36, "L9.1", "area", "12", correct=True, message="Right.")
    <Keeping.ALL: 'all'>
    >>> progress.lesson_activity("a" * 36, "L9.1").exercises["area"].solved
    True
    >>> database.close()
    """

    def __init__(self, database: Database, budgets: ClientBudgets, keep: int = DEFAULT_KEEP) -> None:
        self.database = database
        self.budgets = budgets
        self.keep = check_keep(keep)

    def variant_seed(self, learner_id: str, lesson_id: str) -> int | None:
        """The variant the learner works on in this lesson (None = the page's own numbers).

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> progress = Progress(database, ClientBudgets(database))
        >>> progress.variant_seed("a" * 36, "L9.1") is None
        True
        >>> database.close()
        """
        with self.database.read() as conn:
            seed: int | None = conn.execute(
                select(_STATE.c.variant_seed).where(
                    _STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id
                )
            ).scalar()
        return seed

    def set_variant_seed(self, learner_id: str, lesson_id: str, seed: int | None) -> None:
        """Remember the learner's variant for this lesson.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> progress = Progress(database, ClientBudgets(database))
        >>> progress.set_variant_seed("a" * 36, "L9.1", 7)
        >>> progress.variant_seed("a" * 36, "L9.1")
        7
        >>> database.close()
        """
        now = utc_now()
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            self.database.insert_ignore(
                conn,
                _STATE,
                {"learner_id": learner_id, "lesson_id": lesson_id, "variant_seed": seed, "updated_at": now},
                ["learner_id", "lesson_id"],
            )
            conn.execute(
                update(_STATE)
                .where(_STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id)
                .values(variant_seed=seed, updated_at=now)
            )

    def record_answer(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        answer: str,
        *,
        correct: bool,
        message: str,
        counted_as_attempt: bool = True,
        variant_seed: int | None = None,
        mistake: str | None = None,
        client: str | None = None,
    ) -> Keeping:
        """Save one answer: counted, then pruned to the last ``keep`` and the first right one.

        Parameters
        ----------
        learner_id, lesson_id, exercise_id : str
            Whose answer, to which exercise.
        answer : str
            What the learner answered.
        correct : bool
            Whether it was right.
        message : str
            The feedback the learner saw.
        counted_as_attempt : bool
            Whether it counts as an attempt (an answer in the wrong form does not).
        variant_seed : int, optional
            The variant it was given for.
        mistake : str, optional
            The id of the named mistake the answer matched (at most 64 characters).
        client : str, optional
            The client (an address) whose storage budget the answer counts against; the answer is
            counted in the gradebook whatever the budget.

        Returns
        -------
        Keeping
            What was kept of the answer.

        Raises
        ------
        ValueError
            For text that cannot be stored, a mistake id too long, or no client key.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> progress = Progress(database, ClientBudgets(database))
        >>> progress.record_answer("a" * 36, "L9.1", "area", "11", correct=False, message="No.", mistake="x")
        <Keeping.ALL: 'all'>
        >>> progress.lesson_activity("a" * 36, "L9.1").exercises["area"].attempts
        1
        >>> database.close()
        """
        check_storable(answer, "The answer")
        check_storable(message, "The feedback message")
        if mistake is not None and len(check_storable(mistake, "The mistake id")) > MAX_MISTAKE_ID:
            raise ValueError(f"A mistake id may have at most 64 characters, but {mistake[:80]!r} has more.")
        now = utc_now()
        key = (learner_id, lesson_id, exercise_id)
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            kept = self.budgets.keeping(conn, client)
            count_work(conn, key, now, attempt=counted_as_attempt, solved=correct)
            if kept is Keeping.NOTHING:
                return kept
            conn.execute(
                insert(_ANSWERS).values(
                    learner_id=learner_id,
                    lesson_id=lesson_id,
                    exercise_id=exercise_id,
                    variant_seed=variant_seed,
                    answer=answer,
                    correct=correct,
                    message=message,
                    counted_as_attempt=counted_as_attempt,
                    mistake=mistake,
                    created_at=now,
                )
            )
            self.budgets.charge(
                conn, client, text_bytes(answer) + text_bytes(message) + text_bytes(mistake or "")
            )
            first_right = (
                select(func.min(_ANSWERS.c.id))
                .where(*rows_of(_ANSWERS, key), _ANSWERS.c.correct)
                .scalar_subquery()
            )
            prune(conn, _ANSWERS, key, keep=self.keep, keep_also=first_right, keeping=kept)
        return kept

    def lesson_activity(self, learner_id: str, lesson_id: str) -> LessonActivity:
        """Everything the learner saved on one lesson, summarised per exercise.

        The counts come from the kept totals (exact even after old rows were pruned); the last answer or
        program from the rows; the drafts are the editor's latest texts.

        Returns
        -------
        LessonActivity

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> progress = Progress(database, ClientBudgets(database))
        >>> activity = progress.lesson_activity("a" * 36, "L9.1")
        >>> activity.variant_seed, activity.exercises, activity.drafts
        (None, {}, {})
        >>> database.close()
        """
        mine_a = (_ANSWERS.c.learner_id == learner_id, _ANSWERS.c.lesson_id == lesson_id)
        mine_c = (_CODE.c.learner_id == learner_id, _CODE.c.lesson_id == lesson_id)
        with self.database.read() as conn:
            seed = conn.execute(
                select(_STATE.c.variant_seed).where(
                    _STATE.c.learner_id == learner_id, _STATE.c.lesson_id == lesson_id
                )
            ).scalar()
            totals = {
                row.exercise_id: row
                for row in conn.execute(
                    select(_TOTALS).where(
                        _TOTALS.c.learner_id == learner_id, _TOTALS.c.lesson_id == lesson_id
                    )
                )
            }
            last_answer_ids = select(func.max(_ANSWERS.c.id)).where(*mine_a).group_by(_ANSWERS.c.exercise_id)
            last_answers = {
                row.exercise_id: row
                for row in conn.execute(select(_ANSWERS).where(_ANSWERS.c.id.in_(last_answer_ids))).all()
            }
            last_code_ids = select(func.max(_CODE.c.id)).where(*mine_c).group_by(_CODE.c.exercise_id)
            last_code = {
                row.exercise_id: row for row in conn.execute(programs().where(_CODE.c.id.in_(last_code_ids)))
            }
            drafts = {
                row.exercise_id: row.source
                for row in conn.execute(
                    select(_DRAFTS.c.exercise_id, _DRAFTS.c.source).where(
                        _DRAFTS.c.learner_id == learner_id, _DRAFTS.c.lesson_id == lesson_id
                    )
                ).all()
            }
        exercises = {
            exercise_id: _exercise_activity(total, last_answers.get(exercise_id), last_code.get(exercise_id))
            for exercise_id, total in totals.items()
        }
        return LessonActivity(lesson_id=lesson_id, variant_seed=seed, exercises=exercises, drafts=drafts)


def _exercise_activity(total: Row[Any], answer: Row[Any] | None, code: Row[Any] | None) -> ExerciseActivity:
    """One exercise's summary from its kept totals and its last answer and program rows (if any)."""
    return ExerciseActivity(
        attempts=int(total.attempts),
        submissions=int(total.submissions),
        solved=bool(total.solved),
        failed_runs=int(total.failed_runs),
        solved_after_solution=bool(total.solved_after_solution),
        hints_shown=int(total.hints_shown or 0),
        solved_after_hints=bool(total.solved) and int(total.hints_before_solve or 0) > 0,
        first_solved_at=total.first_solved_at,
        last_activity_at=total.last_activity_at,
        last_answer=None
        if answer is None
        else AnswerRecord(
            exercise_id=answer.exercise_id,
            answer=answer.answer,
            correct=bool(answer.correct),
            message=answer.message,
            counted_as_attempt=bool(answer.counted_as_attempt),
            variant_seed=answer.variant_seed,
            created_at=answer.created_at,
        ),
        last_code=None
        if code is None
        else CodeRecord(
            exercise_id=code.exercise_id,
            source=code.source,
            status=code.status,
            passed=int(code.passed),
            total=int(code.total),
            result=json.loads(code.result_json),
            created_at=code.created_at,
        ),
    )


__all__ = ["Progress"]
