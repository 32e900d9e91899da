"""A learner's code: the programs sent to the grader (with their results) and the editor's drafts.

Each program is counted in the learner's totals, stored with its result cut to a few KiB of each text,
its text stored once (``qkv.store.work.program_texts``), and pruned to the last ``keep`` and the best. The
bytes stored count against the sending client's budget (``ClientBudgets``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, LargeBinary, Table, cast, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import CodeDraft, CodeSubmission
from qkv.store.work.budget import Keeping, source_hash, stored_result, text_bytes
from qkv.store.work.client_budgets import ClientBudgets
from qkv.store.work.exercise_key import ExerciseKey, rows_of
from qkv.store.work.mistake_signatures import record_signatures_in
from qkv.store.work.program_texts import drop_unused_sources, put_source, source_of_program
from qkv.store.work.retention import DEFAULT_KEEP, check_keep, prune
from qkv.store.work.totals import count_work, mark_help_shown

_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_DRAFTS: Table = CodeDraft.__table__  # type: ignore[assignment]


class CodeWork:
    """The learners' programs and drafts.

    Parameters
    ----------
    database : Database
        The database to use.
    budgets : ClientBudgets
        The clients' storage budgets the writes count against.
    keep : int
        Programs kept per learner and exercise besides the best one.

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> code = CodeWork(database, ClientBudgets(database))
    >>> code.record("a" * 36, "L9.1", "shapes", "x = 1\\n", {"status": "pass", "tests": []})
    <Keeping.ALL: 'all'>
    >>> database.close()
    """

    def __init__(self, database: Database, budgets: ClientBudgets, keep: int = DEFAULT_KEEP) -> None:
        self.database = database
        self.budgets = budgets
        self.keep = check_keep(keep)

    def record(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        source: str,
        result: Mapping[str, Any],
        *,
        own_work: bool = True,
        client: str | None = None,
        copies_solution: bool = False,
        submitted_at: datetime | None = None,
    ) -> Keeping:
        """Save one code submission with the grader's result document.

        A failed run counts in ``failed_runs`` only when it is a new try: ``own_work`` (the caller's
        judgement: not the exercise's starter code, and a program that defined its functions and ran its
        tests) and a text none of the learner's kept programs for the exercise had, so pressing Run again
        on unchanged code, or going back to an earlier program, earns nothing.

        The stored result keeps a few KiB of each text (``qkv.store.work.budget.stored_result``), and the
        learner's program text is stored once however often it is sent. ``client`` (an address) is the
        client whose storage budget the program counts against; the run is counted in the gradebook
        whatever the budget, and the returned ``Keeping`` says what was kept.

        Parameters
        ----------
        learner_id, lesson_id, exercise_id : str
            Whose program, for which exercise.
        source : str
            The program's text (also kept as the editor's latest text).
        result : mapping
            The grader's result document (``status``, ``tests``, ...).
        own_work : bool
            Whether a failing run may count as a new try.
        client : str, optional
            The client whose budget the bytes count against.
        copies_solution : bool
            Whether the program is the exercise's reference solution (names, layout, comments and
            docstrings aside: the caller's judgement); a first solve with it is marked
            ``solved_after_solution``, as one after the solution was shown.
        submitted_at : datetime, optional
            When the learner sent the program (UTC; default now): the time it is kept with, and the
            time of a first solve with it, which a due date judges (grading takes a while).

        Returns
        -------
        Keeping
            What was kept of the program.

        Raises
        ------
        ValueError
            If the text holds a NUL or a lone surrogate, or ``client`` is no client key.

        Examples
        --------
        >>> from qkv.store.work.progress import Progress
        >>> database = Database("sqlite://")
        >>> budgets = ClientBudgets(database)
        >>> code = CodeWork(database, budgets)
        >>> tests = [{"status": "pass"}, {"status": "fail"}]
        >>> code.record("a" * 36, "L9.1", "shapes", "x = 1\\n", {"status": "fail", "tests": tests})
        <Keeping.ALL: 'all'>
        >>> last = Progress(database, budgets).lesson_activity("a" * 36, "L9.1").exercises["shapes"].last_code
        >>> last.passed, last.total, last.status
        (1, 2, 'fail')
        >>> database.close()
        """
        check_storable(source, "The program")
        with self.database.write() as conn:
            return self.record_in(
                conn,
                learner_id,
                lesson_id,
                exercise_id,
                source,
                result,
                own_work=own_work,
                client=client,
                copies_solution=copies_solution,
                submitted_at=submitted_at,
            )

    def record_in(
        self,
        conn: Connection,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        source: str,
        result: Mapping[str, Any],
        *,
        own_work: bool = True,
        client: str | None = None,
        copies_solution: bool = False,
        submitted_at: datetime | None = None,
    ) -> Keeping:
        """:meth:`record` inside the caller's write transaction ``conn`` (so that it commits with it).

        A verdict written by a remote grader is saved with the job's row in one transaction, so the
        program counts once however many graders finish the job.

        Parameters
        ----------
        conn : sqlalchemy.Connection
            A connection inside ``database.write()``.
        learner_id, lesson_id, exercise_id, source, result, own_work, client, copies_solution, submitted_at
            As for :meth:`record`.

        Returns
        -------
        Keeping
            What was kept of the program.

        Raises
        ------
        ValueError
            If the text holds a NUL or a lone surrogate, or ``client`` is no client key.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> code = CodeWork(database, ClientBudgets(database))
        >>> with database.write() as conn:
        ...     code.record_in(conn, "a" * 36, "L9.1", "shapes", "x = 1\\n", {"status": "pass", "tests": []})
        <Keeping.ALL: 'all'>
        >>> database.close()
        """
        check_storable(source, "The program")
        tests = result.get("tests") or []
        passed = sum(1 for test in tests if isinstance(test, Mapping) and test.get("status") == "pass")
        status = str(result.get("status", "error"))[:16]
        document = json.dumps(stored_result(result), allow_nan=False, separators=(",", ":"))
        digest = source_hash(source)
        now = utc_now() if submitted_at is None else min(submitted_at, utc_now())  # when it was sent
        key = (learner_id, lesson_id, exercise_id)
        self.database.ensure_learner(conn, learner_id)
        kept = self.budgets.keeping(conn, client)
        # A failed run brings the solution nearer only as a new try: a text none of the kept programs had.
        kept_texts = conn.execute(select(source_of_program()).where(*rows_of(_CODE, key))).scalars().all()
        new_try = own_work and all(text.strip() != source.strip() for text in kept_texts)
        stored = 0
        if kept is not Keeping.NOTHING:
            score, version = (passed, len(tests)), _suite_version(result)
            stored = _store_program(conn, key, source, digest, status, score, document, now, version)
        count_work(
            conn,
            key,
            now,
            attempt=True,
            solved=status == "pass",
            score=(passed, len(tests)),
            new_try=new_try,
            copies_solution=copies_solution,
        )
        # Nothing to prune while every program fits (a class's first runs: most of a burst's).
        if kept is not Keeping.NOTHING and (kept is not Keeping.ALL or len(kept_texts) + 1 > self.keep):
            self._prune_programs(conn, key, kept)
        if kept is not Keeping.NOTHING and own_work:
            # Each failing function's behaviour, for the class's mistakes grouped by it (the starter code
            # run as it is, or junk that defines nothing, is no mistake of the learner's).
            record_signatures_in(conn, learner_id, lesson_id, exercise_id, source, result)
        # What was sent to the grader is also the editor's latest text; past the budget a draft may
        # not grow, so a longer one is dropped (the page then shows the last kept program).
        grown = _put_draft(conn, key, source, kept, drop_if_refused=True)
        self.budgets.charge(conn, client, stored + max(grown, 0))
        return kept

    def _prune_programs(self, conn: Connection, key: ExerciseKey, kept: Keeping) -> None:
        """Keep the learner's last programs of the exercise and the best one; drop texts no row uses."""
        best = (
            select(_CODE.c.id)
            .where(*rows_of(_CODE, key))
            .order_by(_CODE.c.passed.desc(), _CODE.c.id)
            .limit(1)
            .scalar_subquery()
        )
        prune(conn, _CODE, key, keep=self.keep, keep_also=best, keeping=kept)
        drop_unused_sources(conn, key[0])

    def solution_shown(self, learner_id: str, lesson_id: str, exercise_id: str) -> None:
        """Note that the learner was shown the exercise's reference solution (the first time is kept); a
        first solve after it is marked ``solved_after_solution`` in the totals.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> code = CodeWork(database, ClientBudgets(database))
        >>> failing = {"status": "fail", "tests": [{"status": "fail"}]}
        >>> _ = code.record("a" * 36, "L9.1", "shapes", "x = 1\\n", failing)
        >>> code.solution_shown("a" * 36, "L9.1", "shapes")
        >>> _ = code.record("a" * 36, "L9.1", "shapes", "x = 2\\n", {"status": "pass", "tests": []})
        >>> from qkv.store.instructor.gradebook import Gradebook
        >>> Gradebook(database).rows()[0].solved_after_solution
        True
        >>> database.close()
        """
        self.help_shown(learner_id, lesson_id, exercise_id, 0)

    def help_shown(self, learner_id: str, lesson_id: str, exercise_id: str, hint: int) -> bool:
        """Keep that the learner was shown hint ``hint`` (from 1) of the exercise, or its reference solution
        (``hint`` 0): the first time each is kept (the instructor's timeline and the events export show it),
        and a first solve after hints or after the solution is marked in the totals. Whether it was new.

        Raises
        ------
        ValueError
            If ``hint`` is negative.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> code = CodeWork(database, ClientBudgets(database))
        >>> failing = {"status": "fail", "tests": [{"status": "fail"}]}
        >>> _ = code.record("a" * 36, "L9.1", "shapes", "x = 1\\n", failing)
        >>> code.help_shown("a" * 36, "L9.1", "shapes", 1), code.help_shown("a" * 36, "L9.1", "shapes", 1)
        (True, False)
        >>> _ = code.record("a" * 36, "L9.1", "shapes", "x = 2\\n", {"status": "pass", "tests": []})
        >>> from qkv.store.instructor.gradebook import Gradebook
        >>> row = Gradebook(database).rows()[0]
        >>> row.hints_shown, row.solved_after_hints, row.solved_after_solution
        (1, True, False)
        >>> database.close()
        """
        if isinstance(hint, bool) or not isinstance(hint, int) or hint < 0:
            raise ValueError(
                f"A hint's number is a whole number of at least 0 (0: the solution), not {hint!r}."
            )
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            return mark_help_shown(conn, (learner_id, lesson_id, exercise_id), hint, utc_now())

    def save_draft(
        self, learner_id: str, lesson_id: str, exercise_id: str, source: str, *, client: str | None = None
    ) -> bool:
        """Keep the editor's text of a code exercise (one draft per exercise; the newest wins).

        The draft's growth counts against ``client``'s storage budget (an address, if given); past the
        budget a draft may be replaced by one no longer than it.

        Returns
        -------
        bool
            False when a longer draft was not kept (past the client's budget).

        Raises
        ------
        ValueError
            If the text holds a NUL or a lone surrogate, or ``client`` is no client key.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> budgets = ClientBudgets(database)
        >>> code = CodeWork(database, budgets)
        >>> code.save_draft("a" * 36, "L9.1", "area", "x = 1\\n", client="192.0.2.1")
        True
        >>> budgets.spent_today("192.0.2.1")
        6
        >>> database.close()
        """
        check_storable(source, "The draft")
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            kept = self.budgets.keeping(conn, client)
            grown = _put_draft(conn, (learner_id, lesson_id, exercise_id), source, kept)
            self.budgets.charge(conn, client, grown)
        return grown >= 0


def _suite_version(result: Mapping[str, Any]) -> str | None:
    """The suite version the result names (``suite_version``), if any: kept with the program."""
    version = result.get("suite_version")
    return version[:16] if isinstance(version, str) and version else None


def _store_program(
    conn: Connection,
    key: ExerciseKey,
    source: str,
    digest: str,
    status: str,
    score: tuple[int, int],
    document: str,
    now: datetime,
    suite_version: str | None,
) -> int:
    """A row for one graded program (its text kept once per learner, by hash); the bytes it stored."""
    learner_id, lesson_id, exercise_id = key
    stored = text_bytes(document) + put_source(conn, learner_id, digest, source)
    conn.execute(
        insert(_CODE).values(
            learner_id=learner_id,
            lesson_id=lesson_id,
            exercise_id=exercise_id,
            source="",
            source_sha256=digest,
            status=status,
            passed=score[0],
            total=score[1],
            result_json=document,
            created_at=now,
            suite_version=suite_version,
        )
    )
    return stored


def _put_draft(
    conn: Connection,
    key: ExerciseKey,
    source: str,
    kept: Keeping,
    *,
    drop_if_refused: bool = False,
) -> int:
    """Save the draft; the bytes it grew by, or -1 when it would grow past the client's budget.

    A refused draft stays as it was, or with ``drop_if_refused`` is deleted.
    """
    now = utc_now()
    mine = rows_of(_DRAFTS, key)
    length = (
        func.octet_length(_DRAFTS.c.source)
        if conn.dialect.name == "postgresql"
        else func.length(cast(_DRAFTS.c.source, LargeBinary))
    )
    before = conn.execute(select(length).where(*mine)).scalar()
    grown = text_bytes(source) - int(before or 0)
    if grown > 0 and kept is not Keeping.ALL:
        if drop_if_refused:
            conn.execute(delete(_DRAFTS).where(*mine))
        return -1
    if before is None:
        learner_id, lesson_id, exercise_id = key
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        added = conn.execute(
            dialect.insert(_DRAFTS)
            .values(
                learner_id=learner_id,
                lesson_id=lesson_id,
                exercise_id=exercise_id,
                source=source,
                updated_at=now,
            )
            .on_conflict_do_nothing(index_elements=["learner_id", "lesson_id", "exercise_id"])
            .returning(_DRAFTS.c.learner_id)
        ).first()
        if added is not None:  # not written a second time (on PostgreSQL that would store it twice)
            return max(grown, 0)
    conn.execute(update(_DRAFTS).where(*mine).values(source=source, updated_at=now))
    return max(grown, 0)


__all__ = ["CodeWork"]
