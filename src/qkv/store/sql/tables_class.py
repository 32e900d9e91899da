"""A course's tables, as SQLAlchemy ORM classes on :class:`~qkv.store.sql.tables.Base`: the course, its
learners and staff, the mistake groups' learners, notes, notes shown and the learners' marks, due dates,
time zone and extensions, and the verdicts a regrade changed. :mod:`qkv.store.sql.tables` re-exports
them; like it, these describe the schema after every migration.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from qkv.store.sql.tables import Base

__all__ = [
    "Course",
    "CourseLearner",
    "CourseStaff",
    "CourseTimeZone",
    "DueDateExtension",
    "LessonDueDate",
    "MessageFeedback",
    "MistakeGroupLearner",
    "MistakeNote",
    "MistakeNoteShown",
    "RegradeChange",
]


class Course(Base):
    """A class on this server (added with courses): an LMS context, made by hand, or the migrated one.

    An LMS course is keyed by its platform's issuer, the deployment and the LMS's context id (unique);
    a course made by ``qkv courses create`` or by the migration has them NULL.
    """

    __tablename__ = "courses"
    __table_args__ = (Index("ux_courses_lti_context", "issuer", "deployment_id", "context_id", unique=True),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    title: Mapped[str] = mapped_column(String(255), nullable=False)
    origin: Mapped[str] = mapped_column(String(16), nullable=False)  # a CourseOrigin value
    issuer: Mapped[str | None] = mapped_column(String(255))
    deployment_id: Mapped[str | None] = mapped_column(String(255))
    context_id: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class CourseLearner(Base):
    """A learner's membership of a course (added with courses): from a launch, a roster, or the migration."""

    __tablename__ = "course_learners"
    __table_args__ = (Index("ix_course_learners_learner", "learner_id"),)

    course_id: Mapped[str] = mapped_column(String(36), ForeignKey("courses.id"), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    source: Mapped[str] = mapped_column(String(16), nullable=False)  # a MembershipSource value
    joined_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class CourseStaff(Base):
    """An instructor's role in a course (added with courses): instructor or teaching assistant."""

    __tablename__ = "course_staff"
    __table_args__ = (Index("ix_course_staff_instructor", "instructor_id"),)

    course_id: Mapped[str] = mapped_column(String(36), ForeignKey("courses.id"), primary_key=True)
    instructor_id: Mapped[str] = mapped_column(String(36), ForeignKey("instructors.id"), primary_key=True)
    role: Mapped[str] = mapped_column(String(24), nullable=False)  # a StaffRole value
    added_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class MistakeGroupLearner(Base):
    """One learner in one group of mistakes: how many of their programs, and when (added with a class's
    mistakes). The groups are read from these rows, one per learner and group, not from every program."""

    __tablename__ = "mistake_group_learners"
    __table_args__ = (
        Index("ix_mistake_group_learners_learner", "learner_id"),
        Index("ix_mistake_group_learners_first", "group_key", "first_id"),
    )

    group_key: Mapped[str] = mapped_column(String(16), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    programs: Mapped[int] = mapped_column(Integer, nullable=False)
    first_seen: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    first_id: Mapped[int] = mapped_column(Integer, nullable=False)  # the learner's first program's row


class MistakeNote(Base):
    """An instructor's sentence for a group of mistakes in one course (added with a class's mistakes).

    ``course_key`` is the course's id, or '' for the view of every learner of the server (its notes reach
    the learners in no course). ``state`` is ``named`` (learners get it) or ``proposed`` (a teaching
    assistant's proposal, which an instructor names).
    """

    __tablename__ = "mistake_notes"

    course_key: Mapped[str] = mapped_column(String(36), primary_key=True)
    group_key: Mapped[str] = mapped_column(String(16), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    function: Mapped[str] = mapped_column(String(64), nullable=False)
    signature: Mapped[str] = mapped_column(String(32), nullable=False)
    sentence: Mapped[str] = mapped_column(Text, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    named_by: Mapped[str] = mapped_column(String(255), nullable=False)
    named_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class MistakeNoteShown(Base):
    """An instructor's note shown to a learner with a result (added with a class's mistakes)."""

    __tablename__ = "mistake_notes_shown"
    __table_args__ = (Index("ix_mistake_notes_shown_learner", "learner_id", "group_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    course_key: Mapped[str] = mapped_column(String(36), nullable=False)
    group_key: Mapped[str] = mapped_column(String(16), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    function: Mapped[str] = mapped_column(String(64), nullable=False)
    sentence: Mapped[str] = mapped_column(Text, nullable=False)
    shown_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class MessageFeedback(Base):
    """A learner's "Did this help?" on one message of a result (added with a class's mistakes).

    One per learner and message (``message_key``, a digest of the message's text); ``kind`` is what made
    the message: ``lesson`` (a catalogued hint), ``relation``, ``mutant``, ``note`` (an instructor's note),
    ``answer`` (a hand-answer's message) or ``plain`` (the comparison alone).
    """

    __tablename__ = "message_feedback"
    __table_args__ = (
        Index("ux_message_feedback_once", "learner_id", "message_key", unique=True),
        Index("ix_message_feedback_lesson", "lesson_id", "exercise_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    message_key: Mapped[str] = mapped_column(String(32), nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    group_key: Mapped[str | None] = mapped_column(String(16))
    helpful: Mapped[bool] = mapped_column(Boolean, nullable=False)
    line: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added by the migration that stores a mark with its program: the program (``code_submissions.id``) or
    # the hand answer (``answers.id``) the marked message was given on; NULL for marks saved before, or
    # where the learner had none. No foreign key: a program pruned later leaves the number behind.
    submission_id: Mapped[int | None] = mapped_column(Integer)
    answer_id: Mapped[int | None] = mapped_column(Integer)


class LessonDueDate(Base):
    """A lesson's due date in a course, its optional hard close, and what late work earns (issue 46)."""

    __tablename__ = "lesson_due_dates"

    course_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    due_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)  # UTC
    close_at: Mapped[datetime | None] = mapped_column(DateTime)  # UTC; None: never closes
    late_credit: Mapped[float] = mapped_column(Float, nullable=False)  # 0..1
    set_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # The LMS's end date qkv last copied into due_at; None when the instructor set the dates in qkv.
    lms_end_at: Mapped[datetime | None] = mapped_column(DateTime)


class CourseTimeZone(Base):
    """The time zone a course's dates are shown in (an IANA name); none: the server's (issue 46)."""

    __tablename__ = "course_time_zones"

    course_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    time_zone: Mapped[str] = mapped_column(String(64), nullable=False)


class DueDateExtension(Base):
    """One learner's extension of one lesson's due date in a course: the new due date, in UTC (issue 46)."""

    __tablename__ = "due_date_extensions"

    course_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    until_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    granted_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class RegradeChange(Base):
    """A verdict a regrade changed (``qkv regrade``): pass to fail, fail to pass, or another first message."""

    __tablename__ = "regrade_changes"
    __table_args__ = (Index("ix_regrade_changes_lesson", "lesson_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[int] = mapped_column(Integer, nullable=False)
    learner_id: Mapped[str] = mapped_column(String(36), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    before_status: Mapped[str] = mapped_column(String(16), nullable=False)
    after_status: Mapped[str] = mapped_column(String(16), nullable=False)
    before_message: Mapped[str] = mapped_column(Text, nullable=False)
    after_message: Mapped[str] = mapped_column(Text, nullable=False)
    suite_version: Mapped[str] = mapped_column(String(16), nullable=False)
    regraded_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
