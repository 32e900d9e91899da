"""Forward migrations of the store's schema, numbered from 1, and the runner that applies them.

Each migration is a function of an open transaction; the ``schema_version`` table records the
number of the last one applied. A migration, once released, is never edited: a change to the
schema is a new migration appended to ``MIGRATIONS`` (and the ORM classes in ``tables`` updated
to match). Migrations only add; none drops a learner's rows.

The steps themselves are :mod:`qkv.store.sql.migration_steps` (versions 1 to 16) and
:mod:`qkv.store.sql.migration_steps_2` (from 17 on); a new step is appended to the last steps module and
to the end of ``MIGRATIONS``.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Connection,
    Engine,
    inspect,
    text,
)

from qkv.store.sql.migration_steps import (
    class_glance_aggregates,
    courses_and_their_people,
    grading_jobs_for_remote_graders,
    learner_accounts_and_sessions,
    learner_link_kinds,
    lti_platforms_logins_and_scores,
    lti_registration_links,
    lti_score_timestamps_and_parking,
    privacy_audit,
    solutions_shown,
    v1_initial,
    v2_attempts_and_secrets,
    v3_exercise_totals,
    v4_drafts_and_grading_seeds,
    v5_instructors_and_named_mistakes,
    v6_client_budgets_and_shared_sources,
)
from qkv.store.sql.migration_steps_2 import (
    class_mistakes_and_notes,
    due_dates_and_extensions,
    due_dates_from_the_lms,
    grading_jobs_sent_at,
    help_shown,
    lti_line_item_refusals,
    lti_registration_attempts,
    message_feedback_on_its_program,
    suite_versions_and_regrades,
)
from qkv.store.store_error import StoreError

__all__ = ["LATEST_VERSION", "MIGRATIONS", "schema_version", "upgrade"]

# Any fixed number: PostgreSQL advisory lock that serialises migrations of servers starting together.
_MIGRATION_LOCK_KEY = 0x716B76


MIGRATIONS: list[Callable[[Connection], None]] = [
    v1_initial,
    v2_attempts_and_secrets,
    v3_exercise_totals,
    v4_drafts_and_grading_seeds,
    v5_instructors_and_named_mistakes,
    v6_client_budgets_and_shared_sources,
    learner_accounts_and_sessions,
    lti_platforms_logins_and_scores,
    grading_jobs_for_remote_graders,
    class_glance_aggregates,
    learner_link_kinds,
    courses_and_their_people,
    privacy_audit,
    solutions_shown,
    lti_score_timestamps_and_parking,
    lti_registration_links,
    lti_registration_attempts,
    lti_line_item_refusals,
    help_shown,
    class_mistakes_and_notes,
    due_dates_and_extensions,
    suite_versions_and_regrades,
    grading_jobs_sent_at,
    message_feedback_on_its_program,
    due_dates_from_the_lms,
]


LATEST_VERSION = len(MIGRATIONS)


def schema_version(conn: Connection) -> int:
    """The version recorded in the database: 0 for an empty database."""
    if not inspect(conn).has_table("schema_version"):
        return 0
    value = conn.execute(text("SELECT MAX(version) FROM schema_version")).scalar()
    return int(value or 0)


def upgrade(engine: Engine, target: int = LATEST_VERSION) -> tuple[int, int]:
    """Apply the missing migrations up to ``target`` in one transaction.

    Parameters
    ----------
    engine : sqlalchemy.Engine
        The database to upgrade.
    target : int
        The version to stop at (tests use a lower one to write an "older" database).

    Returns
    -------
    tuple of int
        ``(version before, version after)``.

    Raises
    ------
    StoreError
        If the database was written by a newer qkv than this one.

    Examples
    --------
    >>> from sqlalchemy import create_engine
    >>> upgrade(create_engine("sqlite://")) == (0, LATEST_VERSION)
    True


    >>> upgrade(create_engine("sqlite://")) == (0, LATEST_VERSION)
    True
    """
    if not 0 <= target <= LATEST_VERSION:
        raise ValueError(f"target must be between 0 and {LATEST_VERSION}, not {target}.")
    with engine.connect().execution_options(qkv_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
        before = schema_version(conn)
        if before > LATEST_VERSION:
            raise StoreError(
                f"The database has schema version {before}, but this qkv knows versions up to "
                f"{LATEST_VERSION}; upgrade qkv before using this database."
            )
        for number in range(before + 1, target + 1):
            MIGRATIONS[number - 1](conn)
            conn.execute(text("DELETE FROM schema_version"))
            conn.execute(text("INSERT INTO schema_version (version) VALUES (:v)"), {"v": number})
        return before, max(before, target)
