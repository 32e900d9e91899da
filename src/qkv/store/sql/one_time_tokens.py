"""One-time sign-in tokens and database sessions, written once for instructors and learners alike.

A token or session id is random (256 bits) and stored only as its SHA-256, so a copy of the database
lets nobody sign in. A token is used up by one conditional UPDATE, so of two servers redeeming it at
once exactly one succeeds. Each kind of owner has its own two tables of the same shape:
``(token_hash, OWNER, created_at, expires_at, used_at)`` and ``(session_hash, OWNER, created_at,
expires_at)``, where OWNER is the owner's id column (``instructor_id``, ``learner_id``).

    >>> from sqlalchemy import Column, DateTime, MetaData, String, Table
    >>> from qkv.store.sql.database import Database
    >>> meta = MetaData()
    >>> tokens = Table("t", meta, Column("token_hash", String(64), primary_key=True),
    ...     Column("owner", String(36)), Column("created_at", DateTime), Column("expires_at", DateTime),
    ...     Column("used_at", DateTime))
    >>> database = Database("sqlite://")
    >>> meta.create_all(database.engine)
    >>> links = SignInTokens(tokens, "owner")
    >>> with database.write() as conn:
    ...     token = links.issue(conn, "ada", timedelta(minutes=5))
    ...     links.redeem(conn, token), links.redeem(conn, token)
    ('ada', None)
    >>> database.close()
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, Row, Table, delete, insert, select, update

from qkv.store.sql.clock import utc_now

__all__ = ["MAX_SECRET_LENGTH", "SessionTable", "SignInTokens", "digest", "new_secret"]

MAX_SECRET_LENGTH = 200  # longer "tokens" are refused unread: ours have 43 characters


def digest(secret: str) -> str:
    """The SHA-256 (hex) under which a token or session id is stored.

    Examples
    --------
    >>> len(digest("abc")), digest("abc") == digest("abc")
    (64, True)
    """
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def new_secret() -> str:
    """A fresh random token or session id: 256 bits, URL-safe (43 characters).

    Examples
    --------
    >>> len(new_secret()), new_secret() != new_secret()
    (43, True)
    """
    return secrets.token_urlsafe(32)


def _plausible(secret: str | None) -> bool:
    return bool(secret) and len(secret or "") <= MAX_SECRET_LENGTH


class SignInTokens:
    """One-time sign-in tokens in ``table``, owned through its column ``owner``.

    Parameters
    ----------
    table : sqlalchemy.Table
        ``token_hash``, the owner column, ``created_at``, ``expires_at``, ``used_at``.
    owner : str
        The name of the owner's id column.
    """

    def __init__(self, table: Table, owner: str) -> None:
        self.table = table
        self.owner = table.c[owner]

    def issue(self, conn: Connection, owner_id: str, lifetime: timedelta, **columns: Any) -> str:
        """Store a new token for ``owner_id`` (inside ``Database.write()``) and return it.

        ``columns`` are the table's other columns, if it has any (a learner link's ``kind``).
        """
        token = new_secret()
        now = utc_now()
        conn.execute(
            insert(self.table).values(
                {
                    **columns,
                    "token_hash": digest(token),
                    self.owner.name: owner_id,
                    "created_at": now,
                    "expires_at": now + lifetime,
                }
            )
        )
        return token

    def redeem(self, conn: Connection, token: str | None) -> str | None:
        """Use the token up; its owner's id, or None for a used, expired, unknown or malformed token."""
        row = self.redeem_row(conn, token)
        return None if row is None else str(row._mapping[self.owner.name])

    def redeem_row(self, conn: Connection, token: str | None) -> Row[Any] | None:
        """Use the token up; its whole row, or None for a used, expired, unknown or malformed token."""
        if not _plausible(token):
            return None
        now = utc_now()
        hashed = digest(token or "")
        c = self.table.c
        used = conn.execute(
            update(self.table)
            .where(c.token_hash == hashed, c.used_at.is_(None), c.expires_at > now)
            .values(used_at=now)
        )
        if used.rowcount != 1:
            return None
        return conn.execute(select(self.table).where(c.token_hash == hashed)).one()

    def peek(self, conn: Connection, token: str | None) -> Row[Any] | None:
        """The row of a token that would work now, without using it up (None: used, expired, unknown).

        What a sign-in page shows before its button (whose account the link opens) comes from here.
        """
        if not _plausible(token):
            return None
        c = self.table.c
        found: Row[Any] | None = conn.execute(
            select(self.table).where(
                c.token_hash == digest(token or ""), c.used_at.is_(None), c.expires_at > utc_now()
            )
        ).first()
        return found

    def forget(self, conn: Connection, owner_id: str) -> None:
        """Delete every token of ``owner_id``."""
        conn.execute(delete(self.table).where(self.owner == owner_id))


class SessionTable:
    """Sessions in ``table``, owned through its column ``owner``.

    Parameters
    ----------
    table : sqlalchemy.Table
        ``session_hash``, the owner column, ``created_at``, ``expires_at``.
    owner : str
        The name of the owner's id column.
    """

    def __init__(self, table: Table, owner: str) -> None:
        self.table = table
        self.owner = table.c[owner]

    def open(self, conn: Connection, owner_id: str, lifetime: timedelta) -> str:
        """Store a new session of ``owner_id`` (inside ``Database.write()``) and return its id.

        The owner's expired sessions are deleted on the way, so they do not pile up.
        """
        session = new_secret()
        now = utc_now()
        c = self.table.c
        conn.execute(delete(self.table).where(self.owner == owner_id, c.expires_at <= now))
        conn.execute(
            insert(self.table).values(
                {
                    "session_hash": digest(session),
                    self.owner.name: owner_id,
                    "created_at": now,
                    "expires_at": now + lifetime,
                }
            )
        )
        return session

    def owner_of(self, conn: Connection, session: str | None) -> str | None:
        """The owner of a live session, or None (unknown, ended, expired or malformed)."""
        if not _plausible(session):
            return None
        c = self.table.c
        found: str | None = conn.execute(
            select(self.owner).where(c.session_hash == digest(session or ""), c.expires_at > utc_now())
        ).scalar()
        return found

    def end(self, conn: Connection, session: str) -> None:
        """End one session (it stops working on every server)."""
        conn.execute(delete(self.table).where(self.table.c.session_hash == digest(session)))

    def end_all(self, conn: Connection, owner_id: str) -> None:
        """End every session of ``owner_id``."""
        conn.execute(delete(self.table).where(self.owner == owner_id))
