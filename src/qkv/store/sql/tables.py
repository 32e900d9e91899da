"""The tables of the current schema, as SQLAlchemy 2.0 ORM classes.

These describe the schema *after* every migration in ``qkv.store.sql.migrations`` has run; the
migrations, not these classes, create and alter the tables (a test checks the two agree).
Times are naive UTC datetimes so SQLite and PostgreSQL store them the same way.

The learner's and the work's tables are here with :class:`Base`; a course's tables (members, staff,
mistake notes and marks, due dates, regrades) are :mod:`qkv.store.sql.tables_class` and the LTI 1.3
tables :mod:`qkv.store.sql.tables_lti`. Both are imported at the end of this module and re-exported, so
``Base.metadata`` holds every table once ``tables`` is imported.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "Answer",
    "Base",
    "ClientStorage",
    "CodeDraft",
    "CodeSource",
    "CodeSubmission",
    "Course",
    "CourseLearner",
    "CourseStaff",
    "CourseTimeZone",
    "DueDateExtension",
    "ExerciseTotals",
    "GradingJob",
    "HelpShown",
    "Instructor",
    "InstructorSession",
    "InstructorSignInToken",
    "LearnerLinkRecord",
    "LearnerRow",
    "LearnerSession",
    "LearnerSignInToken",
    "LessonDueDate",
    "LessonState",
    "LtiContext",
    "LtiLineItem",
    "LtiLoginState",
    "LtiPlatform",
    "LtiRegistrationLink",
    "LtiScoreOutbox",
    "LtiToolKey",
    "LtiUsedNonce",
    "MessageFeedback",
    "MistakeGroupLearner",
    "MistakeNote",
    "MistakeNoteShown",
    "MistakeSignature",
    "PrivacyAudit",
    "RegradeChange",
    "SchemaVersion",
    "ServerSecret",
]


class Base(DeclarativeBase):
    """Declarative base of the qkv tables."""


class SchemaVersion(Base):
    """One row: the number of the last migration applied to this database."""

    __tablename__ = "schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)


class LearnerRow(Base):
    """A learner: anonymous (one per browser) or, with an external identity, an account.

    ``issuer`` and ``external_id`` name an account: ``issuer`` is '' for this server's own roster and the
    LTI ``iss`` for an LMS's learners; both are NULL for an anonymous learner.
    """

    __tablename__ = "learners"
    __table_args__ = (Index("ux_learners_account", "issuer", "external_id", unique=True),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    display_name: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime)  # added by migration 2
    # Added by migration 4 for a seed per learner; no longer written or read: every run now draws fresh
    # inputs and its results document records its own seed. Kept so that existing databases match.
    grading_seed: Mapped[int | None] = mapped_column(Integer)
    # Added with learner accounts: the account's external identity and email (NULL: anonymous).
    issuer: Mapped[str | None] = mapped_column(String(255))
    external_id: Mapped[str | None] = mapped_column(String(255))
    email: Mapped[str | None] = mapped_column(String(255))


class Answer(Base):
    """Every answer a learner submitted to a numeric, letter or choice exercise, right or wrong."""

    __tablename__ = "answers"
    __table_args__ = (
        Index("ix_answers_learner_lesson", "learner_id", "lesson_id"),
        # Added by migration 10: a learner's latest answer to one exercise, found in one index step.
        Index("ix_answers_learner_exercise", "learner_id", "lesson_id", "exercise_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    variant_seed: Mapped[int | None] = mapped_column(Integer)
    answer: Mapped[str] = mapped_column(Text, nullable=False)
    correct: Mapped[bool] = mapped_column(Boolean, nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)
    # Added by migration 2: a badly formatted answer is saved but does not cost an attempt.
    counted_as_attempt: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added by migration 5: the key of the named mistake the answer matched (NULL: none, or saved before).
    mistake: Mapped[str | None] = mapped_column(String(64))


class CodeSubmission(Base):
    """Every program a learner sent to the grader, with the grader's full result document."""

    __tablename__ = "code_submissions"
    __table_args__ = (
        Index("ix_code_submissions_learner_lesson", "learner_id", "lesson_id"),
        # Added by migration 10: a learner's latest program for one exercise, found in one index step.
        Index("ix_code_submissions_learner_exercise", "learner_id", "lesson_id", "exercise_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    passed: Mapped[int] = mapped_column(Integer, nullable=False)
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    result_json: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added by migration 6: the program's key in code_sources (then ``source`` is empty); NULL for the
    # programs saved before, whose text is in ``source``.
    source_sha256: Mapped[str | None] = mapped_column(String(64))
    # Added by the regrading migration: the version of the suite that gave the verdict (NULL: saved before).
    suite_version: Mapped[str | None] = mapped_column(String(16))


class CodeSource(Base):
    """A learner's program text, stored once however often it is sent (added by migration 6).

    Rows of code_submissions point here by the text's SHA-256; a text no kept submission points at any
    more is deleted with the last one that did.
    """

    __tablename__ = "code_sources"

    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(Text, nullable=False)


class ClientStorage(Base):
    """Bytes each client (an address) stored on each day, UTC (added by migration 6).

    Counted in the database, not in a server, so that several servers on one database share one budget.
    """

    __tablename__ = "client_storage"

    client: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    stored_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)


class CodeDraft(Base):
    """The editor's latest text of a code exercise, saved as the learner types (added by migration 3)."""

    __tablename__ = "code_drafts"

    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    exercise_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class LessonState(Base):
    """Per learner and lesson: which variant of the numbers they are working on (NULL = the page's own)."""

    __tablename__ = "lesson_state"

    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    variant_seed: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class ServerSecret(Base):
    """Secrets the servers share through the database (added by migration 2), e.g. the cookie key.

    Keeping the key here lets several ``qkv serve`` instances on one database accept each other's
    cookies without any configuration.
    """

    __tablename__ = "server_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(128), nullable=False)


class ExerciseTotals(Base):
    """Per learner and exercise, the counts the gradebook shows (added by migration 3).

    They are counted as answers and programs arrive, not derived from the rows, because old rows are pruned:
    only the last few answers and programs (and the best program) of each learner and exercise are kept.
    """

    __tablename__ = "exercise_totals"
    __table_args__ = (  # added by migration 10: the class view's per-exercise counts read the index alone
        Index(
            "ix_exercise_totals_exercise",
            "lesson_id",
            "exercise_id",
            "solved",
            "attempts_to_solve",
            "attempts",
            "submissions",
        ),
    )

    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    exercise_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False)
    submissions: Mapped[int] = mapped_column(Integer, nullable=False)
    solved: Mapped[bool] = mapped_column(Boolean, nullable=False)
    first_solved_at: Mapped[datetime | None] = mapped_column(DateTime)
    last_activity_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    best_passed: Mapped[int | None] = mapped_column(Integer)
    best_total: Mapped[int | None] = mapped_column(Integer)
    failed_runs: Mapped[int] = mapped_column(Integer, nullable=False)  # programs that did not pass
    # Added by migration 10 for the class view: when work on the exercise began, and the counted attempts up
    # to and including the first right one (both NULL for rows saved before).
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    attempts_to_solve: Mapped[int | None] = mapped_column(Integer)
    # Added by the solutions-shown migration: when the reference solution was first shown to the learner,
    # and whether the first solve came after that (NULL for rows saved before: never shown, not after).
    solution_shown_at: Mapped[datetime | None] = mapped_column(DateTime)
    solved_after_solution: Mapped[bool | None] = mapped_column(Boolean)
    # Added by the help-shown migration: the hints shown so far, and those shown before the first solve
    # (NULL for rows saved before: none).
    hints_shown: Mapped[int | None] = mapped_column(Integer)
    hints_before_solve: Mapped[int | None] = mapped_column(Integer)


class Instructor(Base):
    """Someone who may see the whole class (added by migration 5); created by ``qkv instructor add``."""

    __tablename__ = "instructors"
    __table_args__ = (Index("ux_instructors_lms_person", "issuer", "external_id", unique=True),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(80), nullable=False, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added with courses: an administrator, who has every course of the server (``--all-courses``).
    all_courses: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # Added with courses: the LMS person behind an instructor made by a launch (NULL: made by hand), so
    # that two LMS users with one name never share an instructor account.
    issuer: Mapped[str | None] = mapped_column(String(255))
    external_id: Mapped[str | None] = mapped_column(String(255))


class InstructorSignInToken(Base):
    """A one-time sign-in link's token, stored only as its SHA-256 (added by migration 5)."""

    __tablename__ = "instructor_sign_in_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    instructor_id: Mapped[str] = mapped_column(String(36), ForeignKey("instructors.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(DateTime)


class InstructorSession(Base):
    """A signed-in instructor's session, stored only as its SHA-256 (added by migration 5).

    Sessions live in the database so that every server sharing it accepts them, and signing out
    (or removing the instructor) ends them everywhere at once.
    """

    __tablename__ = "instructor_sessions"

    session_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    instructor_id: Mapped[str] = mapped_column(String(36), ForeignKey("instructors.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added with courses: the course the session looks at (the picker's choice; NULL: the first one).
    course_id: Mapped[str | None] = mapped_column(String(36))


class LearnerSignInToken(Base):
    """A learner's one-time sign-in link (roster or another device), stored only as its SHA-256.

    Added with learner accounts.
    """

    __tablename__ = "learner_sign_in_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(DateTime)
    # "personal" (the learner's own link: it may bring this browser's anonymous work into the account) or
    # "device" (made on a signed-in device for another: it never does). Added with device links' kind.
    kind: Mapped[str | None] = mapped_column(String(16))


class LearnerSession(Base):
    """A signed-in learner's session, stored only as its SHA-256 (added with learner accounts).

    In the database, like instructor sessions, so every server sharing it accepts the session and signing
    out ends it everywhere.
    """

    __tablename__ = "learner_sessions"
    __table_args__ = (Index("ix_learner_sessions_learner", "learner_id"),)

    session_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class LearnerLinkRecord(Base):
    """Who made a learner's sign-in link from the instructor's view, and when (added with courses).

    Kept apart from the one-time token (which is used up and pruned) so the learner's page can always say
    who acted for them.
    """

    __tablename__ = "learner_link_records"
    __table_args__ = (Index("ix_learner_link_records_learner", "learner_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), nullable=False)
    instructor_id: Mapped[str] = mapped_column(String(36), nullable=False)
    instructor_name: Mapped[str] = mapped_column(String(80), nullable=False)
    course_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class GradingJob(Base):
    """A program for a grader on another machine, and its verdict (added with remote grading).

    ``state`` is one of ``qkv.store.runs.grading_jobs.JobState``'s values. While queued, a newer program of
    the same learner replaces ``source``; a grader that takes the job marks it running, and the first verdict
    written for it is the only one (the learner's progress is counted then, once).
    """

    __tablename__ = "grading_jobs"
    __table_args__ = (
        Index(
            "ux_grading_jobs_one_active_per_learner",
            "learner_id",
            unique=True,
            postgresql_where=text("state IN ('queued', 'running')"),
            sqlite_where=text("state IN ('queued', 'running')"),
        ),
        Index("ix_grading_jobs_state_client", "state", "client"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    client: Mapped[str] = mapped_column(String(64), nullable=False)  # whose turn: the sending address
    storage_client: Mapped[str | None] = mapped_column(String(64))  # whose storage budget pays
    source: Mapped[str] = mapped_column(Text, nullable=False)
    own_work: Mapped[bool] = mapped_column(Boolean, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    priority: Mapped[int] = mapped_column(Integer, nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False)
    worker: Mapped[str | None] = mapped_column(String(128))
    queue_job_id: Mapped[int | None] = mapped_column(BigInteger)
    result_json: Mapped[str | None] = mapped_column(Text)
    kept: Mapped[str | None] = mapped_column(String(16))
    message: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime)  # its program's, which a due date judges


class PrivacyAudit(Base):
    """One line per export, erasure or retention pruning of a learner's data (added by the privacy
    migration).

    ``subject`` is the learner's random id (or empty for a pruning run): no name, email or external id is
    kept once the learner is erased. Deliberately not a ``learner_id`` column, so that erasing a learner
    keeps the line that says they were erased.
    """

    __tablename__ = "privacy_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    action: Mapped[str] = mapped_column(String(16), nullable=False)
    subject: Mapped[str] = mapped_column(String(36), nullable=False)
    detail: Mapped[str] = mapped_column(Text, nullable=False)


class HelpShown(Base):
    """Each bit of help a learner was shown, the first time (added by the help-shown migration): a hint of
    a code exercise (``hint`` from 1) or its reference solution (``hint`` 0)."""

    __tablename__ = "help_shown"
    __table_args__ = (
        Index("ux_help_shown_once", "learner_id", "lesson_id", "exercise_id", "hint", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    hint: Mapped[int] = mapped_column(Integer, nullable=False)
    shown_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class MistakeSignature(Base):
    """A failing function of one program, by its behaviour signature (added with a class's mistakes).

    ``group_key`` names the group every program with the same behaviour joins (a digest of the lesson,
    exercise, function and signature); ``message`` is the first message the learner saw for the function,
    ``source`` the program's text (cut to 16 KiB), kept as an example the instructor reads.
    """

    __tablename__ = "mistake_signatures"
    __table_args__ = (
        Index("ix_mistake_signatures_group", "group_key", "id"),
        Index("ix_mistake_signatures_learner", "learner_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), ForeignKey("learners.id"), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    exercise_id: Mapped[str] = mapped_column(String(64), nullable=False)
    function: Mapped[str] = mapped_column(String(64), nullable=False)
    signature: Mapped[str] = mapped_column(String(32), nullable=False)
    group_key: Mapped[str] = mapped_column(String(16), nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


# The other tables, imported last: their modules take Base from this one.
from qkv.store.sql.tables_class import (  # noqa: E402
    Course,
    CourseLearner,
    CourseStaff,
    CourseTimeZone,
    DueDateExtension,
    LessonDueDate,
    MessageFeedback,
    MistakeGroupLearner,
    MistakeNote,
    MistakeNoteShown,
    RegradeChange,
)
from qkv.store.sql.tables_lti import (  # noqa: E402
    LtiContext,
    LtiLineItem,
    LtiLoginState,
    LtiPlatform,
    LtiRegistrationLink,
    LtiScoreOutbox,
    LtiToolKey,
    LtiUsedNonce,
)
