"""The migration steps 1 to 16 (qkv.store.sql.migration_steps): each only adds to the schema it finds, and
version 4's drafts and grading seeds reach a version 2 database."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, inspect, text

from qkv.store import LATEST_VERSION, create_store_engine, upgrade
from qkv.store.sql import migration_steps
from qkv.store.sql.migrations import MIGRATIONS

LEARNER = "c" * 36


def test_upgrading_a_version_2_database_adds_drafts_and_grading_seeds(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    assert upgrade(engine, target=2) == (0, 2)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO learners (id, created_at) VALUES (:id, :t)"),
            {"id": LEARNER, "t": datetime(2026, 11, 2)},
        )
        assert "code_drafts" not in inspect(conn).get_table_names()
    assert upgrade(engine) == (2, LATEST_VERSION)
    with engine.connect() as conn:
        assert "code_drafts" in inspect(conn).get_table_names()
        assert "grading_seed" in {c["name"] for c in inspect(conn).get_columns("learners")}
        assert conn.execute(text("SELECT grading_seed FROM learners")).scalar() is None  # never written now
    engine.dispose()


def _schema(engine: Engine) -> dict[str, set[str]]:
    with engine.connect() as conn:
        found = inspect(conn)
        return {table: {c["name"] for c in found.get_columns(table)} for table in found.get_table_names()}


def test_each_step_only_adds_to_the_schema_it_finds(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    try:
        steps = sorted(
            (getattr(migration_steps, name) for name in migration_steps.__all__), key=MIGRATIONS.index
        )
        for step in steps:
            number = MIGRATIONS.index(step) + 1
            before = _schema(engine)
            assert upgrade(engine, target=number) == (number - 1, number), step.__name__
            after = _schema(engine)
            assert all(columns <= after.get(table, set()) for table, columns in before.items()), step.__name__
    finally:
        engine.dispose()


def test_its_steps_are_the_first_of_the_list_in_order() -> None:
    steps = [getattr(migration_steps, name) for name in migration_steps.__all__]
    assert sorted(steps, key=MIGRATIONS.index) == MIGRATIONS[: len(steps)]
