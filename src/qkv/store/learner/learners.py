"""Learners: whether one has saved work, and their display name.

A learner's row appears with their first saved work (``Database.ensure_learner``), so a browser that
never answers leaves nothing behind.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, Table, func, select, update

from qkv.store.sql.database import Database
from qkv.store.sql.tables import LearnerRow

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]

MAX_DISPLAY_NAME = 80


def clean_display_name(name: object) -> str | None:
    """Check and tidy a display name: trimmed, at most 80 characters, no control characters.

    Parameters
    ----------
    name : object
        What the learner typed; an empty string clears the name.

    Returns
    -------
    str or None
        The trimmed name, or None for an empty one.

    Raises
    ------
    ValueError
        If the name is not a string, is too long or holds control characters.

    Examples
    --------
    >>> clean_display_name("  Ada ")
    'Ada'
    >>> clean_display_name("") is None
    True
    """
    if not isinstance(name, str):
        raise ValueError(f"A display name must be text, not the {type(name).__name__} {name!r}.")
    trimmed = " ".join(name.split())
    if len(trimmed) > MAX_DISPLAY_NAME:
        raise ValueError(
            f"A display name may have at most {MAX_DISPLAY_NAME} characters, but this one has {len(trimmed)}."
        )
    if any(not ch.isprintable() for ch in trimmed):
        raise ValueError(f"The display name {trimmed!r} contains control characters; use letters and spaces.")
    return trimmed or None


def name_key(name: str) -> str:
    """How two names are compared: case and spacing do not make them different.

    Examples
    --------
    >>> name_key("  Ada   LOVELACE ") == name_key("ada lovelace")
    True
    """
    return " ".join(name.split()).casefold()


def name_taken(conn: Connection, learner_id: str, name: str) -> bool:
    """Whether another learner who could be confused with ``learner_id`` already has ``name``.

    The learners compared are every other learner with an account (a roster's or an LMS's) on this
    server; the one place that says who a learner's classmates are, for names.
    """
    key = name_key(name)
    names = conn.execute(
        select(_LEARNERS.c.display_name).where(
            _LEARNERS.c.external_id.is_not(None),
            _LEARNERS.c.id != learner_id,
            _LEARNERS.c.display_name.is_not(None),
        )
    ).scalars()
    return any(name_key(other) == key for other in names)


def name_taken_sentence(name: str) -> str:
    """The refusal a learner reads when their chosen name is another learner's.

    Examples
    --------
    >>> name_taken_sentence("Ada")[:42]
    "The name 'Ada' is taken by another learner"
    """
    return (
        f"The name {name!r} is taken by another learner of this class; choose another one "
        "(add an initial or a second name)."
    )


class Learners:
    """The learners with saved work and their display names.

    Parameters
    ----------
    database : Database
        The database to use.

    Examples
    --------
    >>> database = Database("sqlite://")
    >>> learners = Learners(database)
    >>> learners.set_display_name("c" * 36, " Ada  Lovelace ")
    'Ada Lovelace'
    >>> learners.display_name("c" * 36)
    'Ada Lovelace'
    >>> database.close()
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def active_since(self, moment: datetime) -> int:
        """How many learners saved work at or after ``moment`` (their last-seen time).

        Examples
        --------
        >>> from datetime import datetime, timedelta
        >>> learners = Learners(Database("sqlite://"))
        >>> learners.active_since(datetime(2026, 1, 1))
        0
        """
        with self.database.read() as conn:
            found = conn.execute(select(func.count()).where(_LEARNERS.c.last_seen_at >= moment))
            return int(found.scalar_one())

    def has_saved_work(self, learner_id: str) -> bool:
        """Whether the learner has saved anything: an answer, a program, a draft, a name, a variant, a seed.

        Examples
        --------
        >>> learners = Learners(Database("sqlite://"))
        >>> learners.has_saved_work("c" * 36)
        False
        >>> _ = learners.set_display_name("c" * 36, "Ada"); learners.has_saved_work("c" * 36)
        True
        >>> learners.database.close()
        """
        with self.database.read() as conn:
            found = conn.execute(select(_LEARNERS.c.id).where(_LEARNERS.c.id == learner_id)).first()
        return found is not None

    def display_name(self, learner_id: str) -> str | None:
        """The learner's display name, or None (also for a learner with no saved work).

        Examples
        --------
        >>> learners = Learners(Database("sqlite://"))
        >>> learners.display_name("c" * 36) is None
        True
        >>> learners.database.close()
        """
        with self.database.read() as conn:
            name: str | None = conn.execute(
                select(_LEARNERS.c.display_name).where(_LEARNERS.c.id == learner_id)
            ).scalar()
        return name

    def name_taken(self, learner_id: str, name: str) -> bool:
        """Whether ``name`` is taken by another learner with an account (case and spacing ignored).

        Examples
        --------
        >>> from qkv.store.learner.accounts import Accounts
        >>> database = Database("sqlite://")
        >>> ada = Accounts(database).find_or_create(None, "s-1", "Ada Lovelace")
        >>> learners = Learners(database)
        >>> learners.name_taken("c" * 36, " ada  lovelace"), learners.name_taken(ada, "Ada Lovelace")
        (True, False)
        >>> learners.name_taken("c" * 36, "Grace")
        False
        >>> database.close()
        """
        with self.database.read() as conn:
            return name_taken(conn, learner_id, name)

    def set_display_name(self, learner_id: str, name: str | None) -> str | None:
        """Save a display name (checked with ``clean_display_name``) and return it as stored.

        Parameters
        ----------
        learner_id : str
            The learner.
        name : str or None
            The name; None or an empty string clears it.

        Returns
        -------
        str or None
            The name as stored.

        Raises
        ------
        ValueError
            If ``clean_display_name`` refuses the name, or another learner with an account has it
            (``name_taken``).

        Examples
        --------
        >>> learners = Learners(Database("sqlite://"))
        >>> learners.set_display_name("c" * 36, "") is None
        True
        >>> learners.set_display_name("c" * 36, "x" * 81)
        Traceback (most recent call last):
        ...
        ValueError: A display name may have at most 80 characters, but this one has 81.
        >>> learners.database.close()
        """
        cleaned = clean_display_name(name if name is not None else "")
        with self.database.write() as conn:
            if cleaned is not None and name_taken(conn, learner_id, cleaned):
                raise ValueError(name_taken_sentence(cleaned))
            self.database.ensure_learner(conn, learner_id)
            conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == learner_id).values(display_name=cleaned))
        return cleaned


__all__ = [
    "MAX_DISPLAY_NAME",
    "Learners",
    "clean_display_name",
    "name_key",
    "name_taken",
    "name_taken_sentence",
]
