"""Learner accounts: a learner row with an external identity, its sign-in links and its sessions.

An account *is* a learner (the ``learners`` table; the account's id is the learner id), named by
``(issuer, external_id)``: ``issuer`` is None for this server's own roster (a student number, an email)
and the LTI ``iss`` for an LMS's learners (whose ``external_id`` is the ``sub``). So everything that
belongs to a learner id (answers, programs, drafts, variants, totals) belongs to the account. Sign-in
links and sessions live in the database, hashed (``qkv.store.sql.one_time_tokens``), so every server
sharing it accepts them.

    >>> from qkv.store.sql.database import Database
    >>> accounts = Accounts(Database("sqlite://"))
    >>> ada = accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    >>> accounts.find_or_create(None, "s-1001") == ada  # the same person, the same learner
    True
    >>> session = accounts.open_session(accounts.redeem(accounts.new_sign_in_token(ada)))
    >>> accounts.learner_for_session(session) == ada
    True
    >>> accounts.database.close()
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sqlalchemy import Connection, Table, delete, or_, select, update

from qkv.store.learner.accounts_merge import MergeReport, merge_learner
from qkv.store.learner.learners import MAX_DISPLAY_NAME, clean_display_name
from qkv.store.learner.roster import RosterEntry
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.one_time_tokens import SessionTable, SignInTokens
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import LearnerRow, LearnerSession, LearnerSignInToken

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_TOKENS = SignInTokens(LearnerSignInToken.__table__, "learner_id")  # type: ignore[arg-type]
_SESSIONS = SessionTable(LearnerSession.__table__, "learner_id")  # type: ignore[arg-type]

ROSTER_LINK_LIFETIME = timedelta(days=7)
DEVICE_LINK_LIFETIME = timedelta(minutes=10)
SESSION_LIFETIME = timedelta(days=30)
MAX_IDENTITY_LENGTH = 255
OWN_ROSTER = ""  # the issuer column's value for accounts of this server's own roster

__all__ = [
    "DEVICE_LINK_LIFETIME",
    "ROSTER_LINK_LIFETIME",
    "SESSION_LIFETIME",
    "AccountRecord",
    "Accounts",
    "LinkKind",
    "MergeReport",
    "SignInLink",
]


class LinkKind(Enum):
    """Who made a learner's sign-in link, which decides whether it may merge anonymous work.

    ``PERSONAL``: the learner's own link (roster import, ``qkv learners link``, the instructor's button);
    opening it brings the browser's anonymous work into the account. ``DEVICE``: made on a device
    already signed in, for another one ("Sign in on another device"); it never merges, because whoever
    presses it need not be the account's owner.
    """

    PERSONAL = "personal"
    DEVICE = "device"


@dataclass(frozen=True)
class AccountRecord:
    """A learner with an account. ``issuer`` is None for this server's own roster."""

    learner_id: str
    issuer: str | None
    external_id: str
    display_name: str | None
    email: str | None
    created_at: datetime
    last_seen_at: datetime | None


@dataclass(frozen=True)
class SignInLink:
    """A learner's sign-in link as its page shows it: whose account it opens, and its kind."""

    account: AccountRecord
    kind: LinkKind

    @property
    def merges(self) -> bool:
        """Whether using it brings the browser's anonymous work into the account (personal links only)."""
        return self.kind is LinkKind.PERSONAL


def _identity_part(value: object, what: str) -> str:
    """A trimmed issuer or external id of 1 to 255 printable characters; ValueError otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, not the {type(value).__name__} {value!r}.")
    trimmed = check_storable(value, what).strip()
    if not trimmed:
        raise ValueError(f"{what} cannot be empty.")
    if len(trimmed) > MAX_IDENTITY_LENGTH:
        raise ValueError(
            f"{what} may have at most {MAX_IDENTITY_LENGTH} characters, but {trimmed[:40]!r}... "
            f"has {len(trimmed)}."
        )
    if any(not ch.isprintable() for ch in trimmed):
        raise ValueError(f"{what} {trimmed[:80]!r} contains control characters.")
    return trimmed


def _account_name(name: str | None) -> str | None:
    """A display name for an account: checked like any, but one longer than 80 characters is shortened
    (an LMS may send a long name; a name is not an identity, so it is not worth refusing a sign-in)."""
    if name is None:
        return None
    squeezed = " ".join(str(name).split())
    if len(squeezed) > MAX_DISPLAY_NAME:
        squeezed = squeezed[: MAX_DISPLAY_NAME - 1].rstrip() + "…"
    return clean_display_name(check_storable(squeezed, "The display name"))


def _record(row: Any) -> AccountRecord:
    return AccountRecord(
        learner_id=row.id,
        issuer=row.issuer or None,
        external_id=row.external_id,
        display_name=row.display_name,
        email=row.email,
        created_at=row.created_at,
        last_seen_at=row.last_seen_at,
    )


class Accounts:
    """Learner accounts, their one-time sign-in links and their database sessions.

    Parameters
    ----------
    database : Database
        The database to use.

    Examples
    --------
    >>> accounts = Accounts(Database("sqlite://"))
    >>> learner = accounts.find_or_create("https://lms.example", "sub-7", "Grace", "grace@example.org")
    >>> record = accounts.get(learner)
    >>> record.issuer, record.external_id, record.display_name, record.email
    ('https://lms.example', 'sub-7', 'Grace', 'grace@example.org')
    >>> accounts.database.close()
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    # -- accounts ----------------------------------------------------------------------------------

    def find_or_create(
        self,
        issuer: str | None,
        external_id: str,
        display_name: str | None = None,
        email: str | None = None,
    ) -> str:
        """The learner id of the account ``(issuer, external_id)``, created if new.

        A name or email given replaces the stored one (an LMS sends the current ones at each launch);
        None leaves it as it is. Safe when two servers create the same account at once.

        Parameters
        ----------
        issuer : str or None
            None for this server's own roster; an LMS's ``iss`` for its learners.
        external_id : str
            The learner's id there: a student number or email, or the LMS's ``sub``.
        display_name, email : str, optional
            The name and email to keep (a name over 80 characters is shortened).

        Returns
        -------
        str
            The learner id.

        Raises
        ------
        ValueError
            If the issuer or external id is empty, too long (over 255 characters) or holds control
            characters, or the email is too long or holds control characters.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> first = accounts.find_or_create(None, "s-1", "Ada")
        >>> accounts.find_or_create(None, " s-1 ", display_name="Ada L.") == first
        True
        >>> accounts.get(first).display_name
        'Ada L.'
        >>> accounts.find_or_create("https://lms.example", "s-1") == first  # another issuer, another person
        False
        >>> accounts.find_or_create(None, "")
        Traceback (most recent call last):
        ...
        ValueError: An external id cannot be empty.
        >>> accounts.database.close()
        """
        with self.database.write() as conn:
            return self._find_or_create(conn, issuer, external_id, display_name, email)

    def _find_or_create(
        self,
        conn: Connection,
        issuer: str | None,
        external_id: str,
        display_name: str | None,
        email: str | None,
    ) -> str:
        key_issuer = OWN_ROSTER if issuer is None else _identity_part(issuer, "An issuer")
        key_id = _identity_part(external_id, "An external id")
        changes: dict[str, Any] = {}
        if display_name is not None:
            changes["display_name"] = _account_name(display_name)
        if email is not None:
            changes["email"] = _identity_part(email, "An email address") if email.strip() else None
        now = utc_now()
        row = {"id": str(uuid.uuid4()), "created_at": now, "issuer": key_issuer, "external_id": key_id}
        self.database.insert_ignore(conn, _LEARNERS, row, ["issuer", "external_id"])
        mine = (_LEARNERS.c.issuer == key_issuer, _LEARNERS.c.external_id == key_id)
        if changes:
            conn.execute(update(_LEARNERS).where(*mine).values(**changes))
        learner_id: str = conn.execute(select(_LEARNERS.c.id).where(*mine)).scalar_one()
        return learner_id

    def find(self, issuer: str | None, external_id: str) -> AccountRecord | None:
        """The account ``(issuer, external_id)``, or None.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> _ = accounts.find_or_create(None, "s-1", "Ada")
        >>> accounts.find(None, "s-1").display_name, accounts.find(None, "s-2")
        ('Ada', None)
        >>> accounts.database.close()
        """
        key_issuer = OWN_ROSTER if issuer is None else issuer.strip()
        with self.database.read() as conn:
            row = conn.execute(
                select(_LEARNERS).where(
                    _LEARNERS.c.issuer == key_issuer, _LEARNERS.c.external_id == external_id.strip()
                )
            ).first()
        return _record(row) if row else None

    def get(self, learner_id: str) -> AccountRecord | None:
        """The account of a learner id, or None (no such learner, or an anonymous one).

        Examples
        --------
        >>> Accounts(Database("sqlite://")).get("a" * 36) is None
        True
        """
        with self.database.read() as conn:
            row = conn.execute(
                select(_LEARNERS).where(_LEARNERS.c.id == learner_id, _LEARNERS.c.external_id.is_not(None))
            ).first()
        return _record(row) if row else None

    def all(self) -> list[AccountRecord]:
        """Every account, by name then external id.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> _ = accounts.find_or_create(None, "2", "Grace"), accounts.find_or_create(None, "1", "Ada")
        >>> [record.display_name for record in accounts.all()]
        ['Ada', 'Grace']
        >>> accounts.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_LEARNERS).where(_LEARNERS.c.external_id.is_not(None))).all()
        records = [_record(row) for row in rows]
        return sorted(
            records, key=lambda r: ((r.display_name or "").casefold(), r.issuer or "", r.external_id)
        )

    def import_roster(
        self, entries: Sequence[RosterEntry], lifetime: timedelta = ROSTER_LINK_LIFETIME
    ) -> list[tuple[AccountRecord, str]]:
        """Create (or update) the roster's accounts and a one-time sign-in token for each, all or nothing.

        Parameters
        ----------
        entries : sequence of RosterEntry
            The roster, checked already (``qkv.store.learner.roster.parse_roster``).
        lifetime : timedelta
            How long each link works (7 days by default).

        Returns
        -------
        list of (AccountRecord, str)
            Each account, in the roster's order, with its token.

        Examples
        --------
        >>> from qkv.store.learner.roster import parse_roster
        >>> accounts = Accounts(Database("sqlite://"))
        >>> made = accounts.import_roster(parse_roster("name,external id\\nAda,s-1\\nGrace,s-2\\n"))
        >>> [(record.display_name, record.external_id, len(token)) for record, token in made]
        [('Ada', 's-1', 43), ('Grace', 's-2', 43)]
        >>> accounts.database.close()
        """
        made = []
        with self.database.write() as conn:  # one transaction: a failure leaves nothing half-imported
            for entry in entries:
                learner_id = self._find_or_create(conn, None, entry.external_id, entry.name, entry.email)
                token = _TOKENS.issue(conn, learner_id, lifetime, kind=LinkKind.PERSONAL.value)
                row = conn.execute(select(_LEARNERS).where(_LEARNERS.c.id == learner_id)).one()
                made.append((_record(row), token))
        return made

    # -- sign-in links and sessions ---------------------------------------------------------------

    def new_sign_in_token(
        self,
        learner_id: str,
        lifetime: timedelta = ROSTER_LINK_LIFETIME,
        kind: LinkKind = LinkKind.PERSONAL,
    ) -> str:
        """A fresh one-time sign-in token for the account; ValueError if the learner has no account.

        Parameters
        ----------
        learner_id : str
            The account's learner id.
        lifetime : timedelta
            How long the link works (7 days by default).
        kind : LinkKind
            ``PERSONAL`` (the default) for the learner's own link, ``DEVICE`` for "Sign in on another
            device" (``new_device_token``).

        Returns
        -------
        str
            The token (stored only hashed).

        Raises
        ------
        ValueError
            If the learner has no account.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> ada = accounts.find_or_create(None, "s-1")
        >>> accounts.redeem(accounts.new_sign_in_token(ada, DEVICE_LINK_LIFETIME)) == ada
        True
        >>> accounts.new_sign_in_token("a" * 36)
        Traceback (most recent call last):
        ...
        ValueError: The learner 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' has no account, so no sign-in ...
        >>> accounts.database.close()
        """
        with self.database.write() as conn:
            known = conn.execute(
                select(_LEARNERS.c.id).where(
                    _LEARNERS.c.id == learner_id, _LEARNERS.c.external_id.is_not(None)
                )
            ).first()
            if known is None:
                raise ValueError(
                    f"The learner {learner_id!r} has no account, so no sign-in link can be made for them."
                )
            return _TOKENS.issue(conn, learner_id, lifetime, kind=kind.value)

    def new_device_token(self, learner_id: str) -> str:
        """A link for the learner's other device: works once, for 10 minutes, and never merges.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> ada = accounts.find_or_create(None, "s-1", "Ada")
        >>> accounts.inspect_link(accounts.new_device_token(ada)).merges
        False
        >>> accounts.database.close()
        """
        return self.new_sign_in_token(learner_id, DEVICE_LINK_LIFETIME, LinkKind.DEVICE)

    def inspect_link(self, token: str | None) -> SignInLink | None:
        """Whose account a link would open, and its kind, without using it up (None: it would not work).

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> token = accounts.new_sign_in_token(accounts.find_or_create(None, "s-1", "Ada"))
        >>> link = accounts.inspect_link(token)
        >>> link.account.display_name, link.kind, link.merges, accounts.inspect_link(token) == link
        ('Ada', <LinkKind.PERSONAL: 'personal'>, True, True)
        >>> accounts.inspect_link("made-up") is None
        True
        >>> accounts.database.close()
        """
        with self.database.read() as conn:
            return self._link(conn, _TOKENS.peek(conn, token))

    def use_link(self, token: str | None) -> SignInLink | None:
        """Use a link up: whose account it opens and its kind, or None for a used, expired or unknown one.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> token = accounts.new_device_token(accounts.find_or_create(None, "s-1", "Ada"))
        >>> accounts.use_link(token).kind, accounts.use_link(token)
        (<LinkKind.DEVICE: 'device'>, None)
        >>> accounts.database.close()
        """
        with self.database.write() as conn:
            return self._link(conn, _TOKENS.redeem_row(conn, token))

    @staticmethod
    def _link(conn: Connection, token_row: Any) -> SignInLink | None:
        if token_row is None:
            return None
        row = conn.execute(select(_LEARNERS).where(_LEARNERS.c.id == token_row.learner_id)).one()
        # A link without a kind is treated as a device link: it can then never merge by mistake.
        kind = LinkKind.PERSONAL if token_row.kind == LinkKind.PERSONAL.value else LinkKind.DEVICE
        return SignInLink(_record(row), kind)

    def redeem(self, token: str | None) -> str | None:
        """Use up a sign-in token: the learner id, or None for a used, expired or unknown token.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> token = accounts.new_sign_in_token(accounts.find_or_create(None, "s-1"))
        >>> accounts.redeem(token) is not None, accounts.redeem(token), accounts.redeem("made-up")
        (True, None, None)
        >>> accounts.database.close()
        """
        link = self.use_link(token)
        return None if link is None else link.account.learner_id

    def open_session(self, learner_id: str, lifetime: timedelta = SESSION_LIFETIME) -> str:
        """Open a new session for the learner and return its id (stored only hashed)."""
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            return _SESSIONS.open(conn, learner_id, lifetime)

    def learner_for_session(self, session: str | None) -> str | None:
        """The learner of a live session, or None (unknown, ended, expired).

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> accounts.learner_for_session(None), accounts.learner_for_session("made-up")
        (None, None)
        >>> accounts.database.close()
        """
        if not session:
            return None
        with self.database.read() as conn:
            return _SESSIONS.owner_of(conn, session)

    def end_session(self, session: str) -> None:
        """Sign out: the session stops working on every server.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> session = accounts.open_session(accounts.find_or_create(None, "s-1"))
        >>> accounts.end_session(session); accounts.learner_for_session(session) is None
        True
        >>> accounts.database.close()
        """
        with self.database.write() as conn:
            _SESSIONS.end(conn, session)

    def end_all_sessions(self, learner_id: str) -> None:
        """Sign the learner out on every device: each of their sessions stops working on every server.

        Their device links not used yet stop working too (one shown on a screen that someone else saw
        would sign a device in again); their personal links keep working, so they can sign back in.

        Examples
        --------
        >>> accounts = Accounts(Database("sqlite://"))
        >>> ada = accounts.find_or_create(None, "s-1")
        >>> phone, laptop = accounts.open_session(ada), accounts.open_session(ada)
        >>> device, personal = accounts.new_device_token(ada), accounts.new_sign_in_token(ada)
        >>> accounts.end_all_sessions(ada)
        >>> accounts.learner_for_session(phone), accounts.learner_for_session(laptop)
        (None, None)
        >>> accounts.inspect_link(device) is None, accounts.inspect_link(personal) is not None
        (True, True)
        >>> accounts.database.close()
        """
        with self.database.write() as conn:
            _SESSIONS.end_all(conn, learner_id)
            tokens = _TOKENS.table
            conn.execute(
                delete(tokens).where(
                    tokens.c.learner_id == learner_id,
                    tokens.c.used_at.is_(None),
                    or_(tokens.c.kind.is_(None), tokens.c.kind != LinkKind.PERSONAL.value),
                )
            )

    # -- merging ----------------------------------------------------------------------------------

    def merge(self, anonymous_id: str, into: str) -> MergeReport:
        """Move an anonymous learner's work into an account (see ``qkv.store.learner.accounts_merge``).

        Raises
        ------
        ValueError
            If ``anonymous_id`` is an account (accounts are never merged into one another).
        """
        with self.database.write() as conn:
            return merge_learner(conn, anonymous_id, into)
