"""The tool's RSA key pair, kept in the database so that every server signs with the same key.

The first server that needs it stores the key it made; every other server, then and later, reads that one
(as ``server_secrets`` does for the cookie key). The private key never leaves the database and the
servers; ``/lti/jwks.json`` publishes its public half.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Table, select

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import LtiToolKey

_KEYS: Table = LtiToolKey.__table__  # type: ignore[assignment]
TOOL_KEY = "tool"


@dataclass(frozen=True)
class StoredKey:
    """The tool's key: its id (``kid``) and the private key in PEM."""

    kid: str
    private_pem: str


def tool_key(database: Database, make: Callable[[], StoredKey]) -> StoredKey:
    """The tool's key, made by ``make`` the first time any server asks.

    Parameters
    ----------
    database : Database
        The database the servers share.
    make : callable
        Makes a new key; called on every first ask, but only the first stored one is ever used.

    Returns
    -------
    StoredKey

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> first = tool_key(database, lambda: StoredKey("k1", "PEM 1"))
    >>> tool_key(database, lambda: StoredKey("k2", "PEM 2")) == first
    True
    >>> database.close()
    """
    with database.read() as conn:
        row = conn.execute(select(_KEYS).where(_KEYS.c.name == TOOL_KEY)).first()
    if row is None:
        made = make()
        with database.write() as conn:
            values = {
                "name": TOOL_KEY,
                "kid": made.kid,
                "private_pem": made.private_pem,
                "created_at": utc_now(),
            }
            database.insert_ignore(conn, _KEYS, values, ["name"])
            row = conn.execute(select(_KEYS).where(_KEYS.c.name == TOOL_KEY)).one()
    return StoredKey(row.kid, row.private_pem)


__all__ = ["StoredKey", "tool_key"]
