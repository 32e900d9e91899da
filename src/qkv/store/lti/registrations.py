"""One-time links for LTI Dynamic Registration: ``qkv lti registration-link`` makes one, an LMS uses it once.

A link's token is random (256 bits) and stored only as its SHA-256. ``check`` says whether a token may
still be used without using it (so a stranger's request is refused before qkv fetches anything for it);
``use`` spends it with one conditional UPDATE, so of two registrations racing with one link exactly one
goes on.

    >>> from qkv.store.sql.database import Database
    >>> links = RegistrationLinks(Database("sqlite://"))
    >>> token = links.issue(timedelta(hours=1))
    >>> links.check(token), links.use(token, "https://lms.example"), links.check(token)
    (<LinkState.FRESH: 'fresh'>, True, <LinkState.USED: 'used'>)
    >>> links.check("never-made"), links.use(token, "https://lms.example")
    (<LinkState.UNKNOWN: 'unknown'>, False)
    >>> links.database.close()
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from sqlalchemy import Table, insert, select, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.one_time_tokens import MAX_SECRET_LENGTH, digest, new_secret
from qkv.store.sql.tables import LtiRegistrationLink

_LINKS: Table = LtiRegistrationLink.__table__  # type: ignore[assignment]


class LinkState(StrEnum):
    """What a registration token is."""

    FRESH = "fresh"
    USED = "used"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


class RegistrationLinks:
    """The one-time registration links.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def issue(self, lifetime: timedelta) -> str:
        """A new token, valid for ``lifetime`` and once."""
        token, now = new_secret(), utc_now()
        with self.database.write() as conn:
            conn.execute(
                insert(_LINKS).values(token_hash=digest(token), created_at=now, expires_at=now + lifetime)
            )
        return token

    def check(self, token: str) -> LinkState:
        """Whether ``token`` may still be used (nothing is changed)."""
        if not token or len(token) > MAX_SECRET_LENGTH:
            return LinkState.UNKNOWN
        with self.database.read() as conn:
            row = conn.execute(select(_LINKS).where(_LINKS.c.token_hash == digest(token))).first()
        if row is None:
            return LinkState.UNKNOWN
        if row.used_at is not None:
            return LinkState.USED
        return LinkState.EXPIRED if row.expires_at <= utc_now() else LinkState.FRESH

    def use(self, token: str, issuer: str) -> bool:
        """Spend ``token`` for the platform ``issuer``; whether it was still fresh."""
        if not token or len(token) > MAX_SECRET_LENGTH:
            return False
        now = utc_now()
        with self.database.write() as conn:
            spent = conn.execute(
                update(_LINKS)
                .where(
                    _LINKS.c.token_hash == digest(token),
                    _LINKS.c.used_at.is_(None),
                    _LINKS.c.expires_at > now,
                )
                .values(used_at=now, used_by=issuer[:255])
            )
        return spent.rowcount == 1


__all__ = ["LinkState", "RegistrationLinks"]
