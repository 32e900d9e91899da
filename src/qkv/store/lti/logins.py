"""LTI logins in progress and the id-token nonces already used, in the database every server shares.

The OIDC login (``/lti/login``) stores a random state and nonce; the launch (``/lti/launch``, maybe on
another server) uses the state up once, by one conditional UPDATE, and records the id token's nonce so
the same token is never accepted twice. States are stored only as their SHA-256. A login's row is small
(its fields bounded, see ``begin``) and at most ``max_pending`` logins wait for their launch at once, all
servers together, so ``/lti/login``, open to anyone, cannot fill the database.

    >>> from qkv.store.sql.database import Database
    >>> logins = LtiLogins(Database("sqlite://"))
    >>> state, nonce = logins.begin("https://lms.example", "c", "http://qkv.example/lessons/X1.1")
    >>> logins.consume(state).nonce == nonce, logins.consume(state).outcome
    (True, <StateOutcome.USED: 'used'>)
    >>> logins.database.close()
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import Connection, Table, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import LtiLoginState, LtiUsedNonce

_STATES: Table = LtiLoginState.__table__  # type: ignore[assignment]
_NONCES: Table = LtiUsedNonce.__table__  # type: ignore[assignment]
LOGIN_LIFETIME = timedelta(minutes=10)
MAX_PENDING = 10_000  # logins begun and not yet launched, all servers together
FIELD_LIMITS = {"issuer": 255, "client_id": 255, "target_link_uri": 2000}  # the columns' lengths


class LoginsFull(RuntimeError):
    """As many logins are pending as the server allows; the web layer answers 503 with a sentence."""


class StateOutcome(StrEnum):
    """What became of a state the launch brought back."""

    FRESH = "fresh"  # known, unused, in time: now used up
    USED = "used"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class LoginState:
    """A login the launch completes: the nonce and platform it was started for."""

    outcome: StateOutcome
    nonce: str = ""
    issuer: str = ""
    client_id: str = ""
    target_link_uri: str = ""


def state_digest(state: str) -> str:
    """The SHA-256 a state is stored (and its cookie named) by.

    Examples
    --------
    >>> len(state_digest("abc"))
    64
    """
    return hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()


class LtiLogins:
    """Login states and used nonces.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def begin(
        self,
        issuer: str,
        client_id: str,
        target_link_uri: str,
        lifetime: timedelta = LOGIN_LIFETIME,
        *,
        max_pending: int = MAX_PENDING,
    ) -> tuple[str, str]:
        """Start a login: a new random ``(state, nonce)``, valid for ``lifetime``.

        Parameters
        ----------
        issuer, client_id, target_link_uri : str
            The platform and what it asked to open; text without NUL of at most 255, 255 and 2000
            characters.
        lifetime : timedelta
            How long the launch may take.
        max_pending : int, optional
            Refuse when this many logins are begun, unexpired and not launched (default ``MAX_PENDING``).

        Raises
        ------
        ValueError
            With a sentence, for a field that is too long or holds NUL.
        LoginsFull
            When ``max_pending`` logins are pending.

        Examples
        --------
        >>> logins = LtiLogins(Database("sqlite://"))
        >>> state, nonce = logins.begin("https://lms.example", "c", "http://qkv.example/")
        >>> len(state), len(nonce), logins.pending()
        (43, 43, 1)
        >>> try:
        ...     logins.begin("https://lms.example", "c", "http://qkv.example/", max_pending=1)
        ... except LoginsFull as full:
        ...     print(full)
        1 LTI logins are waiting for their launch, the most this server keeps.
        >>> logins.database.close()
        """
        _check_fields(issuer=issuer, client_id=client_id, target_link_uri=target_link_uri)
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = utc_now()
        with self.database.write() as conn:
            conn.execute(delete(_STATES).where(_STATES.c.expires_at < now - lifetime))  # old ones go
            waiting = _pending(conn, now)
            if waiting >= max_pending:
                raise LoginsFull(
                    f"{waiting} LTI logins are waiting for their launch, the most this server keeps."
                )
            conn.execute(
                insert(_STATES).values(
                    state_hash=state_digest(state),
                    nonce=nonce,
                    issuer=issuer,
                    client_id=client_id,
                    target_link_uri=target_link_uri,
                    created_at=now,
                    expires_at=now + lifetime,
                )
            )
        return state, nonce

    def pending(self) -> int:
        """Logins begun, unexpired and not launched yet (all servers together)."""
        with self.database.read() as conn:
            return _pending(conn, utc_now())

    def consume(self, state: str) -> LoginState:
        """Use a state up; of two servers consuming it at once, exactly one gets ``FRESH``.

        Examples
        --------
        >>> LtiLogins(Database("sqlite://")).consume("made-up").outcome
        <StateOutcome.UNKNOWN: 'unknown'>
        """
        if not state or len(state) > 200:
            return LoginState(StateOutcome.UNKNOWN)
        digest, now = state_digest(state), utc_now()
        with self.database.write() as conn:
            row = conn.execute(select(_STATES).where(_STATES.c.state_hash == digest)).first()
            if row is None:
                return LoginState(StateOutcome.UNKNOWN)
            found = LoginState(StateOutcome.FRESH, row.nonce, row.issuer, row.client_id, row.target_link_uri)
            if row.used_at is not None:
                return LoginState(StateOutcome.USED, *_fields(found))
            if row.expires_at <= now:
                return LoginState(StateOutcome.EXPIRED, *_fields(found))
            taken = conn.execute(
                update(_STATES)
                .where(_STATES.c.state_hash == digest, _STATES.c.used_at.is_(None))
                .values(used_at=now)
            )
            if taken.rowcount != 1:
                return LoginState(StateOutcome.USED, *_fields(found))
        return found

    def peek(self, state: str) -> tuple[str, str] | None:
        """The issuer and client id of a login still in progress (fresh, unused), without using it up.

        Examples
        --------
        >>> logins = LtiLogins(Database("sqlite://"))
        >>> state, _ = logins.begin("https://lms.example", "c1", "https://qkv.example/lessons/X1.1")
        >>> logins.peek(state), logins.peek("made-up")
        (('https://lms.example', 'c1'), None)
        """
        if not state or len(state) > 200:
            return None
        with self.database.read() as conn:
            row = conn.execute(select(_STATES).where(_STATES.c.state_hash == state_digest(state))).first()
        if row is None or row.used_at is not None or row.expires_at <= utc_now():
            return None
        return str(row.issuer), str(row.client_id)

    def use_nonce(self, issuer: str, nonce: str, expires_at: datetime) -> bool:
        """Record an id token's nonce; False when it was used before (a replayed token).

        Examples
        --------
        >>> logins = LtiLogins(Database("sqlite://"))
        >>> later = utc_now() + timedelta(minutes=5)
        >>> [logins.use_nonce("https://lms.example", "n1", later) for _ in range(2)]
        [True, False]
        >>> logins.database.close()
        """
        now = utc_now()
        try:
            with self.database.write() as conn:
                conn.execute(delete(_NONCES).where(_NONCES.c.expires_at < now))
                conn.execute(insert(_NONCES).values(issuer=issuer, nonce=nonce[:255], expires_at=expires_at))
        except IntegrityError:
            return False
        return True


def _pending(conn: Connection, now: datetime) -> int:
    query = select(func.count()).select_from(_STATES)
    waiting = query.where(_STATES.c.used_at.is_(None), _STATES.c.expires_at > now)
    return int(conn.execute(waiting).scalar_one())


def _check_fields(**fields: str) -> None:
    """Refuse a field the table cannot hold, with a sentence (PostgreSQL would fail on it otherwise)."""
    for name, value in fields.items():
        limit = FIELD_LIMITS[name]
        if len(value) > limit:
            raise ValueError(f"The login's {name} has {len(value):,} characters; at most {limit:,} are kept.")
        if "\x00" in value:
            raise ValueError(f"The login's {name} holds a NUL character, which no field here takes.")


def _fields(state: LoginState) -> tuple[str, str, str, str]:
    return state.nonce, state.issuer, state.client_id, state.target_link_uri


__all__ = [
    "LOGIN_LIFETIME",
    "MAX_PENDING",
    "LoginState",
    "LoginsFull",
    "LtiLogins",
    "StateOutcome",
    "state_digest",
]
