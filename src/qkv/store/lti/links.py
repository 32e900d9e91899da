"""What launches leave behind: each learner's AGS line item per lesson and course, and the classes.

A learner who launched a lesson from two courses has a line item in each: a score goes to every course
the learner launched that lesson from, each on its own line item (``course_id`` '' for a launch that
named no course).

>>> from qkv.store.sql.database import Database
>>> links = LtiLinks(Database("sqlite://"))
>>> links.remember_line_item("a" * 36, "X1.1", "https://lms.example", "c", "sub-1", "https://lms.example/li/1")
>>> links.line_item("a" * 36, "X1.1").subject
'sub-1'
>>> links.database.close()
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Table, delete, select, text, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import LtiContext, LtiLineItem

_LINE_ITEMS: Table = LtiLineItem.__table__  # type: ignore[assignment]
_CONTEXTS: Table = LtiContext.__table__  # type: ignore[assignment]
# How long a server waits for another's find-or-create of the same line item (its LMS calls are bounded
# well below this) before the launch goes on without a line item.
EXCLUSIVE_WAIT_S = 60


def lock_number(key: str) -> int:
    """The PostgreSQL advisory lock (a signed 64-bit number) that stands for ``key``.

    Examples
    --------
    >>> key = "https://lms.example/c/1/lineitems X1.1"
    >>> lock_number(key) == lock_number(key) != lock_number(key + "0")
    True
    >>> -(2**63) <= lock_number("anything") < 2**63
    True
    """
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


@dataclass(frozen=True)
class LineItem:
    """Where one learner's score on one lesson goes."""

    learner_id: str
    lesson_id: str
    issuer: str
    client_id: str
    subject: str
    lineitem_url: str
    last_score: int | None
    course_id: str = ""
    refusal: str | None = None  # why no score goes to this line item (another lesson's column), if so


@dataclass(frozen=True)
class ClassContext:
    """An LMS course seen in a launch."""

    issuer: str
    client_id: str
    context_id: str
    title: str
    memberships_url: str | None
    roster_pulled_at: datetime | None
    course_id: str | None = None


class LtiLinks:
    """Line items and classes from launches.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @contextmanager
    def exclusive(self, key: str) -> Iterator[None]:
        """Hold ``key`` alone among every thread of this server and, on PostgreSQL, every server of the
        database, for the block: a course's line item for one lesson is looked up and made by one at a time.

        On PostgreSQL this is a transaction-scoped advisory lock (released when the block ends, or when the
        server's connection drops), waited for at most ``EXCLUSIVE_WAIT_S``; SQLite serves one server, so
        the server's own lock is enough there.

        Raises
        ------
        StoreError
            When the database cannot be reached, or another server held ``key`` too long.

        Examples
        --------
        >>> links = LtiLinks(Database("sqlite://"))
        >>> with links.exclusive("https://lms.example/c/1/lineitems X1.1"):
        ...     pass
        >>> links.database.close()
        """
        with self._locks_guard:
            local = self._locks.setdefault(key, threading.Lock())
        with local:
            if self.database.engine.dialect.name != "postgresql":
                yield
                return
            with self.database.read() as conn:
                conn.execute(text(f"SET LOCAL lock_timeout = '{EXCLUSIVE_WAIT_S}s'"))
                conn.execute(text("SELECT pg_advisory_xact_lock(:n)"), {"n": lock_number(key)})
                yield

    def remember_line_item(
        self,
        learner_id: str,
        lesson_id: str,
        issuer: str,
        client_id: str,
        subject: str,
        lineitem_url: str,
        course_id: str = "",
        refusal: str | None = None,
    ) -> None:
        """Record (or move) where this learner's score on this lesson goes in this course; a new line item
        starts unscored. ``refusal``, when given, says why no score may go there (the line item is another
        lesson's column): each of its scores is then parked with that sentence.

        Examples
        --------
        >>> links = LtiLinks(Database("sqlite://"))
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms.example/li/1")
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms.example/li/2")
        >>> links.line_item("a" * 36, "X1.1").lineitem_url
        'https://lms.example/li/2'
        >>> links.database.close()
        """
        now = utc_now()
        row = {
            "learner_id": learner_id,
            "lesson_id": lesson_id,
            "issuer": issuer,
            "client_id": client_id,
            "subject": subject,
            "lineitem_url": lineitem_url,
            "last_score": None,
            "updated_at": now,
            "course_id": course_id,
            "refusal": refusal,
        }
        mine = (
            _LINE_ITEMS.c.learner_id == learner_id,
            _LINE_ITEMS.c.lesson_id == lesson_id,
            _LINE_ITEMS.c.course_id == course_id,
        )
        with self.database.write() as conn:
            # One line item belongs to one course: the same URL kept under another course (the migrated
            # one, before this context's launch made its own course) is dropped, so no score goes twice.
            conn.execute(
                delete(_LINE_ITEMS).where(
                    _LINE_ITEMS.c.learner_id == learner_id,
                    _LINE_ITEMS.c.lesson_id == lesson_id,
                    _LINE_ITEMS.c.lineitem_url == lineitem_url,
                    _LINE_ITEMS.c.course_id != course_id,
                )
            )
            self.database.insert_ignore(conn, _LINE_ITEMS, row, ["learner_id", "lesson_id", "course_id"])
            conn.execute(
                update(_LINE_ITEMS)
                .where(*mine, _LINE_ITEMS.c.lineitem_url != lineitem_url)
                .values(last_score=None)
            )
            conn.execute(
                update(_LINE_ITEMS)
                .where(*mine)
                .values(
                    issuer=issuer,
                    client_id=client_id,
                    subject=subject,
                    lineitem_url=lineitem_url,
                    updated_at=now,
                    refusal=refusal,
                )
            )

    def line_item(self, learner_id: str, lesson_id: str, course_id: str = "") -> LineItem | None:
        """Where this learner's score on this lesson goes in this course, or None (never launched there).

        Examples
        --------
        >>> LtiLinks(Database("sqlite://")).line_item("a" * 36, "X1.1") is None
        True
        """
        found = [item for item in self.line_items(learner_id, lesson_id) if item.course_id == course_id]
        return found[0] if found else None

    def line_items(self, learner_id: str, lesson_id: str) -> list[LineItem]:
        """Every line item of this learner's score on this lesson: one per course they launched it from.

        Examples
        --------
        >>> links = LtiLinks(Database("sqlite://"))
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms/a/li", "course-a")
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms/b/li", "course-b")
        >>> [(item.course_id, item.lineitem_url) for item in links.line_items("a" * 36, "X1.1")]
        [('course-a', 'https://lms/a/li'), ('course-b', 'https://lms/b/li')]
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms/b/li", "course-c")
        >>> [item.course_id for item in links.line_items("a" * 36, "X1.1")]  # a URL is one course's
        ['course-a', 'course-c']
        >>> links.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(
                select(_LINE_ITEMS)
                .where(_LINE_ITEMS.c.learner_id == learner_id, _LINE_ITEMS.c.lesson_id == lesson_id)
                .order_by(_LINE_ITEMS.c.course_id)
            ).all()
        return [
            LineItem(
                row.learner_id,
                row.lesson_id,
                row.issuer,
                row.client_id,
                row.subject,
                row.lineitem_url,
                row.last_score,
                row.course_id,
                row.refusal,
            )
            for row in rows
        ]

    def remember_context(
        self,
        issuer: str,
        client_id: str,
        context_id: str,
        title: str,
        memberships_url: str | None,
        course_id: str | None = None,
    ) -> None:
        """Record a class seen in a launch (its title and names-and-roles URL as last sent).

        Examples
        --------
        >>> links = LtiLinks(Database("sqlite://"))
        >>> links.remember_context("i", "c", "course-1", "Attention 101", None)
        >>> links.remember_context("i", "c", "course-1", "Attention 101", "https://lms.example/nrps")
        >>> [(c.title, c.memberships_url) for c in links.contexts()]
        [('Attention 101', 'https://lms.example/nrps')]
        >>> links.database.close()
        """
        now = utc_now()
        row = {
            "issuer": issuer,
            "client_id": client_id,
            "context_id": context_id,
            "title": title,
            "memberships_url": memberships_url,
            "updated_at": now,
        }
        keys = ["issuer", "client_id", "context_id"]
        with self.database.write() as conn:
            self.database.insert_ignore(conn, _CONTEXTS, row, keys)
            changes: dict[str, object] = {"title": title, "updated_at": now}
            if memberships_url:
                changes["memberships_url"] = memberships_url
            if course_id:
                changes["course_id"] = course_id
            conn.execute(update(_CONTEXTS).where(*(_CONTEXTS.c[k] == row[k] for k in keys)).values(**changes))

    def contexts(self) -> list[ClassContext]:
        """Every class seen in a launch, by title.

        Examples
        --------
        >>> LtiLinks(Database("sqlite://")).contexts()
        []
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_CONTEXTS).order_by(_CONTEXTS.c.title, _CONTEXTS.c.context_id)).all()
        return [
            ClassContext(
                r.issuer,
                r.client_id,
                r.context_id,
                r.title,
                r.memberships_url,
                r.roster_pulled_at,
                r.course_id,
            )
            for r in rows
        ]

    def context(self, issuer: str, client_id: str, context_id: str) -> ClassContext | None:
        """One class, or None.

        Examples
        --------
        >>> LtiLinks(Database("sqlite://")).context("i", "c", "x") is None
        True
        """
        return next(
            (
                c
                for c in self.contexts()
                if (c.issuer, c.client_id, c.context_id) == (issuer, client_id, context_id)
            ),
            None,
        )

    def roster_pulled(self, issuer: str, client_id: str, context_id: str) -> None:
        """Note that the class's roster was pulled now."""
        with self.database.write() as conn:
            conn.execute(
                update(_CONTEXTS)
                .where(
                    _CONTEXTS.c.issuer == issuer,
                    _CONTEXTS.c.client_id == client_id,
                    _CONTEXTS.c.context_id == context_id,
                )
                .values(roster_pulled_at=utc_now())
            )


__all__ = ["ClassContext", "LineItem", "LtiLinks"]
