"""The store's migration steps 1 to 16 (:data:`qkv.store.sql.migrations.MIGRATIONS` lists them in order),
each a function of an open transaction, with the helpers they share (:func:`_add_column`). A released
step is never edited; new steps go to :mod:`qkv.store.sql.migration_steps_2`.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    false,
    text,
    true,
)
from sqlalchemy.schema import CreateColumn

__all__ = [
    "class_glance_aggregates",
    "courses_and_their_people",
    "grading_jobs_for_remote_graders",
    "learner_accounts_and_sessions",
    "learner_link_kinds",
    "lti_platforms_logins_and_scores",
    "lti_registration_links",
    "lti_score_timestamps_and_parking",
    "privacy_audit",
    "solutions_shown",
    "v1_initial",
    "v2_attempts_and_secrets",
    "v3_exercise_totals",
    "v4_drafts_and_grading_seeds",
    "v5_instructors_and_named_mistakes",
    "v6_client_budgets_and_shared_sources",
]


def v1_initial(conn: Connection) -> None:
    """The first released schema: learners, their answers and code submissions, and lesson state."""
    meta = MetaData()  # a frozen snapshot of version 1, independent of today's models
    Table("schema_version", meta, Column("version", Integer, primary_key=True))
    Table(
        "learners",
        meta,
        Column("id", String(36), primary_key=True),
        Column("display_name", String(80)),
        Column("created_at", DateTime, nullable=False),
    )
    Table(
        "answers",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("variant_seed", Integer),
        Column("answer", Text, nullable=False),
        Column("correct", Boolean, nullable=False),
        Column("message", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
        Index("ix_answers_learner_lesson", "learner_id", "lesson_id"),
    )
    Table(
        "code_submissions",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("source", Text, nullable=False),
        Column("status", String(16), nullable=False),
        Column("passed", Integer, nullable=False),
        Column("total", Integer, nullable=False),
        Column("result_json", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
        Index("ix_code_submissions_learner_lesson", "learner_id", "lesson_id"),
    )
    Table(
        "lesson_state",
        meta,
        Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("variant_seed", Integer),
        Column("updated_at", DateTime, nullable=False),
    )
    meta.create_all(conn)


def v2_attempts_and_secrets(conn: Connection) -> None:
    """Format errors stop costing attempts, learners get a last-seen time, servers share a cookie key."""
    # Every answer saved by version 1 cost an attempt, so the new column defaults to true.
    _add_column(conn, "answers", Column("counted_as_attempt", Boolean, nullable=False, server_default=true()))
    _add_column(conn, "learners", Column("last_seen_at", DateTime))
    meta = MetaData()
    Table(
        "server_secrets",
        meta,
        Column("name", String(64), primary_key=True),
        Column("value", String(128), nullable=False),
    )
    meta.create_all(conn)


def v3_exercise_totals(conn: Connection) -> None:
    """Counts per learner and exercise kept as numbers, so that old rows can be pruned without losing them."""
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # exists: only the key's target
    Table(
        "exercise_totals",
        meta,
        Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("exercise_id", String(64), primary_key=True),
        Column("attempts", Integer, nullable=False),
        Column("submissions", Integer, nullable=False),
        Column("solved", Boolean, nullable=False),
        Column("first_solved_at", DateTime),
        Column("last_activity_at", DateTime, nullable=False),
        Column("best_passed", Integer),
        Column("best_total", Integer),
        Column("failed_runs", Integer, nullable=False),
    )
    meta.create_all(conn)
    # Every row saved so far is still there, so the totals start as exactly what the rows say.
    conn.execute(
        text(
            "INSERT INTO exercise_totals (learner_id, lesson_id, exercise_id, attempts, submissions, solved, "
            "first_solved_at, last_activity_at, best_passed, best_total, failed_runs) "
            "SELECT learner_id, lesson_id, exercise_id, "
            "SUM(CASE WHEN counted_as_attempt THEN 1 ELSE 0 END), COUNT(*), "
            "MAX(CASE WHEN correct THEN 1 ELSE 0 END) = 1, "
            "MIN(CASE WHEN correct THEN created_at END), MAX(created_at), NULL, NULL, 0 "
            "FROM answers GROUP BY learner_id, lesson_id, exercise_id"
        )
    )
    conn.execute(
        text(
            "INSERT INTO exercise_totals (learner_id, lesson_id, exercise_id, attempts, submissions, solved, "
            "first_solved_at, last_activity_at, best_passed, best_total, failed_runs) "
            "SELECT learner_id, lesson_id, exercise_id, COUNT(*), COUNT(*), "
            "MAX(CASE WHEN status = 'pass' THEN 1 ELSE 0 END) = 1, "
            "MIN(CASE WHEN status = 'pass' THEN created_at END), MAX(created_at), MAX(passed), MAX(total), "
            "SUM(CASE WHEN status = 'pass' THEN 0 ELSE 1 END) "
            "FROM code_submissions c WHERE NOT EXISTS (SELECT 1 FROM exercise_totals t WHERE "
            "t.learner_id = c.learner_id AND t.lesson_id = c.lesson_id AND t.exercise_id = c.exercise_id) "
            "GROUP BY learner_id, lesson_id, exercise_id"
        )
    )


def v4_drafts_and_grading_seeds(conn: Connection) -> None:
    """Code drafts are saved as the learner types; each learner's test inputs come from their own seed."""
    # NULL until the learner's first run draws it; learners of earlier versions get theirs on their next run.
    _add_column(conn, "learners", Column("grading_seed", Integer))
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # only for the foreign key
    Table(
        "code_drafts",
        meta,
        Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("exercise_id", String(64), primary_key=True),
        Column("source", Text, nullable=False),
        Column("updated_at", DateTime, nullable=False),
    )
    meta.tables["code_drafts"].create(conn)


def v5_instructors_and_named_mistakes(conn: Connection) -> None:
    """Each answer keeps the id of the named mistake it matched; instructors, their links and sessions.

    Self-contained: it only adds a nullable column and three new tables, so it applies in place to
    any version 4 database (older answers keep ``mistake`` NULL: unknown, not "no mistake").
    """
    _add_column(conn, "answers", Column("mistake", String(64)))
    meta = MetaData()
    Table(
        "instructors",
        meta,
        Column("id", String(36), primary_key=True),
        Column("name", String(80), nullable=False, unique=True),
        Column("created_at", DateTime, nullable=False),
    )
    Table(
        "instructor_sign_in_tokens",
        meta,
        Column("token_hash", String(64), primary_key=True),
        Column("instructor_id", String(36), ForeignKey("instructors.id"), nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
        Column("used_at", DateTime),
    )
    Table(
        "instructor_sessions",
        meta,
        Column("session_hash", String(64), primary_key=True),
        Column("instructor_id", String(36), ForeignKey("instructors.id"), nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
    )
    meta.create_all(conn)


def v6_client_budgets_and_shared_sources(conn: Connection) -> None:
    """Bytes stored per client and day, and each learner's program text stored once under its hash.

    Self-contained: programs saved before keep their text in ``code_submissions.source`` (their new
    ``source_sha256`` is NULL); only programs saved from now on point into ``code_sources``.
    """
    _add_column(conn, "code_submissions", Column("source_sha256", String(64)))
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # exists: only the key's target
    Table(
        "code_sources",
        meta,
        Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
        Column("sha256", String(64), primary_key=True),
        Column("source", Text, nullable=False),
    )
    Table(
        "client_storage",
        meta,
        Column("client", String(64), primary_key=True),
        Column("day", Date, primary_key=True),
        Column("stored_bytes", BigInteger, nullable=False),
    )
    meta.tables["code_sources"].create(conn)
    meta.tables["client_storage"].create(conn)


def learner_accounts_and_sessions(conn: Connection) -> None:
    """Learners may have an account: an external identity, one-time sign-in links and sessions.

    Self-contained: three nullable columns on ``learners`` (anonymous learners keep them NULL) and two new
    tables. ``issuer`` is '' for this server's own roster and the LTI ``iss`` for an LMS's learners; the
    unique index on (issuer, external_id) makes each identity one learner (NULLs never collide).
    """
    _add_column(conn, "learners", Column("issuer", String(255)))
    _add_column(conn, "learners", Column("external_id", String(255)))
    _add_column(conn, "learners", Column("email", String(255)))
    conn.execute(text("CREATE UNIQUE INDEX ux_learners_account ON learners (issuer, external_id)"))
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # exists: only the key's target
    Table(
        "learner_sign_in_tokens",
        meta,
        Column("token_hash", String(64), primary_key=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
        Column("used_at", DateTime),
    )
    Table(
        "learner_sessions",
        meta,
        Column("session_hash", String(64), primary_key=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
        Index("ix_learner_sessions_learner", "learner_id"),
    )
    meta.tables["learner_sign_in_tokens"].create(conn)
    meta.tables["learner_sessions"].create(conn)


def lti_platforms_logins_and_scores(conn: Connection) -> None:
    """LTI 1.3: registered platforms, the tool's key, logins in progress, used nonces, line items per
    learner and lesson, the classes seen in launches, and the outbox of scores for the LMS.

    Self-contained: only new tables, so it applies in place to any earlier database.
    """
    meta = MetaData()
    _lti_launch_tables(meta)
    _lti_score_tables(meta)
    meta.create_all(conn)


def _lti_launch_tables(meta: MetaData) -> None:
    """The tables a launch reads: platforms, the tool's key, logins in progress and used nonces."""
    Table(
        "lti_platforms",
        meta,
        Column("issuer", String(255), primary_key=True),
        Column("client_id", String(255), primary_key=True),
        Column("deployment_ids", Text, nullable=False),  # a JSON list of strings
        Column("auth_url", String(1000), nullable=False),
        Column("token_url", String(1000), nullable=False),
        Column("jwks_url", String(1000), nullable=False),
        Column("created_at", DateTime, nullable=False),
    )
    Table(
        "lti_tool_keys",
        meta,
        Column("name", String(64), primary_key=True),
        Column("kid", String(64), nullable=False),
        Column("private_pem", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
    )
    Table(
        "lti_login_states",
        meta,
        Column("state_hash", String(64), primary_key=True),
        Column("nonce", String(128), nullable=False),
        Column("issuer", String(255), nullable=False),
        Column("client_id", String(255), nullable=False),
        Column("target_link_uri", String(2000), nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
        Column("used_at", DateTime),
    )
    Table(
        "lti_used_nonces",
        meta,
        Column("issuer", String(255), primary_key=True),
        Column("nonce", String(255), primary_key=True),
        Column("expires_at", DateTime, nullable=False),
    )


def _lti_score_tables(meta: MetaData) -> None:
    """The tables scores travel through: line items, the classes seen in launches, the score outbox."""
    Table(
        "lti_line_items",
        meta,
        Column("learner_id", String(36), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("issuer", String(255), nullable=False),
        Column("client_id", String(255), nullable=False),
        Column("subject", String(255), nullable=False),
        Column("lineitem_url", String(2000), nullable=False),
        Column("last_score", Integer),  # exercises solved when the last score was queued
        Column("updated_at", DateTime, nullable=False),
    )
    Table(
        "lti_contexts",
        meta,
        Column("issuer", String(255), primary_key=True),
        Column("client_id", String(255), primary_key=True),
        Column("context_id", String(255), primary_key=True),
        Column("title", String(255), nullable=False),
        Column("memberships_url", String(2000)),
        Column("updated_at", DateTime, nullable=False),
        Column("roster_pulled_at", DateTime),
    )
    Table(
        "lti_score_outbox",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("learner_id", String(36), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("issuer", String(255), nullable=False),
        Column("client_id", String(255), nullable=False),
        Column("lineitem_url", String(2000), nullable=False),
        Column("score_json", Text, nullable=False),  # the AGS score document, sent as it is
        Column("created_at", DateTime, nullable=False),
        Column("attempts", Integer, nullable=False),
        Column("next_attempt_at", DateTime, nullable=False),
        Column("claimed_until", DateTime),
        Column("last_error", Text),
        Column("sent_at", DateTime),
        Index("ix_lti_score_outbox_waiting", "sent_at", "learner_id", "lineitem_url"),
    )


def grading_jobs_for_remote_graders(conn: Connection) -> None:
    """Programs waiting for, or graded by, a grader on another machine (``qkv serve --grading remote``).

    One row per job: the program and whom it is for, its place in line, and its verdict once a grader
    wrote it. A learner has at most one job queued or running (a partial unique index).
    """
    meta = MetaData()
    Table("learners", meta, Column("id", String(36), primary_key=True))  # exists: only the key's target
    active = text("state IN ('queued', 'running')")
    jobs = Table(
        "grading_jobs",
        meta,
        Column("id", String(36), primary_key=True),
        Column("learner_id", String(36), ForeignKey("learners.id"), nullable=False),
        Column("lesson_id", String(32), nullable=False),
        Column("exercise_id", String(64), nullable=False),
        Column("client", String(64), nullable=False),
        Column("storage_client", String(64)),
        Column("source", Text, nullable=False),
        Column("own_work", Boolean, nullable=False),
        Column("state", String(16), nullable=False),
        Column("priority", Integer, nullable=False),
        Column("attempts", Integer, nullable=False),
        Column("worker", String(128)),
        Column("queue_job_id", BigInteger),
        Column("result_json", Text),
        Column("kept", String(16)),
        Column("message", Text),
        Column("created_at", DateTime, nullable=False),
        Column("started_at", DateTime),
        Column("finished_at", DateTime),
    )
    Index(
        "ux_grading_jobs_one_active_per_learner",
        jobs.c.learner_id,
        unique=True,
        postgresql_where=active,
        sqlite_where=active,
    )
    Index("ix_grading_jobs_state_client", jobs.c.state, jobs.c.client)
    jobs.create(conn)


def class_glance_aggregates(conn: Connection) -> None:
    """What the class view reads from each learner's totals: when work on an exercise started, and the
    counted attempts up to and including the first right one.

    Self-contained and additive: rows saved before have both NULL (started is then read as the last
    activity; their attempts to solve are unknown and left out of first-try shares and medians).
    """
    _add_column(conn, "exercise_totals", Column("started_at", DateTime))
    _add_column(conn, "exercise_totals", Column("attempts_to_solve", Integer))
    # The dashboard's per-exercise counts read this index alone, already grouped by exercise.
    conn.execute(
        text(
            "CREATE INDEX ix_exercise_totals_exercise ON exercise_totals "
            "(lesson_id, exercise_id, solved, attempts_to_solve, attempts, submissions)"
        )
    )
    # A stuck learner's latest wrong answer or failing program: one index step, however big the table.
    for table in ("answers", "code_submissions"):
        columns = "(learner_id, lesson_id, exercise_id, id)"
        conn.execute(text(f"CREATE INDEX ix_{table}_learner_exercise ON {table} {columns}"))


def learner_link_kinds(conn: Connection) -> None:
    """Whether a learner's sign-in link is their own personal link or one made for another device.

    Only a personal link may bring the anonymous work of the browser that opens it into the account. Links
    stored before carry no kind: those that lived an hour or less were device links (10 minutes), the others
    personal links (7 days by default), so each is marked by its lifetime (read in Python: date arithmetic
    differs between SQLite and PostgreSQL).
    """
    _add_column(conn, "learner_sign_in_tokens", Column("kind", String(16)))
    rows = conn.execute(text("SELECT token_hash, created_at, expires_at FROM learner_sign_in_tokens")).all()
    for token_hash, created_at, expires_at in rows:
        lifetime = _as_datetime(expires_at) - _as_datetime(created_at)
        kind = "device" if lifetime <= timedelta(hours=1) else "personal"
        conn.execute(
            text("UPDATE learner_sign_in_tokens SET kind = :kind WHERE token_hash = :hash"),
            {"kind": kind, "hash": token_hash},
        )


def _as_datetime(value: object) -> datetime:
    """A timestamp read by raw SQL: SQLite returns text, PostgreSQL a ``datetime``."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def courses_and_their_people(conn: Connection) -> None:
    """Courses: one server holds many classes, each with its learners and its staff.

    New tables ``courses`` (an LMS context, one made by hand, or the migrated class), ``course_learners``
    and ``course_staff`` (instructor or teaching assistant), and ``learner_link_records`` (who made a
    learner's sign-in link). Instructors gain ``all_courses`` (administrators) and the LMS identity of
    those made by a launch (``issuer``, ``external_id``: a name is not an identity), their sessions the
    course they look at; LMS classes and queued scores name their course; a line item is now kept per
    learner, lesson *and course*, so ``lti_line_items`` is rebuilt with ``course_id`` in its key (every
    row copied).

    A database that already holds anyone (learners, instructors or LMS classes) gets one default course,
    of origin ``migrated``, holding every learner, every instructor (as its instructor) and every LMS
    row, so nobody's view changes; an empty database gets no course and works as before courses.
    """
    meta = MetaData()
    # The tables the new ones point at, named only for their foreign keys (they exist already).
    Table("learners", meta, Column("id", String(36), primary_key=True))
    Table("instructors", meta, Column("id", String(36), primary_key=True))
    new_tables = [
        Table(
            "courses",
            meta,
            Column("id", String(36), primary_key=True),
            Column("title", String(255), nullable=False),
            Column("origin", String(16), nullable=False),
            Column("issuer", String(255)),
            Column("deployment_id", String(255)),
            Column("context_id", String(255)),
            Column("created_at", DateTime, nullable=False),
            Index("ux_courses_lti_context", "issuer", "deployment_id", "context_id", unique=True),
        ),
        Table(
            "course_learners",
            meta,
            Column("course_id", String(36), ForeignKey("courses.id"), primary_key=True),
            Column("learner_id", String(36), ForeignKey("learners.id"), primary_key=True),
            Column("source", String(16), nullable=False),
            Column("joined_at", DateTime, nullable=False),
            Index("ix_course_learners_learner", "learner_id"),
        ),
        Table(
            "course_staff",
            meta,
            Column("course_id", String(36), ForeignKey("courses.id"), primary_key=True),
            Column("instructor_id", String(36), ForeignKey("instructors.id"), primary_key=True),
            Column("role", String(24), nullable=False),
            Column("added_at", DateTime, nullable=False),
            Index("ix_course_staff_instructor", "instructor_id"),
        ),
        Table(
            "learner_link_records",
            meta,
            Column("id", Integer, primary_key=True, autoincrement=True),
            Column("learner_id", String(36), nullable=False),
            Column("instructor_id", String(36), nullable=False),
            Column("instructor_name", String(80), nullable=False),
            Column("course_id", String(36)),
            Column("created_at", DateTime, nullable=False),
            Index("ix_learner_link_records_learner", "learner_id", "id"),
        ),
    ]
    meta.create_all(conn, tables=new_tables)
    _add_column(conn, "instructors", Column("all_courses", Boolean, nullable=False, server_default=false()))
    _add_column(conn, "instructors", Column("issuer", String(255)))
    _add_column(conn, "instructors", Column("external_id", String(255)))
    conn.execute(text("CREATE UNIQUE INDEX ux_instructors_lms_person ON instructors (issuer, external_id)"))
    _add_column(conn, "instructor_sessions", Column("course_id", String(36)))
    _add_column(conn, "lti_contexts", Column("course_id", String(36)))
    _add_column(conn, "lti_score_outbox", Column("course_id", String(36)))
    default_course = _default_course(conn)
    _line_items_per_course(conn, default_course or "")
    if default_course is not None:
        _everyone_into(conn, default_course)


def _default_course(conn: Connection) -> str | None:
    """The migrated course's id, made when the database holds anyone; None for an empty database."""
    held = any(
        conn.execute(text(f"SELECT 1 FROM {table} LIMIT 1")).first() is not None
        for table in ("learners", "instructors", "lti_contexts", "lti_line_items")
    )
    if not held:
        return None
    course_id = str(uuid.uuid4())
    conn.execute(
        text(
            "INSERT INTO courses (id, title, origin, created_at) "
            "VALUES (:id, 'The class before courses', 'migrated', :now)"
        ),
        {"id": course_id, "now": datetime.now(UTC).replace(tzinfo=None)},
    )
    return course_id


def _line_items_per_course(conn: Connection, course_id: str) -> None:
    """Rebuild ``lti_line_items`` keyed by (learner, lesson, course), its rows in ``course_id``."""
    columns = "learner_id, lesson_id, issuer, client_id, subject, lineitem_url, last_score, updated_at"
    meta = MetaData()
    Table(
        "lti_line_items_v2",
        meta,
        Column("learner_id", String(36), primary_key=True),
        Column("lesson_id", String(32), primary_key=True),
        Column("issuer", String(255), nullable=False),
        Column("client_id", String(255), nullable=False),
        Column("subject", String(255), nullable=False),
        Column("lineitem_url", String(2000), nullable=False),
        Column("last_score", Integer),
        Column("updated_at", DateTime, nullable=False),
        Column("course_id", String(36), primary_key=True),
    )
    meta.create_all(conn)
    conn.execute(
        text(
            f"INSERT INTO lti_line_items_v2 ({columns}, course_id) "
            f"SELECT {columns}, :course FROM lti_line_items"
        ),
        {"course": course_id},
    )
    conn.execute(text("DROP TABLE lti_line_items"))
    conn.execute(text("ALTER TABLE lti_line_items_v2 RENAME TO lti_line_items"))
    if conn.dialect.name == "postgresql":
        conn.execute(text("ALTER INDEX lti_line_items_v2_pkey RENAME TO lti_line_items_pkey"))


def _everyone_into(conn: Connection, course_id: str) -> None:
    """Every learner a member and every instructor an instructor of the migrated course; LMS rows in it."""
    now = {"course": course_id, "now": datetime.now(UTC).replace(tzinfo=None)}
    conn.execute(
        text(
            "INSERT INTO course_learners (course_id, learner_id, source, joined_at) "
            "SELECT :course, id, 'migrated', :now FROM learners"
        ),
        now,
    )
    conn.execute(
        text(
            "INSERT INTO course_staff (course_id, instructor_id, role, added_at) "
            "SELECT :course, id, 'instructor', :now FROM instructors"
        ),
        now,
    )
    for table in ("lti_contexts", "lti_score_outbox"):
        conn.execute(text(f"UPDATE {table} SET course_id = :course"), {"course": course_id})


def privacy_audit(conn: Connection) -> None:
    """A line per export, erasure or retention pruning of a learner's data (``qkv learners export`` /
    ``erase``, ``qkv serve --retain-days``): when, what, the learner's random id, and what was done.

    Self-contained and additive: a new table, no other table changes.
    """
    meta = MetaData()
    Table(
        "privacy_audit",
        meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", DateTime, nullable=False),
        Column("action", String(16), nullable=False),
        Column("subject", String(36), nullable=False),
        Column("detail", Text, nullable=False),
    )
    meta.create_all(conn)


def solutions_shown(conn: Connection) -> None:
    """When a learner was first shown an exercise's reference solution, and whether their first solve came
    after it (marked in the gradebook, the exports and the LMS score).

    Self-contained and additive: two nullable columns of ``exercise_totals`` (rows saved before read as
    "never shown", "not after").
    """
    _add_column(conn, "exercise_totals", Column("solution_shown_at", DateTime))
    _add_column(conn, "exercise_totals", Column("solved_after_solution", Boolean))


def lti_score_timestamps_and_parking(conn: Connection) -> None:
    """LTI scores an LMS keeps: each line item's last score timestamp (whole seconds, so the next one is
    strictly newer, as Moodle requires), and scores parked after the LMS refused them with a 4xx.

    Self-contained and additive: rows saved before have both NULL (no timestamp sent yet; not parked).
    """
    _add_column(conn, "lti_line_items", Column("last_score_at", DateTime))
    _add_column(conn, "lti_score_outbox", Column("parked_at", DateTime))


def lti_registration_links(conn: Connection) -> None:
    """One-time LTI Dynamic Registration links (``qkv lti registration-link``): each token as its SHA-256,
    when it stops being valid, and when and by which platform it was used.

    Self-contained: one new table.
    """
    meta = MetaData()
    Table(
        "lti_registration_links",
        meta,
        Column("token_hash", String(64), primary_key=True),
        Column("created_at", DateTime, nullable=False),
        Column("expires_at", DateTime, nullable=False),
        Column("used_at", DateTime),
        Column("used_by", String(255)),  # the issuer that registered with it
    )
    meta.create_all(conn)


def _add_column(conn: Connection, table: str, column: Column[object]) -> None:
    definition = CreateColumn(column).compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {definition}"))
