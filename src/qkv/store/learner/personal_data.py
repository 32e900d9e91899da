"""A person's data on request: everything stored about one learner, exported as JSON or erased.

Which rows belong to a learner is read from the schema, not listed by hand: every table of the ORM
metadata with a ``learner_id`` column (answers, programs and their texts, drafts, variants, totals, sign-in
links and sessions, LTI line items, scores sent or waiting in the outbox, grading jobs, and any table a
later migration adds with that column), plus the related rows named in :data:`RELATED` (the learner's own
row, keyed by ``id``). A test holds every table with a learner column to this list.

Erasing is one transaction. The class's numbers (the gradebook, the class view) are read from the
learners' kept totals (``totals.py``), which go with the learner, so they stay consistent: the class
counts as if the learner had never worked. Each export, erasure and pruning leaves a line in
``privacy_audit`` that names the learner by their random id only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Table, and_, delete, func, insert, select

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import Base, LearnerRow, PrivacyAudit

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_AUDIT: Table = PrivacyAudit.__table__  # type: ignore[assignment]

LEARNER_COLUMN = "learner_id"
RELATED: dict[str, str] = {"learners": "id"}  # rows of the learner kept under another column's name
EXPORT_FORMAT = "qkv learner data 1"
PRUNE_BATCH = 200  # anonymous learners erased per transaction when pruning

__all__ = [
    "EXPORT_FORMAT",
    "RELATED",
    "Erasure",
    "PersonalData",
    "dumps",
    "learner_tables",
]


def learner_tables() -> list[tuple[Table, str]]:
    """Every table holding a learner's rows and the column naming the learner, dependents first.

    The order is the reverse of the schema's foreign-key order, so deleting in it never leaves a row
    pointing at a deleted learner; the learner's own row comes last.

    Examples
    --------
    >>> names = [table.name for table, _ in learner_tables()]
    >>> names[-1], "answers" in names, "lti_score_outbox" in names, "instructors" in names
    ('learners', True, True, False)
    """
    found: list[tuple[Table, str]] = []
    for table in reversed(Base.metadata.sorted_tables):
        if table.name in RELATED:
            found.append((table, RELATED[table.name]))
        elif LEARNER_COLUMN in table.c:
            found.append((table, LEARNER_COLUMN))
    found.sort(key=lambda pair: pair[0].name == "learners")  # stable: the learner's own row last
    return found


def _plain(value: Any) -> Any:
    """A column's value as JSON can hold it (times as ISO 8601, UTC)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


@dataclass(frozen=True)
class Erasure:
    """What erasing one learner removed: rows per table.

    Examples
    --------
    >>> Erasure("a" * 36, {"answers": 3, "learners": 1}).sentence()
    'answers 3, learners 1'
    >>> Erasure("a" * 36, {}).found
    False
    """

    learner_id: str
    removed: dict[str, int]

    @property
    def found(self) -> bool:
        """Whether there was a learner to erase."""
        return self.removed.get("learners", 0) > 0

    def sentence(self) -> str:
        """The rows removed, by table, in words."""
        return ", ".join(f"{name} {count}" for name, count in sorted(self.removed.items()) if count)


class PersonalData:
    """A learner's data on request: export it all, erase it all, and prune inactive anonymous learners.

    Parameters
    ----------
    database : Database
        The database to use.

    Examples
    --------
    >>> from qkv.store.work.progress import Progress
    >>> from qkv.store.work.client_budgets import ClientBudgets
    >>> database = Database("sqlite://")
    >>> _ = Progress(database, ClientBudgets(database)).record_answer(
    ...     "a" * 36, "L9.1", "area", "12", correct=True, message="Right.")
    >>> data = PersonalData(database)
    >>> [row["answer"] for row in data.export("a" * 36)["tables"]["answers"]]
    ['12']
    >>> data.erase("a" * 36).sentence()
    'answers 1, exercise_totals 1, learners 1'
    >>> data.export("a" * 36) is None
    True
    >>> database.close()
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def export(self, learner_id: str) -> dict[str, Any] | None:
        """Everything stored about the learner, as a JSON-ready dict; None if there is no such learner.

        Parameters
        ----------
        learner_id : str
            The learner's id.

        Returns
        -------
        dict or None
            ``{"format", "exported_at", "learner_id", "tables": {table: [row, ...]}}``; every table of
            :func:`learner_tables` is present, empty or not. The export is noted in the audit.

        Examples
        --------
        >>> data = PersonalData(Database("sqlite://"))
        >>> data.export("b" * 36) is None
        True
        >>> data.database.close()
        """
        with self.database.write() as conn:
            if conn.execute(select(_LEARNERS.c.id).where(_LEARNERS.c.id == learner_id)).first() is None:
                return None
            tables = {
                table.name: _rows(conn, table, column, learner_id) for table, column in learner_tables()
            }
            counted = sum(len(rows) for rows in tables.values())
            _audit(conn, "export", learner_id, f"exported {counted} rows of {len(tables)} tables")
        return {
            "format": EXPORT_FORMAT,
            "exported_at": utc_now().isoformat(),
            "learner_id": learner_id,
            "tables": tables,
        }

    def erase(self, learner_id: str, *, reason: str = "on request") -> Erasure:
        """Remove every row of the learner in one transaction, and note it in the audit.

        Parameters
        ----------
        learner_id : str
            The learner's id.
        reason : str
            Why, for the audit line ("on request").

        Returns
        -------
        Erasure
            The rows removed per table (``found`` is False if there was no such learner; nothing is
            noted then).

        Examples
        --------
        >>> data = PersonalData(Database("sqlite://"))
        >>> data.erase("b" * 36).found
        False
        >>> data.database.close()
        """
        with self.database.write() as conn:
            erasure = _erase(conn, learner_id)
            if erasure.found:
                _audit(conn, "erase", learner_id, f"erased {reason}: {erasure.sentence()}")
        return erasure

    def audit(self, subject: str | None = None) -> list[dict[str, Any]]:
        """The audit's lines, oldest first: of one learner's random id, or all.

        Examples
        --------
        >>> data = PersonalData(Database("sqlite://"))
        >>> data.audit()
        []
        >>> data.database.close()
        """
        query = select(_AUDIT).order_by(_AUDIT.c.id)
        if subject is not None:
            query = query.where(_AUDIT.c.subject == subject)
        with self.database.read() as conn:
            return [
                {name: _plain(value) for name, value in row._mapping.items()} for row in conn.execute(query)
            ]

    def inactive_anonymous(self, days: int, *, now: datetime | None = None) -> list[str]:
        """The anonymous learners (no account, no LMS identity) not seen for ``days`` days.

        Examples
        --------
        >>> data = PersonalData(Database("sqlite://"))
        >>> data.inactive_anonymous(30)
        []
        >>> data.database.close()
        """
        cutoff = (now or utc_now()) - timedelta(days=days)
        seen = func.coalesce(_LEARNERS.c.last_seen_at, _LEARNERS.c.created_at)
        anonymous = and_(_LEARNERS.c.external_id.is_(None), _LEARNERS.c.issuer.is_(None))
        with self.database.read() as conn:
            found = conn.execute(
                select(_LEARNERS.c.id).where(anonymous, seen < cutoff).order_by(_LEARNERS.c.id)
            )
            return list(found.scalars())

    def prune_anonymous(self, days: int, *, now: datetime | None = None) -> int:
        """Erase the anonymous learners inactive for ``days`` days; one audit line for the run.

        Parameters
        ----------
        days : int
            Days without any saved work (or visit that saved something).
        now : datetime, optional
            The time to count back from (UTC; default now).

        Returns
        -------
        int
            How many learners were erased.

        Raises
        ------
        ValueError
            If ``days`` is not a whole number of at least 1.

        Examples
        --------
        >>> data = PersonalData(Database("sqlite://"))
        >>> data.prune_anonymous(30)
        0
        >>> data.database.close()
        """
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise ValueError(f"The retention must be a whole number of days of at least 1, not {days!r}.")
        stale = self.inactive_anonymous(days, now=now)
        erased = 0
        for start in range(0, len(stale), PRUNE_BATCH):
            with self.database.write() as conn:
                for learner_id in stale[start : start + PRUNE_BATCH]:
                    erased += _erase(conn, learner_id, still_inactive_since=now, days=days).found
        if erased:
            with self.database.write() as conn:
                _audit(conn, "retention", "", f"erased {erased} anonymous learners inactive for {days} days")
        return erased


def _rows(conn: Connection, table: Table, column: str, learner_id: str) -> list[dict[str, Any]]:
    keys = list(table.primary_key.columns) or list(table.c)
    found = conn.execute(select(table).where(table.c[column] == learner_id).order_by(*keys))
    return [{name: _plain(value) for name, value in row._mapping.items()} for row in found]


def _erase(
    conn: Connection, learner_id: str, *, still_inactive_since: datetime | None = None, days: int = 0
) -> Erasure:
    """Delete the learner's rows, dependents first; when pruning, only if they are still inactive."""
    if days:  # a learner who came back between the listing and now is kept
        cutoff = (still_inactive_since or utc_now()) - timedelta(days=days)
        seen = func.coalesce(_LEARNERS.c.last_seen_at, _LEARNERS.c.created_at)
        still = select(_LEARNERS.c.id).where(_LEARNERS.c.id == learner_id, seen < cutoff)
        if conn.execute(still).first() is None:
            return Erasure(learner_id, {})
    removed: dict[str, int] = {}
    for table, column in learner_tables():
        result = conn.execute(delete(table).where(table.c[column] == learner_id))
        removed[table.name] = int(result.rowcount or 0)
    return Erasure(learner_id, removed)


def _audit(conn: Connection, action: str, subject: str, detail: str) -> None:
    conn.execute(insert(_AUDIT).values(at=utc_now(), action=action, subject=subject, detail=detail))


def dumps(document: dict[str, Any]) -> str:
    """The export as JSON text (UTF-8, indented, keys in order).

    Examples
    --------
    >>> print(dumps({"learner_id": "a"}))
    {
      "learner_id": "a"
    }
    """
    return json.dumps(document, ensure_ascii=False, indent=2)
