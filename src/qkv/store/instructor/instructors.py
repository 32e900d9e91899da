"""Instructors and what they read: accounts, one-time sign-in links, sessions, and the class's work.

Everything lives in the database, never in a server's memory, so any number of servers sharing one
database accept the same sign-in links and sessions, and signing out ends a session everywhere.
Tokens and session ids are random (256 bits) and stored only as their SHA-256: a copy of the
database lets nobody sign in.

    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> desk = store.instructors  # or InstructorDesk(store.database)
    >>> instructor, token = desk.add("Grace")
    >>> session = desk.redeem(token)
    >>> desk.instructor_for_session(session).name
    'Grace'
    >>> desk.redeem(token) is None  # a link works once
    True
    >>> store.close()
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.one_time_tokens import SessionTable, SignInTokens, digest
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import (
    Answer,
    CodeSubmission,
    CourseStaff,
    HelpShown,
    Instructor,
    InstructorSession,
    InstructorSignInToken,
    LearnerRow,
)
from qkv.store.work.program_texts import programs

_INSTRUCTORS: Table = Instructor.__table__  # type: ignore[assignment]
_TOKENS: Table = InstructorSignInToken.__table__  # type: ignore[assignment]
_SESSIONS: Table = InstructorSession.__table__  # type: ignore[assignment]
_STAFF: Table = CourseStaff.__table__  # type: ignore[assignment]
_LINKS = SignInTokens(_TOKENS, "instructor_id")  # the one-time-token code learners' links share
_OPEN_SESSIONS = SessionTable(_SESSIONS, "instructor_id")
_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_CODE: Table = CodeSubmission.__table__  # type: ignore[assignment]
_HELP: Table = HelpShown.__table__  # type: ignore[assignment]

SIGN_IN_LINK_LIFETIME = timedelta(hours=24)
SESSION_LIFETIME = timedelta(hours=12)
MAX_INSTRUCTOR_NAME = 80


@dataclass(frozen=True)
class InstructorRecord:
    """An instructor account."""

    id: str
    name: str
    created_at: datetime
    all_courses: bool = False  # an administrator: every course of the server


@dataclass(frozen=True)
class LearnerRecord:
    """A learner as the class view lists them."""

    id: str
    display_name: str | None
    created_at: datetime
    last_seen_at: datetime | None
    external_id: str | None = None  # the account's id in the school's records or its LMS (None: anonymous)


@dataclass(frozen=True)
class AnswerEvent:
    """One saved answer of any learner, with the named mistake it matched (None: none or not recorded)."""

    id: int
    learner_id: str
    lesson_id: str
    exercise_id: str
    answer: str
    correct: bool
    message: str
    counted_as_attempt: bool
    mistake: str | None
    variant_seed: int | None
    created_at: datetime


@dataclass(frozen=True)
class CodeEvent:
    """One saved program of any learner, with the grader's result document."""

    id: int
    learner_id: str
    lesson_id: str
    exercise_id: str
    source: str
    status: str
    passed: int
    total: int
    result: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class HelpEvent:
    """Help a learner was shown, the first time: hint ``hint`` (from 1) of a code exercise, or its reference
    solution (``hint`` 0)."""

    id: int
    learner_id: str
    lesson_id: str
    exercise_id: str
    hint: int
    created_at: datetime

    @property
    def what(self) -> str:
        """In words: ``hint 2`` or ``solution shown``.

        Examples
        --------
        >>> HelpEvent(1, "a", "L9.1", "c", 2, datetime(2024, 1, 2)).what
        'hint 2'
        """
        return f"hint {self.hint}" if self.hint else "solution shown"


def help_event(row: Any) -> HelpEvent:
    """A ``help_shown`` row as a :class:`HelpEvent`."""
    return HelpEvent(int(row.id), row.learner_id, row.lesson_id, row.exercise_id, int(row.hint), row.shown_at)


def clean_instructor_name(name: object) -> str:
    """A trimmed instructor name of 1 to 80 printable characters; ValueError with a sentence otherwise.

    Examples
    --------
    >>> clean_instructor_name("  Grace  Hopper ")
    'Grace Hopper'
    """
    if not isinstance(name, str):
        raise ValueError(f"An instructor name must be text, not the {type(name).__name__} {name!r}.")
    trimmed = " ".join(check_storable(name, "The instructor name").split())
    if not trimmed:
        raise ValueError("An instructor name cannot be empty.")
    if len(trimmed) > MAX_INSTRUCTOR_NAME:
        raise ValueError(
            f"An instructor name may have at most {MAX_INSTRUCTOR_NAME} characters, "
            f"but this one has {len(trimmed)}."
        )
    if any(not ch.isprintable() for ch in trimmed):
        raise ValueError(f"The instructor name {trimmed!r} contains control characters.")
    return trimmed


class InstructorDesk:
    """Instructor accounts, sign-in links and sessions, and read access to every learner's work.

    Parameters
    ----------
    database : Database
        The database to use.
    scope : LearnerScope
        The learners whose work it reads: every learner by default, or one course's (``within``).

    Examples
    --------
    >>> desk = InstructorDesk(Database("sqlite://"))
    >>> [instructor.name for instructor in desk.all()]
    []
    >>> desk.database.close()
    """

    def __init__(self, database: Database, scope: LearnerScope = EVERYONE) -> None:
        self.database = database
        self.scope = scope

    def within(self, scope: LearnerScope) -> InstructorDesk:
        """The same desk, reading the work of the learners of ``scope`` only.

        Examples
        --------
        >>> from qkv.store.instructor.courses import LearnerScope
        >>> from qkv.store.learner.learners import Learners
        >>> database = Database("sqlite://")
        >>> _ = Learners(database).set_display_name("a" * 36, "Ada")
        >>> desk = InstructorDesk(database)
        >>> len(desk.learners()), desk.within(LearnerScope("c1")).learners()
        (1, [])
        >>> database.close()
        """
        return InstructorDesk(self.database, scope)

    # -- accounts --------------------------------------------------------------------------------

    def add(self, name: str) -> tuple[InstructorRecord, str]:
        """Create an instructor; return it and a one-time sign-in token (valid 24 hours).

        Raises
        ------
        ValueError
            If the name is not acceptable or an instructor with that name exists.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> instructor, token = desk.add(" Grace ")
        >>> instructor.name, len(token)
        ('Grace', 43)
        >>> desk.add("Grace")
        Traceback (most recent call last):
        ...
        ValueError: An instructor named 'Grace' already exists; use 'qkv instructor link' for a new ...
        >>> desk.database.close()
        """
        cleaned = clean_instructor_name(name)
        record = InstructorRecord(str(uuid.uuid4()), cleaned, utc_now())
        try:
            with self.database.write() as conn:
                conn.execute(
                    insert(_INSTRUCTORS).values(id=record.id, name=record.name, created_at=record.created_at)
                )
        except IntegrityError:
            raise ValueError(
                f"An instructor named {cleaned!r} already exists; "
                "use 'qkv instructor link' for a new sign-in link."
            ) from None
        return record, self.new_sign_in_token(cleaned)

    def for_lms_person(self, issuer: str, subject: str, name: str) -> InstructorRecord:
        """The instructor account of an LMS person (``iss`` and ``sub``), made on their first launch.

        The account is found by the LMS's identity, never by name: two LMS users with the same name get
        two accounts (the second named "NAME 2"). Its name follows the LMS's when that name is free.

        Raises
        ------
        ValueError
            If the name cannot be used at all.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> grace = desk.for_lms_person("https://lms", "7", "Grace (lms)")
        >>> other = desk.for_lms_person("https://lms", "8", "Grace (lms)")
        >>> desk.for_lms_person("https://lms", "7", "Grace (lms)").id == grace.id, other.name
        (True, 'Grace (lms) 2')
        >>> desk.database.close()
        """
        cleaned = clean_instructor_name(name)
        person = (_INSTRUCTORS.c.issuer == issuer, _INSTRUCTORS.c.external_id == subject)
        for attempt in range(1, 50):
            with self.database.read() as conn:
                row = conn.execute(select(_INSTRUCTORS).where(*person)).first()
            if row is not None:
                return InstructorRecord(row.id, row.name, row.created_at, bool(row.all_courses))
            suffix = "" if attempt == 1 else f" {attempt}"
            candidate = clean_instructor_name(cleaned[: MAX_INSTRUCTOR_NAME - len(suffix)] + suffix)
            try:
                with self.database.write() as conn:
                    conn.execute(
                        insert(_INSTRUCTORS).values(
                            id=str(uuid.uuid4()),
                            name=candidate,
                            created_at=utc_now(),
                            issuer=issuer,
                            external_id=subject,
                        )
                    )
            except IntegrityError:
                continue  # the name is taken (or another server made this person's account just now)
        raise ValueError(f"No free instructor name was found for {cleaned!r}.")

    def open_session(self, instructor_id: str, lifetime: timedelta = SESSION_LIFETIME) -> str:
        """A new session for the instructor (an LMS launch signs them in without a link).

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> grace = desk.for_lms_person("https://lms", "7", "Grace")
        >>> desk.instructor_for_session(desk.open_session(grace.id)).name
        'Grace'
        >>> desk.database.close()
        """
        with self.database.write() as conn:
            return _OPEN_SESSIONS.open(conn, instructor_id, lifetime)

    def find(self, name: str) -> InstructorRecord | None:
        """The instructor with this name, or None.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _ = desk.add("Grace")
        >>> desk.find("Grace").name, desk.find("Ada")
        ('Grace', None)
        >>> desk.database.close()
        """
        with self.database.read() as conn:
            row = conn.execute(
                select(_INSTRUCTORS).where(_INSTRUCTORS.c.name == " ".join(name.split()))
            ).first()
        return InstructorRecord(row.id, row.name, row.created_at, bool(row.all_courses)) if row else None

    def all(self) -> list[InstructorRecord]:
        """Every instructor, by name.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _ = desk.add("Grace"), desk.add("Ada")
        >>> [instructor.name for instructor in desk.all()]
        ['Ada', 'Grace']
        >>> desk.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_INSTRUCTORS).order_by(_INSTRUCTORS.c.name)).all()
        return [InstructorRecord(row.id, row.name, row.created_at, bool(row.all_courses)) for row in rows]

    def remove(self, name: str) -> bool:
        """Delete an instructor with their links and sessions (signed out everywhere); False if unknown.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _, token = desk.add("Grace")
        >>> session = desk.redeem(token)
        >>> desk.remove("Grace"), desk.remove("Grace"), desk.instructor_for_session(session)
        (True, False, None)
        >>> desk.database.close()
        """
        found = self.find(name)
        if found is None:
            return False
        with self.database.write() as conn:
            conn.execute(delete(_STAFF).where(_STAFF.c.instructor_id == found.id))
            conn.execute(delete(_SESSIONS).where(_SESSIONS.c.instructor_id == found.id))
            conn.execute(delete(_TOKENS).where(_TOKENS.c.instructor_id == found.id))
            conn.execute(delete(_INSTRUCTORS).where(_INSTRUCTORS.c.id == found.id))
        return True

    # -- sign-in links and sessions ------------------------------------------------------------------

    def new_sign_in_token(self, name: str, lifetime: timedelta = SIGN_IN_LINK_LIFETIME) -> str:
        """A fresh one-time sign-in token for the named instructor; ValueError if there is none.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _ = desk.add("Grace")
        >>> desk.redeem(desk.new_sign_in_token("Grace")) is not None
        True
        >>> desk.new_sign_in_token("Ada")
        Traceback (most recent call last):
        ...
        ValueError: There is no instructor named 'Ada'; create one with 'qkv instructor add'.
        >>> desk.database.close()
        """
        found = self.find(name)
        if found is None:
            raise ValueError(f"There is no instructor named {name!r}; create one with 'qkv instructor add'.")
        with self.database.write() as conn:
            return _LINKS.issue(conn, found.id, lifetime)

    def redeem(self, token: str, lifetime: timedelta = SESSION_LIFETIME) -> str | None:
        """Use up a sign-in token and open a session; the session id, or None for a used, expired or
        unknown token. The token is marked used by one conditional UPDATE, so of two servers
        redeeming it at once exactly one succeeds.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _, token = desk.add("Grace")
        >>> desk.redeem(token) is not None, desk.redeem(token), desk.redeem("made-up")
        (True, None, None)
        >>> desk.database.close()
        """
        with self.database.write() as conn:
            instructor_id = _LINKS.redeem(conn, token)
            return None if instructor_id is None else _OPEN_SESSIONS.open(conn, instructor_id, lifetime)

    def instructor_for_session(self, session: str | None) -> InstructorRecord | None:
        """The instructor of a live session, or None (unknown, ended or expired).

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _, token = desk.add("Grace")
        >>> desk.instructor_for_session(desk.redeem(token)).name, desk.instructor_for_session(None)
        ('Grace', None)
        >>> desk.database.close()
        """
        if not session:
            return None
        with self.database.read() as conn:
            row = conn.execute(
                select(_INSTRUCTORS)
                .join(_SESSIONS, _SESSIONS.c.instructor_id == _INSTRUCTORS.c.id)
                .where(_SESSIONS.c.session_hash == digest(session), _SESSIONS.c.expires_at > utc_now())
            ).first()
        return InstructorRecord(row.id, row.name, row.created_at, bool(row.all_courses)) if row else None

    def end_session(self, session: str) -> None:
        """Sign out: the session stops working on every server.

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> _, token = desk.add("Grace")
        >>> session = desk.redeem(token)
        >>> desk.end_session(session)
        >>> desk.instructor_for_session(session) is None
        True
        >>> desk.database.close()
        """
        with self.database.write() as conn:
            _OPEN_SESSIONS.end(conn, session)

    def session_course(self, session: str) -> str | None:
        """The course this session chose with the course picker (None: not chosen yet).

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> session = desk.redeem(desk.add("Grace")[1])
        >>> desk.choose_course(session, "c1")
        >>> desk.session_course(session)
        'c1'
        >>> desk.database.close()
        """
        with self.database.read() as conn:
            found = conn.execute(
                select(_SESSIONS.c.course_id).where(_SESSIONS.c.session_hash == digest(session))
            ).scalar()
        return str(found) if found else None

    def choose_course(self, session: str, course_id: str | None) -> None:
        """Remember the course this session looks at (the caller checked the instructor may see it).

        Examples
        --------
        >>> desk = InstructorDesk(Database("sqlite://"))
        >>> session = desk.redeem(desk.add("Grace")[1])
        >>> desk.choose_course(session, None)
        >>> desk.session_course(session) is None
        True
        >>> desk.database.close()
        """
        with self.database.write() as conn:
            conn.execute(
                update(_SESSIONS)
                .where(_SESSIONS.c.session_hash == digest(session))
                .values(course_id=course_id)
            )

    # -- the class's work ------------------------------------------------------------------------

    def learners(self) -> list[LearnerRecord]:
        """Every learner with saved work, the most recently seen first.

        Examples
        --------
        >>> from qkv.store.learner.learners import Learners
        >>> database = Database("sqlite://")
        >>> _ = Learners(database).set_display_name("a" * 36, "Ada")
        >>> [learner.display_name for learner in InstructorDesk(database).learners()]
        ['Ada']
        >>> database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_LEARNERS).where(self.scope.admits(_LEARNERS.c.id))).all()
        records = [
            LearnerRecord(r.id, r.display_name, r.created_at, r.last_seen_at, r.external_id) for r in rows
        ]
        return sorted(records, key=lambda r: (r.last_seen_at or r.created_at, r.id), reverse=True)

    def learner(self, learner_id: str) -> LearnerRecord | None:
        """One learner of the scope, or None (unknown, or another course's).

        Examples
        --------
        >>> InstructorDesk(Database("sqlite://")).learner("a" * 36) is None
        True
        """
        with self.database.read() as conn:
            r = conn.execute(
                select(_LEARNERS).where(_LEARNERS.c.id == learner_id, self.scope.admits(_LEARNERS.c.id))
            ).first()
        return LearnerRecord(r.id, r.display_name, r.created_at, r.last_seen_at, r.external_id) if r else None

    def answer_events(self, learner_id: str | None = None, lesson_id: str | None = None) -> list[AnswerEvent]:
        """Every saved answer (of one learner and one lesson, if given), oldest first.

        Examples
        --------
        >>> from qkv.store.work.client_budgets import ClientBudgets
        >>> from qkv.store.work.progress import Progress
        >>> database = Database("sqlite://")
        >>> progress = Progress(database, ClientBudgets(database))
        >>> _ = progress.record_answer("a" * 36, "L9.1", "q", "11", correct=False, message="No.", mistake="x")
        >>> [(event.answer, event.mistake) for event in InstructorDesk(database).answer_events("a" * 36)]
        [('11', 'x')]
        >>> database.close()
        """
        query = select(_ANSWERS).where(self.scope.admits(_ANSWERS.c.learner_id)).order_by(_ANSWERS.c.id)
        if learner_id is not None:
            query = query.where(_ANSWERS.c.learner_id == learner_id)
        if lesson_id is not None:
            query = query.where(_ANSWERS.c.lesson_id == lesson_id)
        with self.database.read() as conn:
            rows = conn.execute(query).all()
        return [
            AnswerEvent(
                id=int(r.id),
                learner_id=r.learner_id,
                lesson_id=r.lesson_id,
                exercise_id=r.exercise_id,
                answer=r.answer,
                correct=bool(r.correct),
                message=r.message,
                counted_as_attempt=bool(r.counted_as_attempt),
                mistake=r.mistake,
                variant_seed=r.variant_seed,
                created_at=r.created_at,
            )
            for r in rows
        ]

    def code_events(self, learner_id: str | None = None, lesson_id: str | None = None) -> list[CodeEvent]:
        """Every saved program (of one learner and one lesson, if given), oldest first, with its results.

        Examples
        --------
        >>> from qkv.store.work.client_budgets import ClientBudgets
        >>> from qkv.store.work.code_work import CodeWork
        >>> database = Database("sqlite://")
        >>> code = CodeWork(database, ClientBudgets(database))
        >>> _ = code.record("a" * 36, "L9.1", "f", "x = 1", {"status": "pass"})
        >>> [(event.source, event.status) for event in InstructorDesk(database).code_events()]
        [('x = 1', 'pass')]
        >>> database.close()
        """
        query = programs().where(self.scope.admits(_CODE.c.learner_id)).order_by(_CODE.c.id)
        if learner_id is not None:
            query = query.where(_CODE.c.learner_id == learner_id)
        if lesson_id is not None:
            query = query.where(_CODE.c.lesson_id == lesson_id)
        with self.database.read() as conn:
            rows = conn.execute(query).all()
        events = []
        for r in rows:
            try:
                result = json.loads(r.result_json)
            except ValueError:
                result = {}
            events.append(
                CodeEvent(
                    id=int(r.id),
                    learner_id=r.learner_id,
                    lesson_id=r.lesson_id,
                    exercise_id=r.exercise_id,
                    source=r.source,
                    status=r.status,
                    passed=int(r.passed),
                    total=int(r.total),
                    result=result if isinstance(result, dict) else {},
                    created_at=r.created_at,
                )
            )
        return events

    def help_events(self, learner_id: str | None = None, lesson_id: str | None = None) -> list[HelpEvent]:
        """Every hint and reference solution shown (to one learner, on one lesson, if given), oldest first.

        Examples
        --------
        >>> from qkv.store.work.client_budgets import ClientBudgets
        >>> from qkv.store.work.code_work import CodeWork
        >>> database = Database("sqlite://")
        >>> code = CodeWork(database, ClientBudgets(database))
        >>> _ = code.record("a" * 36, "L9.1", "f", "x = 1", {"status": "fail"})
        >>> _ = code.help_shown("a" * 36, "L9.1", "f", 1)
        >>> code.solution_shown("a" * 36, "L9.1", "f")
        >>> [event.what for event in InstructorDesk(database).help_events()]
        ['hint 1', 'solution shown']
        >>> database.close()
        """
        query = select(_HELP).where(self.scope.admits(_HELP.c.learner_id)).order_by(_HELP.c.id)
        if learner_id is not None:
            query = query.where(_HELP.c.learner_id == learner_id)
        if lesson_id is not None:
            query = query.where(_HELP.c.lesson_id == lesson_id)
        with self.database.read() as conn:
            return [help_event(row) for row in conn.execute(query)]


__all__ = [
    "AnswerEvent",
    "CodeEvent",
    "HelpEvent",
    "InstructorDesk",
    "InstructorRecord",
    "LearnerRecord",
    "clean_instructor_name",
]
