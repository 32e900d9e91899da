"""The store's migration steps from 17 on (:data:`qkv.store.sql.migrations.MIGRATIONS` lists them in
order), each a function of an open transaction. A released step is never edited; a change to the schema is
a new step appended here and at the end of ``MIGRATIONS``.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    text,
)

from qkv.store.sql.migration_steps import _add_column

__all__ = [
    "class_mistakes_and_notes",
    "due_dates_and_extensions",
    "due_dates_from_the_lms",
    "grading_jobs_sent_at",
    "help_shown",
    "lti_line_item_refusals",
    "lti_registration_attempts",
    "message_feedback_on_its_program",
    "suite_versions_and_regrades",
]


def lti_registration_attempts(conn: Connection) -> None:
    """A Dynamic Registration link's attempts: how many failed (the link is spent after a few), and until
    when one in progress holds it (one attempt at a time per link, across servers).

    Self-contained and additive: two columns of ``lti_registration_links`` (links made before start with
    no failure and no attempt in progress).
    """
    _add_column(
        conn, "lti_registration_links", Column("failures", Integer, nullable=False, server_default=text("0"))
    )
    _add_column(conn, "lti_registration_links", Column("busy_until", DateTime))


def lti_line_item_refusals(conn: Connection) -> None:
    """A line item that is another lesson's column (an LMS that puts several links on one line item): the
    sentence that says why no score goes there, with which each of its scores is parked.

    Self-contained and additive: one nullable column of ``lti_line_items`` (rows saved before: none).
    """
    _add_column(conn, "lti_line_items", Column("refusal", String(2000)))


def help_shown(conn: Connection) -> None:
    """Every bit of help a learner was shown: each hint of a code exercise (``hint`` from 1) and the reference
    solution (``hint`` 0), the first time each was shown; and, in the totals, how many hints were shown and
    how many before the first solve (a solve after hints is marked in the gradebook, the exports and the LMS).

    Self-contained and additive: one new table, two nullable columns of ``exercise_totals`` (rows saved
    before read as "no hint shown").
    """
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # only for the foreign key
    Table(
        "help_shown",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("hint", Integer, nullable=False),
        Column("shown_at", DateTime, nullable=False),
        Index("ux_help_shown_once", "learner_id", "lesson_id", "exercise_id", "hint", unique=True),
    )
    meta.tables["help_shown"].create(conn)
    _add_column(conn, "exercise_totals", Column("hints_shown", Integer))
    _add_column(conn, "exercise_totals", Column("hints_before_solve", Integer))


def class_mistakes_and_notes(conn: Connection) -> None:
    """A class's mistakes grouped by behaviour: each failing function's signature per program (and per
    learner and group, what the groups are read from), the instructors' notes per course and group, the
    notes shown to learners, and the learners' "Did this help?" per message.

    Self-contained and additive: five new tables, no other table changes.
    """
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # exists: only the key's target
    Table(
        "mistake_signatures",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("function", String(64), nullable=False),
        Column("signature", String(32), nullable=False),
        Column("group_key", String(16), nullable=False),
        Column("message", Text, nullable=False),
        Column("source", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
        Index("ix_mistake_signatures_group", "group_key", "id"),
        Index("ix_mistake_signatures_learner", "learner_id"),
    )
    Table(
        "mistake_group_learners",
        meta,
        Column("group_key", String(16), primary_key=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
        Column("lesson_id", String(32), nullable=False),
        Column("programs", Integer, nullable=False),
        Column("first_seen", DateTime, nullable=False),
        Column("first_id", Integer, nullable=False),
        Index("ix_mistake_group_learners_learner", "learner_id"),
        Index("ix_mistake_group_learners_first", "group_key", "first_id"),
    )
    Table(
        "mistake_notes",
        meta,
        Column("course_key", String(36), primary_key=True),
        Column("group_key", String(16), primary_key=True),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("function", String(64), nullable=False),
        Column("signature", String(32), nullable=False),
        Column("sentence", Text, nullable=False),
        Column("state", String(16), nullable=False),
        Column("named_by", String(255), nullable=False),
        Column("named_at", DateTime, nullable=False),
    )
    _class_notes_shown_and_feedback(meta)
    meta.create_all(conn)


def _class_notes_shown_and_feedback(meta: MetaData) -> None:
    """The two tables of :func:`class_mistakes_and_notes` that record what learners saw and said."""
    Table(
        "mistake_notes_shown",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("course_key", String(36), nullable=False),
        Column("group_key", String(16), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("function", String(64), nullable=False),
        Column("sentence", Text, nullable=False),
        Column("shown_at", DateTime, nullable=False),
        Index("ix_mistake_notes_shown_learner", "learner_id", "group_key"),
    )
    Table(
        "message_feedback",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("message_key", String(32), nullable=False),
        Column("kind", String(16), nullable=False),
        Column("group_key", String(16)),
        Column("helpful", Boolean, nullable=False),
        Column("line", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
        Index("ux_message_feedback_once", "learner_id", "message_key", unique=True),
        Index("ix_message_feedback_lesson", "lesson_id", "exercise_id"),
    )


def due_dates_and_extensions(conn: Connection) -> None:
    """A course's dates (issue 46): each lesson's due date, hard close and late credit, the course's time
    zone, and a learner's extension of one lesson's due date (``qkv courses due | extend``).

    Self-contained: three new tables, no other table changes.
    """
    meta = MetaData()
    Table(
        "lesson_due_dates",
        meta,
        Column("course_id", String(36), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("due_at", DateTime, nullable=False),
        Column("close_at", DateTime),
        Column("late_credit", Float, nullable=False),
        Column("set_at", DateTime, nullable=False),
    )
    Table(
        "course_time_zones",
        meta,
        Column("course_id", String(36), primary_key=True),
        Column("time_zone", String(64), nullable=False),
    )
    Table(
        "due_date_extensions",
        meta,
        Column("course_id", String(36), primary_key=True),
        Column("learner_id", String(36), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("until_at", DateTime, nullable=False),
        Column("granted_at", DateTime, nullable=False),
    )
    meta.create_all(conn)


def suite_versions_and_regrades(conn: Connection) -> None:
    """Regrading (issue 46): the version of the exercise's suite each program was graded with (a content hash
    of the lesson's grading data), and each verdict a regrade changed.

    Self-contained: a nullable column of ``code_submissions`` (programs saved before have no version: "an
    older one") and one new table.
    """
    _add_column(conn, "code_submissions", Column("suite_version", String(16)))
    meta = MetaData()
    Table(
        "regrade_changes",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("submission_id", Integer, nullable=False),
        Column("learner_id", String(36), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("before_status", String(16), nullable=False),
        Column("after_status", String(16), nullable=False),
        Column("before_message", Text, nullable=False),
        Column("after_message", Text, nullable=False),
        Column("suite_version", String(16), nullable=False),
        Column("regraded_at", DateTime, nullable=False),
        Index("ix_regrade_changes_lesson", "lesson_id", "id"),
    )
    meta.create_all(conn)


def grading_jobs_sent_at(conn: Connection) -> None:
    """When a remote grading job's program was sent (issue 46): a newer program that replaces a queued one
    keeps the job's place in line (``created_at``) but its own time, which a due date judges.

    Self-contained: one nullable column of ``grading_jobs`` (jobs queued before have none: their
    ``created_at`` stands for it).
    """
    _add_column(conn, "grading_jobs", Column("sent_at", DateTime))


def message_feedback_on_its_program(conn: Connection) -> None:
    """ "Did this help?" stored with the program (issue 45, item 5): a mark names the program
    (``code_submissions``) or the hand answer (``answers``) whose message it was given on.

    Self-contained and additive: two nullable columns of ``message_feedback`` (marks saved before name
    neither), no foreign key (a program pruned later leaves its mark's number behind), no other change.
    """
    _add_column(conn, "message_feedback", Column("submission_id", Integer))
    _add_column(conn, "message_feedback", Column("answer_id", Integer))


def due_dates_from_the_lms(conn: Connection) -> None:
    """Whose a due date is (issue 46, item 1): the LMS end date qkv copied into it, so that a later change
    of that date in the LMS is followed while an instructor's own date (NULL here) never is.

    Self-contained and additive: one nullable column of ``lesson_due_dates`` (dates kept before count as
    the instructor's).
    """
    _add_column(conn, "lesson_due_dates", Column("lms_end_at", DateTime))
