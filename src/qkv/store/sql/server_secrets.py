"""Secrets the servers share through the database (e.g. the key that signs learners' cookies)."""

from __future__ import annotations

import secrets

from sqlalchemy import Table, select

from qkv.store.sql.database import Database
from qkv.store.sql.tables import ServerSecret

_SECRETS: Table = ServerSecret.__table__  # type: ignore[assignment]


def shared_secret(database: Database, name: str) -> str:
    """A random secret stored once in the database and shared by every server that uses it.

    The first server to ask creates it; the others read the same value.

    Parameters
    ----------
    database : Database
        The database the servers share.
    name : str
        What the secret is for.

    Returns
    -------
    str
        The secret (64 URL-safe characters).

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> first = shared_secret(database, "cookie-signing")
    >>> len(first), shared_secret(database, "cookie-signing") == first
    (64, True)
    >>> database.close()
    """
    with database.write() as conn:
        database.insert_ignore(conn, _SECRETS, {"name": name, "value": secrets.token_urlsafe(48)}, ["name"])
        value = conn.execute(select(_SECRETS.c.value).where(_SECRETS.c.name == name)).scalar_one()
    return str(value)


__all__ = ["shared_secret"]
