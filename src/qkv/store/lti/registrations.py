"""One-time links for LTI Dynamic Registration: ``qkv lti registration-link`` makes one, an LMS uses it once.

A link's token is random (256 bits) and stored only as its SHA-256. ``check`` says whether a token may
still be used without using it (so a stranger's request is refused before qkv fetches anything for it);
``use`` spends it with one conditional UPDATE, so of two registrations racing with one link exactly one
goes on.

An attempt fetches from the LMS, so each is bounded across servers: ``begin`` holds the link for one
attempt at a time (until ``finish``, or until the hold runs out should its server stop), and ``finish``
counts a failed attempt; after ``max_failures`` of them the link is spent (``LinkState.FAILED``).

    >>> from qkv.store.sql.database import Database
    >>> links = RegistrationLinks(Database("sqlite://"), max_failures=2)
    >>> token = links.issue(timedelta(hours=1))
    >>> links.check(token), links.use(token, "https://lms.example"), links.check(token)
    (<LinkState.FRESH: 'fresh'>, True, <LinkState.USED: 'used'>)
    >>> links.check("never-made"), links.use(token, "https://lms.example")
    (<LinkState.UNKNOWN: 'unknown'>, False)
    >>> tried = links.issue(timedelta(hours=1))
    >>> links.begin(tried, timedelta(seconds=30)), links.begin(tried, timedelta(seconds=30))
    (<LinkState.FRESH: 'fresh'>, <LinkState.BUSY: 'busy'>)
    >>> links.finish(tried, failed=True); links.begin(tried, timedelta(seconds=30))
    <LinkState.FRESH: 'fresh'>
    >>> links.finish(tried, failed=True); links.check(tried), links.use(tried, "https://lms.example")
    (<LinkState.FAILED: 'failed'>, False)
    >>> links.database.close()
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import ColumnElement, Table, insert, or_, select, update

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
    FAILED = "failed"  # spent by failed attempts
    BUSY = "busy"  # fresh, but an attempt holds it now


MAX_FAILURES = 3


class RegistrationLinks:
    """The one-time registration links.

    Parameters
    ----------
    database : Database
        The database the servers share.
    max_failures : int
        Failed attempts that spend a link.
    """

    def __init__(self, database: Database, max_failures: int = MAX_FAILURES) -> None:
        self.database = database
        self.max_failures = max_failures

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
        now = utc_now()
        if row.used_at is not None:
            return LinkState.USED
        if row.expires_at <= now:
            return LinkState.EXPIRED
        if row.failures >= self.max_failures:
            return LinkState.FAILED
        busy = row.busy_until is not None and row.busy_until > now
        return LinkState.BUSY if busy else LinkState.FRESH

    def begin(self, token: str, hold: timedelta) -> LinkState:
        """Hold a fresh link for one attempt (for at most ``hold``): ``FRESH`` when this call holds it now,
        otherwise what the link is (``BUSY`` while another attempt holds it)."""
        if not token or len(token) > MAX_SECRET_LENGTH:
            return LinkState.UNKNOWN
        now = utc_now()
        with self.database.write() as conn:
            held = conn.execute(
                update(_LINKS)
                .where(
                    *self._usable(token, now),
                    or_(_LINKS.c.busy_until.is_(None), _LINKS.c.busy_until <= now),
                )
                .values(busy_until=now + hold)
            )
        if held.rowcount == 1:
            return LinkState.FRESH
        state = self.check(token)
        return LinkState.BUSY if state is LinkState.FRESH else state

    def finish(self, token: str, *, failed: bool) -> None:
        """End the attempt that holds the link; a failed one counts toward spending it."""
        if not token or len(token) > MAX_SECRET_LENGTH:
            return
        values: dict[str, object] = {"busy_until": None}
        if failed:
            values["failures"] = _LINKS.c.failures + 1
        with self.database.write() as conn:
            conn.execute(update(_LINKS).where(_LINKS.c.token_hash == digest(token)).values(**values))

    def _usable(self, token: str, now: datetime) -> tuple[ColumnElement[bool], ...]:
        return (
            _LINKS.c.token_hash == digest(token),
            _LINKS.c.used_at.is_(None),
            _LINKS.c.expires_at > now,
            _LINKS.c.failures < self.max_failures,
        )

    def use(self, token: str, issuer: str) -> bool:
        """Spend ``token`` for the platform ``issuer``; whether it was still fresh."""
        if not token or len(token) > MAX_SECRET_LENGTH:
            return False
        now = utc_now()
        with self.database.write() as conn:
            spent = conn.execute(
                update(_LINKS).where(*self._usable(token, now)).values(used_at=now, used_by=issuer[:255])
            )
        return spent.rowcount == 1


__all__ = ["MAX_FAILURES", "LinkState", "RegistrationLinks"]
