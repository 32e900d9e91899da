"""A course's dates: each lesson's due date, its optional hard close, what late work earns, and extensions.

An instructor sets a lesson's due date in a course (``qkv courses due``, or the dates page of the
instructor's view); work saved after it is late and counts at the lesson's late credit (1: in full, a
fraction, 0: nothing); work saved after the close, if there is one, is practice and earns nothing. An
extension moves one learner's due date of one lesson, and moves their close by as much.

Times are kept in UTC without a zone (as every column of the store); a course's time zone (an IANA name,
none: the server's) is how the instructor's input is read and how the dates are shown.

    >>> from qkv.store.sql.database import Database
    >>> dates = DueDates(Database("sqlite://"))
    >>> due = datetime(2026, 12, 24, 17, 0)
    >>> dates.set_due("c1", "L1.1", due, close_at=due + timedelta(days=2), late_credit=0.5)
    >>> dates.in_force("c1", "a" * 36, "L1.1").credit_at(due + timedelta(hours=1))
    0.5
    >>> dates.extend("c1", "a" * 36, "L1.1", due + timedelta(days=1))
    >>> dates.in_force("c1", "a" * 36, "L1.1").credit_at(due + timedelta(hours=1))
    1.0
    >>> dates.database.close()
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import Table, delete, select, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import CourseTimeZone, DueDateExtension, LessonDueDate

_DUE: Table = LessonDueDate.__table__  # type: ignore[assignment]
_ZONES: Table = CourseTimeZone.__table__  # type: ignore[assignment]
_EXTENSIONS: Table = DueDateExtension.__table__  # type: ignore[assignment]
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_EXTENSION_DAYS = 366


class Standing(enum.Enum):
    """Where a moment stands against a lesson's dates."""

    ON_TIME = "on time"
    LATE = "late"
    CLOSED = "closed"


@dataclass(frozen=True)
class DueDate:
    """A lesson's dates in a course (UTC)."""

    course_id: str
    lesson_id: str
    due_at: datetime
    close_at: datetime | None
    late_credit: float
    set_at: datetime


@dataclass(frozen=True)
class Extension:
    """One learner's later due date for one lesson of a course (UTC)."""

    course_id: str
    learner_id: str
    lesson_id: str
    until_at: datetime
    granted_at: datetime


@dataclass(frozen=True)
class DatesInForce:
    """The dates that hold for one learner and one lesson: the course's, or their extension's.

    Examples
    --------
    >>> due = datetime(2026, 1, 10)
    >>> dates = DatesInForce("L1.1", due, due + timedelta(days=1), 0.5, extended=False)
    >>> [dates.standing_at(due + timedelta(hours=h)).value for h in (-1, 1, 25)]
    ['on time', 'late', 'closed']
    >>> [dates.credit_at(due + timedelta(hours=h)) for h in (-1, 1, 25)]
    [1.0, 0.5, 0.0]
    """

    lesson_id: str
    due_at: datetime
    close_at: datetime | None
    late_credit: float
    extended: bool

    def standing_at(self, at: datetime) -> Standing:
        """On time (up to and at the due date), late (after it), or closed (at or after the close)."""
        if self.close_at is not None and at >= self.close_at:
            return Standing.CLOSED
        return Standing.LATE if at > self.due_at else Standing.ON_TIME

    def credit_at(self, at: datetime) -> float:
        """What work saved at ``at`` earns: 1 on time, the late credit when late, 0 once closed."""
        standing = self.standing_at(at)
        if standing is Standing.ON_TIME:
            return 1.0
        return self.late_credit if standing is Standing.LATE else 0.0


def zone_named(name: str | None) -> tzinfo:
    """The time zone of an IANA name; None: the server's own; ValueError with a sentence for an unknown one.

    Examples
    --------
    >>> str(zone_named("Europe/Paris"))
    'Europe/Paris'
    >>> zone_named("Mars/Olympus")
    Traceback (most recent call last):
    ...
    ValueError: 'Mars/Olympus' is not a time zone qkv knows; give an IANA name such as 'Europe/Paris'.
    """
    if name is None:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    try:
        if not re.fullmatch(r"[A-Za-z0-9_+\-/]{1,64}", name):
            raise ZoneInfoNotFoundError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{name[:64]!r} is not a time zone qkv knows; give an IANA name such as 'Europe/Paris'."
        ) from None


def parse_when(text: str, zone: tzinfo) -> datetime:
    """A moment the instructor wrote, as naive UTC: ``YYYY-MM-DD HH:MM`` in ``zone``, an ISO 8601 time with
    its own offset, or a bare date (its end, 23:59, in ``zone``); ValueError with a sentence otherwise.

    Examples
    --------
    >>> parse_when("2026-12-24 17:00", ZoneInfo("Europe/Paris"))
    datetime.datetime(2026, 12, 24, 16, 0)
    >>> parse_when("2026-12-24", UTC), parse_when("2026-12-24T17:00+02:00", UTC)
    (datetime.datetime(2026, 12, 24, 23, 59), datetime.datetime(2026, 12, 24, 15, 0))
    >>> try:
    ...     parse_when("next friday", UTC)
    ... except ValueError as error:
    ...     print(str(error)[:45])
    'next friday' is not a date and time qkv can
    """
    cleaned = text.strip()
    if _DATE_ONLY.match(cleaned):
        cleaned += " 23:59"
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(
            f"{text[:64]!r} is not a date and time qkv can read; write it as YYYY-MM-DD HH:MM (for example "
            "2026-12-24 17:00), in the course's time zone."
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    return moment.astimezone(UTC).replace(tzinfo=None)


def local_text(moment: datetime | None, zone: tzinfo) -> str:
    """A stored UTC moment as a course shows it: ``YYYY-MM-DD HH:MM`` and the zone's abbreviation.

    Examples
    --------
    >>> local_text(datetime(2026, 12, 24, 16, 0), ZoneInfo("Europe/Paris")), local_text(None, UTC)
    ('2026-12-24 17:00 CET', 'never')
    """
    if moment is None:
        return "never"
    return moment.replace(tzinfo=UTC).astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def check_late_credit(value: float) -> float:
    """A late credit between 0 and 1; ValueError with a sentence naming the value otherwise.

    Examples
    --------
    >>> check_late_credit(0.5)
    0.5
    >>> check_late_credit(1.5)
    Traceback (most recent call last):
    ...
    ValueError: The late credit must be a fraction from 0 (late work earns nothing) to 1 (in full), not 1.5.
    """
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise ValueError(
            f"The late credit must be a fraction from 0 (late work earns nothing) to 1 (in full), "
            f"not {value}."
        )
    return float(value)


def _due(row: Any) -> DueDate:
    return DueDate(row.course_id, row.lesson_id, row.due_at, row.close_at, row.late_credit, row.set_at)


def _extension(row: Any) -> Extension:
    return Extension(row.course_id, row.learner_id, row.lesson_id, row.until_at, row.granted_at)


class DueDates:
    """The courses' due dates, closes, late credits, time zones and extensions.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def set_due(
        self,
        course_id: str,
        lesson_id: str,
        due_at: datetime,
        close_at: datetime | None = None,
        late_credit: float = 1.0,
    ) -> None:
        """Set (or replace) a lesson's dates in a course; ValueError when the close is before the due date.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 2), close_at=datetime(2026, 1, 1))
        Traceback (most recent call last):
        ...
        ValueError: The close (2026-01-01 00:00 UTC) must not come before the due date (2026-01-02 00:00 UTC).
        >>> dates.database.close()
        """
        credit = check_late_credit(late_credit)
        if close_at is not None and close_at < due_at:
            raise ValueError(
                f"The close ({close_at:%Y-%m-%d %H:%M} UTC) must not come before the due date "
                f"({due_at:%Y-%m-%d %H:%M} UTC)."
            )
        row = {
            "due_at": due_at,
            "close_at": close_at,
            "late_credit": credit,
            "set_at": utc_now(),
            "lms_end_at": None,  # the instructor's dates: an LMS's later end date never replaces them
        }
        keys = {"course_id": course_id, "lesson_id": lesson_id}
        with self.database.write() as conn:
            if not self.database.insert_ignore(conn, _DUE, {**keys, **row}, list(keys)):
                conn.execute(
                    update(_DUE)
                    .where(_DUE.c.course_id == course_id, _DUE.c.lesson_id == lesson_id)
                    .values(row)
                )

    def follow_lms(self, course_id: str, lesson_id: str, ends_at: datetime) -> bool:
        """Make the LMS's end date of a lesson its due date in the course, unless the instructor set one.

        The first end date an LMS sends becomes the due date (full late credit, no close); a later,
        different one replaces a due date that came from the LMS, never one the instructor set (with
        :meth:`set_due`). Returns whether the due date changed.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.follow_lms("c1", "L1.1", datetime(2026, 1, 2))
        True
        >>> dates.follow_lms("c1", "L1.1", datetime(2026, 1, 9)), dates.due("c1", "L1.1").due_at.day
        (True, 9)
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 5))
        >>> dates.follow_lms("c1", "L1.1", datetime(2026, 1, 12)), dates.due("c1", "L1.1").due_at.day
        (False, 5)
        >>> dates.database.close()
        """
        keys = {"course_id": course_id, "lesson_id": lesson_id}
        row = {"due_at": ends_at, "lms_end_at": ends_at, "set_at": utc_now()}
        with self.database.write() as conn:
            if self.database.insert_ignore(
                conn, _DUE, {**keys, **row, "close_at": None, "late_credit": 1.0}, list(keys)
            ):
                return True
            moved = conn.execute(
                update(_DUE)
                .where(
                    _DUE.c.course_id == course_id,
                    _DUE.c.lesson_id == lesson_id,
                    _DUE.c.lms_end_at.is_not(None),
                    _DUE.c.lms_end_at != ends_at,
                )
                .values(row)
            )
            return bool(moved.rowcount)

    def clear_due(self, course_id: str, lesson_id: str) -> bool:
        """Take a lesson's dates away (and its extensions); whether it had any.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 2))
        >>> dates.clear_due("c1", "L1.1"), dates.clear_due("c1", "L1.1")
        (True, False)
        >>> dates.database.close()
        """
        with self.database.write() as conn:
            conn.execute(
                delete(_EXTENSIONS).where(
                    _EXTENSIONS.c.course_id == course_id, _EXTENSIONS.c.lesson_id == lesson_id
                )
            )
            gone = conn.execute(
                delete(_DUE).where(_DUE.c.course_id == course_id, _DUE.c.lesson_id == lesson_id)
            )
        return bool(gone.rowcount)

    def due(self, course_id: str, lesson_id: str) -> DueDate | None:
        """The lesson's dates in the course, or None.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 2), late_credit=0)
        >>> dates.due("c1", "L1.1").late_credit, dates.due("c2", "L1.1")
        (0.0, None)
        >>> dates.database.close()
        """
        with self.database.read() as conn:
            row = conn.execute(
                select(_DUE).where(_DUE.c.course_id == course_id, _DUE.c.lesson_id == lesson_id)
            ).first()
        return None if row is None else _due(row)

    def for_course(self, course_id: str) -> list[DueDate]:
        """The course's lesson dates, soonest first.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L2.1", datetime(2026, 1, 1))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 2, 1))
        >>> [d.lesson_id for d in dates.for_course("c1")]
        ['L2.1', 'L1.1']
        >>> dates.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(
                select(_DUE).where(_DUE.c.course_id == course_id).order_by(_DUE.c.due_at, _DUE.c.lesson_id)
            ).all()
        return [_due(row) for row in rows]

    def for_lesson(self, lesson_id: str) -> list[DueDate]:
        """Every course's dates of one lesson.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c2", "L1.1", datetime(2026, 1, 1))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 2, 1))
        >>> [d.course_id for d in dates.for_lesson("L1.1")]
        ['c1', 'c2']
        >>> dates.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(
                select(_DUE).where(_DUE.c.lesson_id == lesson_id).order_by(_DUE.c.course_id)
            ).all()
        return [_due(row) for row in rows]

    # -- time zones --------------------------------------------------------------------------------

    def set_time_zone(self, course_id: str, name: str) -> None:
        """Show the course's dates in the zone ``name`` (checked: ValueError for an unknown one).

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_time_zone("c1", "Asia/Tokyo"), dates.set_time_zone("c1", "Europe/Paris")
        (None, None)
        >>> dates.time_zone_name("c1"), str(dates.time_zone("c1"))
        ('Europe/Paris', 'Europe/Paris')
        >>> dates.database.close()
        """
        zone_named(name)
        with self.database.write() as conn:
            row = {"course_id": course_id, "time_zone": name}
            if not self.database.insert_ignore(conn, _ZONES, row, ["course_id"]):
                conn.execute(update(_ZONES).where(_ZONES.c.course_id == course_id).values(time_zone=name))

    def time_zone_name(self, course_id: str) -> str | None:
        """The course's time zone name, or None (the server's).

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.time_zone_name("c1") is None
        True
        >>> dates.database.close()
        """
        with self.database.read() as conn:
            found = conn.execute(select(_ZONES.c.time_zone).where(_ZONES.c.course_id == course_id)).scalar()
        return None if found is None else str(found)

    def time_zone(self, course_id: str) -> tzinfo:
        """The zone the course's dates are read and shown in.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.time_zone("c1") is not None
        True
        >>> dates.database.close()
        """
        return zone_named(self.time_zone_name(course_id))

    # -- extensions --------------------------------------------------------------------------------

    def extend(self, course_id: str, learner_id: str, lesson_id: str, until_at: datetime) -> None:
        """Move one learner's due date of a lesson to ``until_at`` (and their close by as much).

        ValueError with a sentence when the lesson has no due date in the course, or ``until_at`` is not
        after it.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> try:
        ...     dates.extend("c1", "a" * 36, "L1.1", datetime(2026, 1, 3))
        ... except ValueError as error:
        ...     print(str(error)[:40])
        The lesson 'L1.1' has no due date in thi
        >>> dates.database.close()
        """
        due = self.due(course_id, lesson_id)
        if due is None:
            raise ValueError(
                f"The lesson {lesson_id!r} has no due date in this course, so there is nothing to extend; "
                "set one first with 'qkv courses due'."
            )
        if until_at <= due.due_at:
            raise ValueError(
                f"An extension must end after the due date ({due.due_at:%Y-%m-%d %H:%M} UTC), but "
                f"{until_at:%Y-%m-%d %H:%M} UTC does not."
            )
        keys = {"course_id": course_id, "learner_id": learner_id, "lesson_id": lesson_id}
        row = {"until_at": until_at, "granted_at": utc_now()}
        with self.database.write() as conn:
            if not self.database.insert_ignore(conn, _EXTENSIONS, {**keys, **row}, list(keys)):
                conn.execute(
                    update(_EXTENSIONS)
                    .where(*(_EXTENSIONS.c[name] == value for name, value in keys.items()))
                    .values(row)
                )

    def unextend(self, course_id: str, learner_id: str, lesson_id: str) -> bool:
        """Revoke an extension; whether there was one.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 2))
        >>> dates.extend("c1", "a" * 36, "L1.1", datetime(2026, 1, 3))
        >>> dates.unextend("c1", "a" * 36, "L1.1"), dates.unextend("c1", "a" * 36, "L1.1")
        (True, False)
        >>> dates.database.close()
        """
        with self.database.write() as conn:
            gone = conn.execute(
                delete(_EXTENSIONS).where(
                    _EXTENSIONS.c.course_id == course_id,
                    _EXTENSIONS.c.learner_id == learner_id,
                    _EXTENSIONS.c.lesson_id == lesson_id,
                )
            )
        return bool(gone.rowcount)

    def extensions(self, course_id: str, learner_id: str | None = None) -> list[Extension]:
        """The course's extensions (one learner's, when ``learner_id`` is given), by lesson then learner.

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.set_due("c1", "L1.1", datetime(2026, 1, 2))
        >>> dates.extend("c1", "a" * 36, "L1.1", datetime(2026, 1, 3))
        >>> [e.until_at.day for e in dates.extensions("c1")], dates.extensions("c1", "b" * 36)
        ([3], [])
        >>> dates.database.close()
        """
        query = select(_EXTENSIONS).where(_EXTENSIONS.c.course_id == course_id)
        if learner_id is not None:
            query = query.where(_EXTENSIONS.c.learner_id == learner_id)
        with self.database.read() as conn:
            rows = conn.execute(query.order_by(_EXTENSIONS.c.lesson_id, _EXTENSIONS.c.learner_id)).all()
        return [_extension(row) for row in rows]

    # -- what holds for a learner ------------------------------------------------------------------

    def in_force(self, course_id: str, learner_id: str, lesson_id: str) -> DatesInForce | None:
        """The dates that hold for the learner on the lesson in the course (None: the lesson has none).

        Examples
        --------
        >>> dates = DueDates(Database("sqlite://"))
        >>> dates.in_force("c1", "a" * 36, "L1.1") is None
        True
        >>> dates.database.close()
        """
        due = self.due(course_id, lesson_id)
        if due is None:
            return None
        extended = [e for e in self.extensions(course_id, learner_id) if e.lesson_id == lesson_id]
        return apply_extension(due, extended[0] if extended else None)


def apply_extension(due: DueDate, extension: Extension | None) -> DatesInForce:
    """The dates a learner has: the course's, or moved by their extension (the close moves as far).

    Examples
    --------
    >>> due = DueDate("c1", "L1.1", datetime(2026, 1, 10), datetime(2026, 1, 12), 0.5, datetime(2026, 1, 1))
    >>> extension = Extension("c1", "a", "L1.1", datetime(2026, 1, 13), datetime(2026, 1, 1))
    >>> moved = apply_extension(due, extension)
    >>> moved.due_at.day, moved.close_at.day, moved.extended
    (13, 15, True)
    """
    if extension is None or extension.until_at <= due.due_at:
        return DatesInForce(due.lesson_id, due.due_at, due.close_at, due.late_credit, extended=False)
    shift = extension.until_at - due.due_at
    close = None if due.close_at is None else due.close_at + shift
    return DatesInForce(due.lesson_id, extension.until_at, close, due.late_credit, extended=True)


def extension_until(due_at: datetime, *, until: datetime | None, days: int | None) -> datetime:
    """An extension's end: ``until``, or ``days`` after the due date; ValueError with a sentence otherwise.

    Examples
    --------
    >>> extension_until(datetime(2026, 1, 10), until=None, days=3)
    datetime.datetime(2026, 1, 13, 0, 0)
    >>> extension_until(datetime(2026, 1, 10), until=None, days=0)
    Traceback (most recent call last):
    ...
    ValueError: An extension is from 1 to 366 days, not 0.
    """
    if (until is None) == (days is None):
        raise ValueError(
            "Give the extension's end with --until WHEN or its length with --days N (one of them)."
        )
    if days is not None:
        if not 1 <= days <= MAX_EXTENSION_DAYS:
            raise ValueError(f"An extension is from 1 to {MAX_EXTENSION_DAYS} days, not {days}.")
        return due_at + timedelta(days=days)
    assert until is not None
    return until


__all__ = [
    "DatesInForce",
    "DueDate",
    "DueDates",
    "Extension",
    "Standing",
    "apply_extension",
    "check_late_credit",
    "extension_until",
    "local_text",
    "parse_when",
    "zone_named",
]
