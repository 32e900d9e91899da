"""The versioned schema: an older database is upgraded in place without losing a row."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, create_engine, inspect, text

from qkv.store import LATEST_VERSION, Store, StoreError, create_store_engine, schema_version, upgrade
from qkv.store.sql.tables import Base

LEARNER = "c" * 36


def _write_version_1_database(url: str) -> None:
    """What qkv's first release left behind: schema version 1 with a learner's work in it."""
    engine = create_store_engine(url)
    assert upgrade(engine, target=1) == (0, 1)
    written = datetime(2026, 11, 1, 12, 0, 0)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO learners (id, display_name, created_at) VALUES (:id, 'Old Timer', :t)"),
            {"id": LEARNER, "t": written},
        )
        for answer, correct in (("3, 1", False), ("3, 2", True)):
            conn.execute(
                text(
                    "INSERT INTO answers (learner_id, lesson_id, exercise_id, variant_seed, answer, correct,"
                    " message, created_at) VALUES (:l, 'L4.1', 'q', NULL, :a, :c, 'saved by v1', :t)"
                ),
                {"l": LEARNER, "a": answer, "c": correct, "t": written},
            )
        conn.execute(
            text(
                "INSERT INTO code_submissions (learner_id, lesson_id, exercise_id, source, status, passed, total,"
                " result_json, created_at) VALUES (:l, 'L4.1', 'code', 'pass', 'pass', 4, 4, '{\"status\": \"pass\"}', :t)"
            ),
            {"l": LEARNER, "t": written},
        )
        conn.execute(
            text(
                "INSERT INTO lesson_state (learner_id, lesson_id, variant_seed, updated_at) VALUES (:l, 'L4.1', 99, :t)"
            ),
            {"l": LEARNER, "t": written},
        )
    engine.dispose()


def test_upgrading_a_version_1_database_keeps_every_row(database_url: str) -> None:
    _write_version_1_database(database_url)

    store = Store(database_url)
    try:
        with store.database.engine.connect() as conn:
            assert schema_version(conn) == LATEST_VERSION
        activity = store.progress.lesson_activity(LEARNER, "L4.1")
        assert activity.variant_seed == 99
        q = activity.exercises["q"]
        # Version 1 counted every answer as an attempt; the new column says so for the old rows.
        assert (q.attempts, q.submissions, q.solved) == (2, 2, True)
        assert activity.exercises["code"].last_code is not None
        assert activity.exercises["code"].last_code.result == {"status": "pass"}
        assert store.learners.display_name(LEARNER) == "Old Timer"
        # And the upgraded database takes the new kinds of writes.
        store.progress.record_answer(
            LEARNER, "L4.1", "q", "x", correct=False, message="Format.", counted_as_attempt=False
        )
        assert store.progress.lesson_activity(LEARNER, "L4.1").exercises["q"].attempts == 2
        assert store.shared_secret("cookie")
        # Migration 3: drafts, for a learner who had none.
        assert store.progress.lesson_activity(LEARNER, "L4.1").drafts == {}
        store.code.save_draft(LEARNER, "L4.1", "code", "def f():\n    return 1\n")
        assert store.progress.lesson_activity(LEARNER, "L4.1").drafts == {"code": "def f():\n    return 1\n"}
    finally:
        store.close()


def test_opening_twice_applies_nothing_the_second_time(database_url: str) -> None:
    Store(database_url).close()
    engine = create_store_engine(database_url)
    try:
        assert upgrade(engine) == (LATEST_VERSION, LATEST_VERSION)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT COUNT(*) FROM schema_version")).scalar() == 1
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_models(database_url: str) -> None:
    Store(database_url).close()
    engine = create_store_engine(database_url)
    try:
        found = inspect(engine)
        for table in Base.metadata.sorted_tables:
            columns = {c["name"]: c["nullable"] for c in found.get_columns(table.name)}
            expected = {c.name: c.nullable for c in table.columns}
            assert columns == expected, table.name
    finally:
        engine.dispose()


def test_a_database_from_a_newer_qkv_is_refused(database_url: str) -> None:
    Store(database_url).close()
    engine = create_store_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": LATEST_VERSION + 1})
    engine.dispose()
    with pytest.raises(StoreError) as raised:
        Store(database_url)
    assert str(raised.value) == (
        f"The database has schema version {LATEST_VERSION + 1}, but this qkv knows versions up to "
        f"{LATEST_VERSION}; upgrade qkv before using this database."
    )


def test_a_failed_migration_leaves_the_database_unchanged(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qkv.store.sql import migration_steps, migrations

    _write_version_1_database(sqlite_url)

    def broken(conn: object) -> None:
        migration_steps._add_column(conn, "learners", Column("half_done", Integer))  # type: ignore[arg-type]
        raise RuntimeError("power cut")

    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations.MIGRATIONS[0], broken])
    with pytest.raises(RuntimeError, match="power cut"):
        migrations.upgrade(create_store_engine(sqlite_url), target=2)
    engine = create_engine(sqlite_url)
    with engine.connect() as conn:
        assert schema_version(conn) == 1
        assert "half_done" not in {c["name"] for c in inspect(conn).get_columns("learners")}
    engine.dispose()


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    with store.database.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    store.close()


def open_stores_at_once(url: str, count: int = 4) -> tuple[list[Store], list[BaseException]]:
    """Open ``count`` stores on ``url`` from as many threads at once: those that opened, and the errors."""
    opened: list[Store] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(Store(url))
        except BaseException as error:  # reported in the test thread
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return opened, errors


@pytest.mark.timeout(120)
def test_servers_starting_together_migrate_once(database_url: str) -> None:
    opened, errors = open_stores_at_once(database_url)
    try:
        assert errors == []
        with opened[0].database.engine.connect() as conn:
            assert schema_version(conn) == LATEST_VERSION
            assert conn.execute(text("SELECT COUNT(*) FROM schema_version")).scalar() == 1
        secrets = {store.shared_secret("cookie") for store in opened}
        assert len(secrets) == 1
    finally:
        for store in opened:
            store.close()


@pytest.mark.timeout(120)
def test_four_stores_opening_one_new_sqlite_file_at_once_all_open(tmp_path: Path) -> None:
    # Switching a new file to WAL needs it to itself for a moment, and SQLite answered "database is
    # locked" at once (not after the busy timeout) to a connection that raced another: before the
    # retry, 1 trial in 10 of these failed. 40 trials: a regression fails here with 98 % certainty.
    for trial in range(40):
        opened, errors = open_stores_at_once(f"sqlite:///{tmp_path / f'qkv-{trial}.sqlite3'}")
        for store in opened:
            store.close()
        assert errors == [], (trial, errors)
