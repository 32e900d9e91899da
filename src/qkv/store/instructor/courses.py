"""Courses: the classes one server holds, their learners and their staff, and what an instructor may see.

A person's progress is one per person (a learner's answers and programs are not kept per course); a
course is a view over its learners, and the LMS link that receives their scores. A learner belongs to
the courses they launch from or are imported into; an instructor has a role (instructor or teaching
assistant) in some courses, or every course when they are an administrator (``all_courses``).

    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> course = store.courses.create("Attention 101")
    >>> store.courses.enrol(course.id, "a" * 36, MembershipSource.ROSTER)
    >>> store.courses.is_member(course.id, "a" * 36), store.courses.is_member(course.id, "b" * 36)
    (True, False)
    >>> store.close()
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, select, true, update

from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import Course, CourseLearner, CourseStaff, Instructor, LearnerLinkRecord, LearnerRow

_COURSES: Table = Course.__table__  # type: ignore[assignment]
_MEMBERS: Table = CourseLearner.__table__  # type: ignore[assignment]
_STAFF: Table = CourseStaff.__table__  # type: ignore[assignment]
_INSTRUCTORS: Table = Instructor.__table__  # type: ignore[assignment]
_LINK_RECORDS: Table = LearnerLinkRecord.__table__  # type: ignore[assignment]
_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
MAX_COURSE_TITLE = 255


class CourseOrigin(enum.Enum):
    """Where a course came from."""

    LTI = "lti"  # an LMS context (platform issuer + deployment + context id)
    MANUAL = "manual"  # ``qkv courses create``
    MIGRATED = "migrated"  # the one class of a database written before courses


class MembershipSource(enum.Enum):
    """How a learner came into a course."""

    LTI = "lti"  # launched from it, or pulled with its LMS roster
    ROSTER = "roster"  # ``qkv learners import ROSTER.csv --course ID``
    MIGRATED = "migrated"


class StaffRole(enum.Enum):
    """An instructor's role in a course (what each may do: docs/instructor.md)."""

    INSTRUCTOR = "instructor"
    TEACHING_ASSISTANT = "teaching_assistant"


@dataclass(frozen=True)
class CourseRecord:
    """A course."""

    id: str
    title: str
    origin: CourseOrigin
    issuer: str | None
    deployment_id: str | None
    context_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class InstructorAccess:
    """What one instructor has: every course (an administrator), or a role in each of some courses."""

    all_courses: bool
    roles: dict[str, StaffRole] = field(default_factory=dict)

    def role_in(self, course_id: str) -> StaffRole | None:
        """The instructor's role in the course (an administrator is its instructor), or None.

        Examples
        --------
        >>> InstructorAccess(False, {"c1": StaffRole.TEACHING_ASSISTANT}).role_in("c1").value
        'teaching_assistant'
        >>> InstructorAccess(True).role_in("c2"), InstructorAccess(False).role_in("c2")
        (<StaffRole.INSTRUCTOR: 'instructor'>, None)
        """
        if self.all_courses:
            return StaffRole.INSTRUCTOR
        return self.roles.get(course_id)


@dataclass(frozen=True)
class LearnerScope:
    """Which learners a view reads: one course's members, or every learner of the server (None).

    Examples
    --------
    >>> EVERYONE.course_id is None, LearnerScope("c1").course_id
    (True, 'c1')
    """

    course_id: str | None = None

    def admits(self, learner_id: Any) -> ColumnElement[bool]:
        """A condition on a learner-id column: true for the scope's learners only."""
        if self.course_id is None:
            return true()
        members = select(_MEMBERS.c.learner_id).where(_MEMBERS.c.course_id == self.course_id)
        return learner_id.in_(members)  # type: ignore[no-any-return]


EVERYONE = LearnerScope()


@dataclass(frozen=True)
class LinkRecord:
    """A sign-in link an instructor made for a learner."""

    instructor_name: str
    course_id: str | None
    created_at: datetime


def clean_course_title(title: object) -> str:
    """A trimmed course title of 1 to 255 printable characters; ValueError with a sentence otherwise.

    Examples
    --------
    >>> clean_course_title("  Attention   101 ")
    'Attention 101'
    >>> clean_course_title(" ")
    Traceback (most recent call last):
    ...
    ValueError: A course title cannot be empty.
    """
    if not isinstance(title, str):
        raise ValueError(f"A course title must be text, not the {type(title).__name__} {title!r}.")
    trimmed = " ".join(check_storable(title, "The course title").split())
    if not trimmed:
        raise ValueError("A course title cannot be empty.")
    if len(trimmed) > MAX_COURSE_TITLE:
        raise ValueError(
            f"A course title may have at most {MAX_COURSE_TITLE} characters, but this one has {len(trimmed)}."
        )
    if any(not ch.isprintable() for ch in trimmed):
        raise ValueError(f"The course title {trimmed!r} contains control characters.")
    return trimmed


def _record(row: Any) -> CourseRecord:
    return CourseRecord(
        row.id,
        row.title,
        CourseOrigin(row.origin),
        row.issuer,
        row.deployment_id,
        row.context_id,
        row.created_at,
    )


class Courses:
    """The server's courses, their learners and staff, and each instructor's access.

    Parameters
    ----------
    database : Database
        The database the servers share.

    Examples
    --------
    >>> courses = Courses(Database("sqlite://"))
    >>> courses.any()
    False
    >>> courses.database.close()
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    # -- courses -----------------------------------------------------------------------------------

    def create(self, title: str) -> CourseRecord:
        """Make a course by hand (``qkv courses create``); ValueError for an unusable title.

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> courses.create(" Attention 101 ").title, courses.create("Attention 101").origin.value
        ('Attention 101', 'manual')
        >>> courses.database.close()
        """
        record = CourseRecord(
            str(uuid.uuid4()), clean_course_title(title), CourseOrigin.MANUAL, None, None, None, utc_now()
        )
        with self.database.write() as conn:
            conn.execute(
                _COURSES.insert().values(
                    id=record.id, title=record.title, origin=record.origin.value, created_at=record.created_at
                )
            )
        return record

    def for_lti_context(self, issuer: str, deployment_id: str, context_id: str, title: str) -> CourseRecord:
        """The course of an LMS context, made on its first launch; its title follows the latest launch.

        Two servers launching the same new context at once make one course (the unique key decides).

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> first = courses.for_lti_context("https://lms", "d1", "ctx", "Attention")
        >>> again = courses.for_lti_context("https://lms", "d1", "ctx", "Attention (2027)")
        >>> other = courses.for_lti_context("https://lms", "d2", "ctx", "A")
        >>> first.id == again.id, again.title, other.id == first.id
        (True, 'Attention (2027)', False)
        >>> courses.database.close()
        """
        cleaned = clean_course_title(title[:MAX_COURSE_TITLE] or context_id)
        key = (
            _COURSES.c.issuer == issuer,
            _COURSES.c.deployment_id == deployment_id,
            _COURSES.c.context_id == context_id,
        )
        row = {
            "id": str(uuid.uuid4()),
            "title": cleaned,
            "origin": CourseOrigin.LTI.value,
            "issuer": issuer,
            "deployment_id": deployment_id,
            "context_id": context_id,
            "created_at": utc_now(),
        }
        with self.database.write() as conn:
            self.database.insert_ignore(conn, _COURSES, row, ["issuer", "deployment_id", "context_id"])
            conn.execute(update(_COURSES).where(*key, _COURSES.c.title != cleaned).values(title=cleaned))
            return _record(conn.execute(select(_COURSES).where(*key)).one())

    def get(self, course_id: str) -> CourseRecord | None:
        """One course, or None.

        Examples
        --------
        >>> Courses(Database("sqlite://")).get("nope") is None
        True
        """
        with self.database.read() as conn:
            row = conn.execute(select(_COURSES).where(_COURSES.c.id == course_id)).first()
        return _record(row) if row else None

    def all(self) -> list[CourseRecord]:
        """Every course, by title.

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> _ = courses.create("B"), courses.create("A")
        >>> [course.title for course in courses.all()]
        ['A', 'B']
        >>> courses.database.close()
        """
        with self.database.read() as conn:
            rows = conn.execute(select(_COURSES).order_by(_COURSES.c.title, _COURSES.c.id)).all()
        return [_record(row) for row in rows]

    def any(self) -> bool:
        """Whether the server has a course at all (with none, it works as one class, as before courses).

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> before = courses.any()
        >>> _ = courses.create("A")
        >>> before, courses.any()
        (False, True)
        >>> courses.database.close()
        """
        with self.database.read() as conn:
            return conn.execute(select(_COURSES.c.id).limit(1)).first() is not None

    # -- learners ----------------------------------------------------------------------------------

    def enrol(self, course_id: str, learner_id: str, source: MembershipSource) -> None:
        """Make the learner a member of the course (again: nothing changes).

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> course = courses.create("A")
        >>> courses.enrol(course.id, "a" * 36, MembershipSource.LTI)
        >>> courses.enrol(course.id, "a" * 36, MembershipSource.ROSTER)
        >>> courses.member_count(course.id)
        1
        >>> courses.database.close()
        """
        row = {
            "course_id": course_id,
            "learner_id": learner_id,
            "source": source.value,
            "joined_at": utc_now(),
        }
        with self.database.write() as conn:
            # A learner row of its own if need be (the roster and the launch made it already).
            self.database.insert_ignore(conn, _LEARNERS, {"id": learner_id, "created_at": utc_now()}, ["id"])
            self.database.insert_ignore(conn, _MEMBERS, row, ["course_id", "learner_id"])

    def is_member(self, course_id: str, learner_id: str) -> bool:
        """Whether the learner belongs to the course.

        Examples
        --------
        >>> Courses(Database("sqlite://")).is_member("c1", "a" * 36)
        False
        """
        with self.database.read() as conn:
            found = conn.execute(
                select(_MEMBERS.c.learner_id).where(
                    _MEMBERS.c.course_id == course_id, _MEMBERS.c.learner_id == learner_id
                )
            ).first()
        return found is not None

    def courses_of(self, learner_id: str) -> list[str]:
        """The ids of the courses the learner belongs to.

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> course = courses.create("A")
        >>> courses.enrol(course.id, "a" * 36, MembershipSource.ROSTER)
        >>> courses.courses_of("a" * 36) == [course.id], courses.courses_of("b" * 36)
        (True, [])
        >>> courses.database.close()
        """
        with self.database.read() as conn:
            return list(
                conn.execute(
                    select(_MEMBERS.c.course_id).where(_MEMBERS.c.learner_id == learner_id)
                ).scalars()
            )

    def member_count(self, course_id: str) -> int:
        """How many learners the course has.

        Examples
        --------
        >>> Courses(Database("sqlite://")).member_count("c1")
        0
        """
        with self.database.read() as conn:
            return len(
                conn.execute(select(_MEMBERS.c.learner_id).where(_MEMBERS.c.course_id == course_id)).all()
            )

    # -- staff -------------------------------------------------------------------------------------

    def set_staff(self, course_id: str, instructor_id: str, role: StaffRole) -> None:
        """Give the instructor ``role`` in the course (replacing the role they had there).

        Raises
        ------
        ValueError
            If there is no such course.

        Examples
        --------
        >>> Courses(Database("sqlite://")).set_staff("c9", "i" * 36, StaffRole.INSTRUCTOR)
        Traceback (most recent call last):
        ...
        ValueError: There is no course with the id 'c9'; 'qkv courses list' lists them.
        """
        if self.get(course_id) is None:
            raise ValueError(f"There is no course with the id {course_id!r}; 'qkv courses list' lists them.")
        row = {
            "course_id": course_id,
            "instructor_id": instructor_id,
            "role": role.value,
            "added_at": utc_now(),
        }
        with self.database.write() as conn:
            self.database.insert_ignore(conn, _STAFF, row, ["course_id", "instructor_id"])
            conn.execute(
                update(_STAFF)
                .where(_STAFF.c.course_id == course_id, _STAFF.c.instructor_id == instructor_id)
                .values(role=role.value)
            )

    def grant_all_courses(self, instructor_id: str) -> None:
        """Make the instructor an administrator: every course of the server, and every learner.

        Examples
        --------
        >>> from qkv.store.instructor.instructors import InstructorDesk
        >>> database = Database("sqlite://")
        >>> grace = InstructorDesk(database).add("Grace")[0]
        >>> Courses(database).grant_all_courses(grace.id)
        >>> Courses(database).access(grace.id).all_courses
        True
        >>> database.close()
        """
        with self.database.write() as conn:
            conn.execute(
                update(_INSTRUCTORS).where(_INSTRUCTORS.c.id == instructor_id).values(all_courses=True)
            )

    def access(self, instructor_id: str) -> InstructorAccess:
        """What the instructor has.

        Examples
        --------
        >>> from qkv.store.instructor.instructors import InstructorDesk
        >>> database = Database("sqlite://")
        >>> courses, desk = Courses(database), InstructorDesk(database)
        >>> grace = desk.add("Grace")[0]
        >>> course = courses.create("Attention 101")
        >>> courses.set_staff(course.id, grace.id, StaffRole.TEACHING_ASSISTANT)
        >>> courses.access(grace.id).role_in(course.id).value
        'teaching_assistant'
        >>> database.close()
        """
        with self.database.read() as conn:
            admin = conn.execute(
                select(_INSTRUCTORS.c.all_courses).where(_INSTRUCTORS.c.id == instructor_id)
            ).scalar()
            rows = conn.execute(
                select(_STAFF.c.course_id, _STAFF.c.role).where(_STAFF.c.instructor_id == instructor_id)
            ).all()
        return InstructorAccess(bool(admin), {row.course_id: StaffRole(row.role) for row in rows})

    # -- who acted for a learner -------------------------------------------------------------------

    def record_link(
        self, learner_id: str, instructor_id: str, instructor_name: str, course_id: str | None
    ) -> None:
        """Record that an instructor made a sign-in link for the learner.

        Examples
        --------
        >>> courses = Courses(Database("sqlite://"))
        >>> courses.record_link("a" * 36, "i" * 36, "Grace", "c1")
        >>> [(r.instructor_name, r.course_id) for r in courses.link_records("a" * 36)]
        [('Grace', 'c1')]
        >>> courses.database.close()
        """
        with self.database.write() as conn:
            conn.execute(
                _LINK_RECORDS.insert().values(
                    learner_id=learner_id,
                    instructor_id=instructor_id,
                    instructor_name=instructor_name[:80],
                    course_id=course_id,
                    created_at=utc_now(),
                )
            )

    def link_records(self, learner_id: str) -> list[LinkRecord]:
        """Every sign-in link instructors made for the learner, the newest first.

        Examples
        --------
        >>> Courses(Database("sqlite://")).link_records("a" * 36)
        []
        """
        with self.database.read() as conn:
            rows = conn.execute(
                select(_LINK_RECORDS)
                .where(_LINK_RECORDS.c.learner_id == learner_id)
                .order_by(_LINK_RECORDS.c.id.desc())
            ).all()
        return [LinkRecord(row.instructor_name, row.course_id, row.created_at) for row in rows]


__all__ = [
    "EVERYONE",
    "CourseOrigin",
    "CourseRecord",
    "Courses",
    "InstructorAccess",
    "LearnerScope",
    "LinkRecord",
    "MembershipSource",
    "StaffRole",
    "clean_course_title",
]
