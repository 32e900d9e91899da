"""The tables of the current schema, as SQLAlchemy 2.0 ORM classes.

These describe the schema *after* every migration in ``qkv.store.migrations`` has run; the
migrations, not these classes, create and alter the tables (a test checks the two agree).
Times are naive UTC datetimes so SQLite and PostgreSQL store them the same way.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, Date, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the qkv tables."""


class SchemaVersion(Base):
    """One row: the number of the last migration applied to this database."""

    __tablename__ = "schema_version"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)


class LearnerRow(Base):
    """An anonymous learner: one per browser, named only if they choose a display name."""

    __tablename__ = "learners"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    display_name: Mapped[str | None] = mapped_column(String(80))
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime)  # added by migration 2
    # Added by migration 4 for a seed per learner; no longer written or read: every run now draws fresh
    # inputs and its results document records its own seed. Kept so that existing databases match.
    grading_seed: Mapped[int | None] = mapped_column(Integer)


class Answer(Base):
    """Every answer a learner submitted to a numeric, letter or choice exercise, right or wrong."""

    __tablename__ = "answers"
    __table_args__ = (
        Index("ix_answers_learner_lesson", "learner_id", "lesson_id"),
        # Added by migration 7: a learner's latest answer to one exercise, found in one index step.
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
        # Added by migration 7: a learner's latest program for one exercise, found in one index step.
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
    __table_args__ = (  # added by migration 7: the class view's per-exercise counts read the index alone
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
    # Added by migration 7 for the class view: when work on the exercise began, and the counted attempts up
    # to and including the first right one (both NULL for rows saved before).
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    attempts_to_solve: Mapped[int | None] = mapped_column(Integer)


class Instructor(Base):
    """Someone who may see the whole class (added by migration 5); created by ``qkv instructor add``."""

    __tablename__ = "instructors"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(80), nullable=False, unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


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
