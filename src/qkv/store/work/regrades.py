"""Regrading: the stored programs and the suite version that graded each, a regrade's new verdict, and what
it changed.

Every program is stored with the version of its exercise's suite (``code_submissions.suite_version``, set
from the result's ``suite_version``; NULL for programs saved before versions, or graded remotely). A regrade
(``qkv regrade``) grades a stored program again against today's suite and hands the new result here:
``apply`` replaces the program's verdict, records a change (pass to fail, fail to pass, or another first
message) and sets the learner's totals of the exercise from their kept programs.

    >>> from qkv.store.sql.database import Database
    >>> from qkv.store.work.client_budgets import ClientBudgets
    >>> from qkv.store.work.code_work import CodeWork
    >>> database = Database("sqlite://")
    >>> code = CodeWork(database, ClientBudgets(database))
    >>> tests = [{"status": "fail", "message": "Wrong."}]
    >>> failing = {"status": "fail", "tests": tests, "suite_version": "v1"}
    >>> _ = code.record("a" * 36, "L9.1", "shapes", "x = 1\\n", failing)
    >>> regrades = Regrades(database)
    >>> (program,) = regrades.programs()
    >>> program.suite_version, program.status
    ('v1', 'fail')
    >>> change = regrades.apply(program, {"status": "pass", "tests": [{"status": "pass"}]}, "v2")
    >>> change.before_status, change.after_status, regrades.programs()[0].suite_version
    ('fail', 'pass', 'v2')
    >>> database.close()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, func, insert, select, update

from qkv.store.instructor.courses import LearnerScope
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import CodeSubmission, ExerciseTotals, HelpShown, RegradeChange
from qkv.store.work.budget import stored_result
from qkv.store.work.exercise_key import ExerciseKey, rows_of
from qkv.store.work.program_texts import source_of_program

_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_TOTALS: Table = ExerciseTotals.__table__  # type: ignore[assignment]
_HELP: Table = HelpShown.__table__  # type: ignore[assignment]
_CHANGES: Table = RegradeChange.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class StoredProgram:
    """A program as stored, with the verdict it has and the suite version that gave it."""

    id: int
    learner_id: str
    lesson_id: str
    exercise_id: str
    source: str
    status: str
    first_message: str
    seed: int | None
    suite_version: str | None
    created_at: datetime


@dataclass(frozen=True)
class VerdictChange:
    """A verdict a regrade changed."""

    submission_id: int
    learner_id: str
    lesson_id: str
    exercise_id: str
    before_status: str
    after_status: str
    before_message: str
    after_message: str


def first_message(result: Mapping[str, Any]) -> str:
    """The first thing a result says is wrong: the first failing test's message, else the result's own.

    Examples
    --------
    >>> first_message({"status": "fail", "tests": [{"status": "pass"}, {"status": "fail", "message": "No."}]})
    'No.'
    >>> first_message({"status": "error", "message": "SyntaxError", "tests": []})
    'SyntaxError'
    >>> first_message({"status": "pass", "tests": [{"status": "pass"}]})
    ''
    """
    for test in result.get("tests") or []:
        if isinstance(test, Mapping) and test.get("status") != "pass":
            return str(test.get("message") or test.get("name") or "")
    return "" if result.get("status") == "pass" else str(result.get("message") or "")


def _program(row: Any) -> StoredProgram:
    try:
        document = json.loads(row.result_json)
    except ValueError:
        document = {}
    seed = document.get("seed") if isinstance(document, dict) else None
    return StoredProgram(
        row.id,
        row.learner_id,
        row.lesson_id,
        row.exercise_id,
        row.source,
        row.status,
        first_message(document) if isinstance(document, dict) else "",
        seed if isinstance(seed, int) else None,
        row.suite_version,
        row.created_at,
    )


class Regrades:
    """Stored programs for a regrade, their new verdicts, and the changes recorded.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def programs(
        self,
        lesson_id: str | None = None,
        scope: LearnerScope | None = None,
        *,
        latest_only: bool = False,
    ) -> list[StoredProgram]:
        """The kept programs (of one lesson, of a course's learners; each learner's latest per exercise only),
        oldest first.

        Examples
        --------
        >>> Regrades(Database("sqlite://")).programs(latest_only=True)
        []
        """
        c = _CODE.c
        query = select(c.id, c.learner_id, c.lesson_id, c.exercise_id, source_of_program(), c.status)
        query = query.add_columns(c.result_json, c.suite_version, c.created_at)
        if lesson_id is not None:
            query = query.where(c.lesson_id == lesson_id)
        if scope is not None:
            query = query.where(scope.admits(c.learner_id))
        if latest_only:
            newest = select(func.max(c.id)).group_by(c.learner_id, c.lesson_id, c.exercise_id)
            query = query.where(c.id.in_(newest))
        with self.database.read() as conn:
            rows = conn.execute(query.order_by(c.id)).all()
        return [_program(row) for row in rows]

    def apply(self, program: StoredProgram, result: Mapping[str, Any], version: str) -> VerdictChange | None:
        """Give a stored program its regraded result (graded by suite ``version``); the change, if any.

        A changed verdict is recorded, and the learner's totals of the exercise (solved, when first, the
        best score) are set again from their kept programs.

        Examples
        --------
        >>> Regrades(Database("sqlite://")).database.close()
        """
        tests = result.get("tests") or []
        passed = sum(1 for test in tests if isinstance(test, Mapping) and test.get("status") == "pass")
        status = str(result.get("status", "error"))[:16]
        message = first_message(result)
        document = json.dumps(stored_result({**result, "suite_version": version}), allow_nan=False)
        changed = status != program.status or message != program.first_message
        change = VerdictChange(
            program.id,
            program.learner_id,
            program.lesson_id,
            program.exercise_id,
            program.status,
            status,
            program.first_message,
            message,
        )
        with self.database.write() as conn:
            values = {"status": status, "passed": passed, "total": len(tests), "result_json": document}
            conn.execute(
                update(_CODE).where(_CODE.c.id == program.id).values(suite_version=version, **values)
            )
            if changed:
                row = {**change.__dict__, "suite_version": version, "regraded_at": utc_now()}
                conn.execute(insert(_CHANGES).values(row))
                _recount(conn, (program.learner_id, program.lesson_id, program.exercise_id))
        return change if changed else None

    def changes(self, lesson_id: str | None = None, limit: int = 200) -> list[VerdictChange]:
        """The verdicts regrades changed, newest first.

        Examples
        --------
        >>> Regrades(Database("sqlite://")).changes()
        []
        """
        c = _CHANGES.c
        query = select(_CHANGES).order_by(c.id.desc()).limit(limit)
        if lesson_id is not None:
            query = query.where(c.lesson_id == lesson_id)
        with self.database.read() as conn:
            rows = conn.execute(query).all()
        return [
            VerdictChange(
                r.submission_id,
                r.learner_id,
                r.lesson_id,
                r.exercise_id,
                r.before_status,
                r.after_status,
                r.before_message,
                r.after_message,
            )
            for r in rows
        ]

    def older_counts(self, versions: Mapping[str, str], scope: LearnerScope | None = None) -> dict[str, int]:
        """Per lesson, the kept programs graded with another version than ``versions[lesson]`` (or none).

        Examples
        --------
        >>> Regrades(Database("sqlite://")).older_counts({"L9.1": "v2"})
        {'L9.1': 0}
        """
        c = _CODE.c
        counts = {lesson_id: 0 for lesson_id in versions}
        query = select(c.lesson_id, c.suite_version, func.count()).group_by(c.lesson_id, c.suite_version)
        if scope is not None:
            query = query.where(scope.admits(c.learner_id))
        with self.database.read() as conn:
            for lesson_id, version, count in conn.execute(query.where(c.lesson_id.in_(list(versions)))):
                if version != versions[lesson_id]:
                    counts[lesson_id] += int(count)
        return counts


def _recount(conn: Connection, key: ExerciseKey) -> None:
    """Set the exercise's solved, first solve and best score from the learner's kept programs (the best
    program is always kept); answers of other kinds never reach here. A first solve that moved (a fail
    turned to a pass, or the other way) is marked after the solution or after hints by what the learner had
    been shown before it, as a solve saved then would have been: the help credits weigh it alike."""
    c = _CODE.c
    rows = conn.execute(select(c.status, c.passed, c.total, c.created_at).where(*rows_of(_CODE, key))).all()
    passing = [row.created_at for row in rows if row.status == "pass"]
    best = max(rows, key=lambda row: (row.passed, -row.total), default=None)
    first = min(passing) if passing else None
    values: dict[str, Any] = {"solved": bool(passing), "first_solved_at": first}
    if best is not None:
        values |= {"best_passed": best.passed, "best_total": best.total}
    before = conn.execute(select(_TOTALS.c.first_solved_at).where(*rows_of(_TOTALS, key))).scalar()
    if first != before:
        values |= _help_before(conn, key, first)
    conn.execute(update(_TOTALS).where(*rows_of(_TOTALS, key)).values(values))


def _help_before(conn: Connection, key: ExerciseKey, first: datetime | None) -> dict[str, Any]:
    """The totals' marks of a first solve at ``first``: the solution shown before it, the hints before it."""
    if first is None:
        return {"solved_after_solution": False, "hints_before_solve": 0}
    h = _HELP.c
    shown = conn.execute(select(h.hint).where(*rows_of(_HELP, key), h.shown_at <= first)).scalars().all()
    return {
        "solved_after_solution": any(hint == 0 for hint in shown),
        "hints_before_solve": sum(1 for hint in shown if hint > 0),
    }


__all__ = ["Regrades", "StoredProgram", "VerdictChange", "first_message"]
