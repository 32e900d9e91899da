"""Merging an anonymous learner's work into an account, when they sign in in that browser.

Every answer and program moves to the account (every attempt is kept). Where both worked on the same
exercise, the counts add up and the better result wins: solved if either solved it, the earlier first
solve, the better best score. A draft, a variant or a name moves only where the account has none (the
newer draft wins). The anonymous learner's row is then deleted: their id means nothing any more.

The merge is one transaction. A table added later that holds rows per learner must be merged here too
(the foreign key to ``learners`` refuses to delete a learner whose rows were left behind). A program still
being graded for the anonymous learner when they sign in is saved under their old id afterwards; the
browser no longer holds that id, so it stays out of the account (rare: it needs a sign-in within the
seconds a grading takes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, delete, func, insert, literal, select, update

from qkv.store.sql.tables import (
    Answer,
    CodeDraft,
    CodeSource,
    CodeSubmission,
    ExerciseTotals,
    HelpShown,
    LearnerRow,
    LearnerSession,
    LearnerSignInToken,
    LessonState,
    MessageFeedback,
    MistakeGroupLearner,
    MistakeNoteShown,
    MistakeSignature,
)

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_SOURCES: Table = CodeSource.__table__  # type: ignore[assignment]
_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]
_DRAFTS: Table = CodeDraft.__table__  # type: ignore[assignment]
_HELP: Table = HelpShown.__table__  # type: ignore[assignment]
_STATE: Table = LessonState.__table__  # type: ignore[assignment]
_TOKENS: Table = LearnerSignInToken.__table__  # type: ignore[assignment]
_SESSIONS: Table = LearnerSession.__table__  # type: ignore[assignment]
_SIGNATURES: Table = MistakeSignature.__table__  # type: ignore[assignment]
_GROUP_LEARNERS: Table = MistakeGroupLearner.__table__  # type: ignore[assignment]
_NOTES_SHOWN: Table = MistakeNoteShown.__table__  # type: ignore[assignment]
_FEEDBACK: Table = MessageFeedback.__table__  # type: ignore[assignment]

__all__ = ["MergeReport", "merge_learner"]


@dataclass(frozen=True)
class MergeReport:
    """What a merge moved into the account: answers, programs, exercises worked on, and drafts.

    Examples
    --------
    >>> MergeReport(0, 0, 0, 0).nothing, MergeReport(3, 1, 2, 0).sentence()
    (True, '3 answers and 1 program on 2 exercises')
    """

    answers: int
    programs: int
    exercises: int
    drafts: int

    @property
    def nothing(self) -> bool:
        """Whether there was nothing to merge."""
        return not (self.answers or self.programs or self.exercises or self.drafts)

    def sentence(self) -> str:
        """The work merged, in words ("3 answers and 1 program on 2 exercises")."""

        def count(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        parts = [count(self.answers, "answer"), count(self.programs, "program")]
        text = " and ".join(parts) + f" on {count(self.exercises, 'exercise')}"
        if self.drafts:
            text += f", with {count(self.drafts, 'draft')}"
        return text


def merge_learner(conn: Connection, anonymous_id: str, account_id: str) -> MergeReport:
    """Move every row of ``anonymous_id`` to ``account_id`` (inside ``Database.write()``).

    Parameters
    ----------
    conn : sqlalchemy.Connection
        A connection inside ``Database.write()``: the merge is one transaction.
    anonymous_id : str
        The browser's anonymous learner (nothing happens if they saved nothing).
    account_id : str
        The account's learner id.

    Returns
    -------
    MergeReport

    Raises
    ------
    ValueError
        If ``anonymous_id`` has an account: one person's accounts are not merged by signing in.

    Examples
    --------
    >>> from qkv.store.learner.accounts import Accounts
    >>> from qkv.store.work.client_budgets import ClientBudgets
    >>> from qkv.store.sql.database import Database
    >>> from qkv.store.work.progress import Progress
    >>> database = Database("sqlite://")
    >>> progress = Progress(database, ClientBudgets(database))
    >>> ada = Accounts(database).find_or_create(None, "s-1", "Ada")
    >>> _ = progress.record_answer("b" * 36, "L9.1", "area", "11", correct=False, message="No.")
    >>> _ = progress.record_answer("b" * 36, "L9.1", "area", "12", correct=True, message="Yes.")
    >>> with database.write() as conn:
    ...     merge_learner(conn, "b" * 36, ada).sentence()
    '2 answers and 0 programs on 1 exercise'
    >>> progress.lesson_activity(ada, "L9.1").exercises["area"].attempts
    2
    >>> database.close()
    """
    if anonymous_id == account_id:
        return MergeReport(0, 0, 0, 0)
    source = conn.execute(select(_LEARNERS).where(_LEARNERS.c.id == anonymous_id)).first()
    if source is None:
        return MergeReport(0, 0, 0, 0)  # the browser never saved anything
    if source.external_id is not None:
        raise ValueError(
            f"The learner {anonymous_id!r} has an account of their own ({source.external_id!r}); "
            "accounts are not merged by signing in."
        )
    target = conn.execute(select(_LEARNERS).where(_LEARNERS.c.id == account_id)).first()
    if target is None:
        raise ValueError(f"There is no learner {account_id!r} to merge into.")
    answers = _move_rows(conn, _ANSWERS, anonymous_id, account_id)
    _move_sources(conn, anonymous_id, account_id)
    programs = _move_rows(conn, _CODE, anonymous_id, account_id)
    exercises = _merge_totals(conn, anonymous_id, account_id)
    _merge_help(conn, anonymous_id, account_id)
    drafts = _merge_drafts(conn, anonymous_id, account_id)
    _merge_lesson_state(conn, anonymous_id, account_id)
    _merge_mistakes(conn, anonymous_id, account_id)
    _merge_learner_row(conn, source, target)
    return MergeReport(answers, programs, exercises, drafts)


def _move_rows(conn: Connection, table: Table, source: str, target: str) -> int:
    """Rows with their own ids (answers, programs) simply change owner: every attempt is kept."""
    moved = conn.execute(update(table).where(table.c.learner_id == source).values(learner_id=target))
    return int(moved.rowcount or 0)


def _move_sources(conn: Connection, source: str, target: str) -> None:
    """Program texts are keyed by (learner, hash): copy those the account lacks, drop the rest."""
    theirs = select(_SOURCES.c.sha256).where(_SOURCES.c.learner_id == target)
    conn.execute(
        insert(_SOURCES).from_select(
            ["learner_id", "sha256", "source"],
            select(literal(target, _SOURCES.c.learner_id.type), _SOURCES.c.sha256, _SOURCES.c.source).where(
                _SOURCES.c.learner_id == source, _SOURCES.c.sha256.not_in(theirs)
            ),
        )
    )
    conn.execute(delete(_SOURCES).where(_SOURCES.c.learner_id == source))


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return min(a, b) if a is not None and b is not None else a or b


def _combined_totals(mine: Any, theirs: Any) -> dict[str, Any]:
    """One exercise's totals of both learners: counts added, the better result kept."""
    mine_better = mine.best_passed is not None and (
        theirs.best_passed is None or mine.best_passed > theirs.best_passed
    )
    best = mine if mine_better else theirs
    first = (
        mine
        if mine.solved
        and (
            not theirs.solved
            or _earliest(mine.first_solved_at, theirs.first_solved_at) == mine.first_solved_at
        )
        else theirs
    )
    return {
        "attempts": mine.attempts + theirs.attempts,
        "submissions": mine.submissions + theirs.submissions,
        "solved": bool(mine.solved or theirs.solved),
        "first_solved_at": _earliest(mine.first_solved_at, theirs.first_solved_at),
        "last_activity_at": max(mine.last_activity_at, theirs.last_activity_at),
        "best_passed": best.best_passed,
        "best_total": best.best_total,
        "failed_runs": mine.failed_runs + theirs.failed_runs,
        "solution_shown_at": _earliest(mine.solution_shown_at, theirs.solution_shown_at),
        "solved_after_solution": first.solved_after_solution,  # as it was for the earlier solve
        "hints_before_solve": first.hints_before_solve,
    }


def _merge_totals(conn: Connection, source: str, target: str) -> int:
    theirs = {
        (row.lesson_id, row.exercise_id): row
        for row in conn.execute(select(_TOTALS).where(_TOTALS.c.learner_id == target))
    }
    mine = conn.execute(select(_TOTALS).where(_TOTALS.c.learner_id == source)).all()
    for row in mine:
        where = (_TOTALS.c.lesson_id == row.lesson_id, _TOTALS.c.exercise_id == row.exercise_id)
        other = theirs.get((row.lesson_id, row.exercise_id))
        if other is None:
            conn.execute(
                update(_TOTALS).where(_TOTALS.c.learner_id == source, *where).values(learner_id=target)
            )
        else:
            conn.execute(
                update(_TOTALS)
                .where(_TOTALS.c.learner_id == target, *where)
                .values(**_combined_totals(row, other))
            )
    conn.execute(delete(_TOTALS).where(_TOTALS.c.learner_id == source))
    return len(mine)


def _merge_help(conn: Connection, source: str, target: str) -> None:
    """Help shown to either is help shown to the person: each hint's earliest showing kept, and each
    exercise's count of hints shown recounted over both."""
    h = _HELP.c
    theirs = {
        (row.lesson_id, row.exercise_id, row.hint): row
        for row in conn.execute(select(_HELP).where(h.learner_id == target))
    }
    for row in conn.execute(select(_HELP).where(h.learner_id == source)).all():
        other = theirs.get((row.lesson_id, row.exercise_id, row.hint))
        if other is None:
            conn.execute(update(_HELP).where(h.id == row.id).values(learner_id=target))
        elif row.shown_at < other.shown_at:
            conn.execute(update(_HELP).where(h.id == other.id).values(shown_at=row.shown_at))
    conn.execute(delete(_HELP).where(h.learner_id == source))
    shown = (
        select(func.count())
        .where(
            h.learner_id == _TOTALS.c.learner_id,
            h.lesson_id == _TOTALS.c.lesson_id,
            h.exercise_id == _TOTALS.c.exercise_id,
            h.hint > 0,
        )
        .scalar_subquery()
    )
    conn.execute(update(_TOTALS).where(_TOTALS.c.learner_id == target).values(hints_shown=shown))


def _merge_drafts(conn: Connection, source: str, target: str) -> int:
    theirs = {
        (row.lesson_id, row.exercise_id): row.updated_at
        for row in conn.execute(select(_DRAFTS).where(_DRAFTS.c.learner_id == target))
    }
    moved = 0
    for row in conn.execute(select(_DRAFTS).where(_DRAFTS.c.learner_id == source)).all():
        where = (_DRAFTS.c.lesson_id == row.lesson_id, _DRAFTS.c.exercise_id == row.exercise_id)
        other = theirs.get((row.lesson_id, row.exercise_id))
        if other is None:
            conn.execute(
                update(_DRAFTS).where(_DRAFTS.c.learner_id == source, *where).values(learner_id=target)
            )
            moved += 1
        elif row.updated_at > other:  # the newer text is the one the learner last worked on
            conn.execute(
                update(_DRAFTS)
                .where(_DRAFTS.c.learner_id == target, *where)
                .values(source=row.source, updated_at=row.updated_at)
            )
            moved += 1
    conn.execute(delete(_DRAFTS).where(_DRAFTS.c.learner_id == source))
    return moved


def _merge_lesson_state(conn: Connection, source: str, target: str) -> None:
    """A lesson's variant moves only where the account has none: its answers elsewhere were for its own."""
    theirs = select(_STATE.c.lesson_id).where(_STATE.c.learner_id == target)
    conn.execute(
        update(_STATE)
        .where(_STATE.c.learner_id == source, _STATE.c.lesson_id.not_in(theirs))
        .values(learner_id=target)
    )
    conn.execute(delete(_STATE).where(_STATE.c.learner_id == source))


def _merge_mistakes(conn: Connection, source: str, target: str) -> None:
    """A class's mistakes: each failing program's signature and each note shown move with the person; a
    group both were in counts both's programs from the earlier first; a message both marked keeps the
    account's mark ("Did this help?" is one per person and message)."""
    _move_rows(conn, _SIGNATURES, source, target)
    _move_rows(conn, _NOTES_SHOWN, source, target)
    g = _GROUP_LEARNERS.c
    mine = conn.execute(select(_GROUP_LEARNERS).where(g.learner_id == target))
    theirs = {row.group_key: row for row in mine}
    for row in conn.execute(select(_GROUP_LEARNERS).where(g.learner_id == source)).all():
        other = theirs.get(row.group_key)
        if other is None:
            conn.execute(
                update(_GROUP_LEARNERS)
                .where(g.learner_id == source, g.group_key == row.group_key)
                .values(learner_id=target)
            )
            continue
        conn.execute(
            update(_GROUP_LEARNERS)
            .where(g.learner_id == target, g.group_key == row.group_key)
            .values(
                programs=other.programs + row.programs,
                first_seen=min(other.first_seen, row.first_seen),
                first_id=min(other.first_id, row.first_id),
            )
        )
    conn.execute(delete(_GROUP_LEARNERS).where(g.learner_id == source))
    f = _FEEDBACK.c
    marked = select(f.message_key).where(f.learner_id == target).scalar_subquery()
    conn.execute(delete(_FEEDBACK).where(f.learner_id == source, f.message_key.in_(marked)))
    _move_rows(conn, _FEEDBACK, source, target)


def _merge_learner_row(conn: Connection, source: Any, target: Any) -> None:
    seen = [t for t in (source.last_seen_at, target.last_seen_at) if t is not None]
    changes: dict[str, Any] = {"last_seen_at": max(seen) if seen else None}
    if target.display_name is None and source.display_name is not None:
        changes["display_name"] = source.display_name
    conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == target.id).values(**changes))
    conn.execute(delete(_TOKENS).where(_TOKENS.c.learner_id == source.id))
    conn.execute(delete(_SESSIONS).where(_SESSIONS.c.learner_id == source.id))
    conn.execute(delete(_LEARNERS).where(_LEARNERS.c.id == source.id))
