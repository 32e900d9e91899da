"""The migration steps from 17 on (qkv.store.sql.migration_steps_2): they follow the first module's steps at
the end of MIGRATIONS, and each only adds to the schema it finds."""

from __future__ import annotations

from sqlalchemy import Engine, inspect

from qkv.store import create_store_engine, upgrade
from qkv.store.sql import migration_steps, migration_steps_2
from qkv.store.sql.migrations import LATEST_VERSION, MIGRATIONS


def _schema(engine: Engine) -> dict[str, set[str]]:
    with engine.connect() as conn:
        found = inspect(conn)
        return {table: {c["name"] for c in found.get_columns(table)} for table in found.get_table_names()}


def test_its_steps_follow_the_first_module_s_to_the_end_of_the_list() -> None:
    steps = [getattr(migration_steps_2, name) for name in migration_steps_2.__all__]
    first = len(migration_steps.__all__)
    assert sorted(steps, key=MIGRATIONS.index) == MIGRATIONS[first:]
    assert first + len(steps) == LATEST_VERSION


def test_each_step_only_adds_to_the_schema_it_finds(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    try:
        upgrade(engine, target=len(migration_steps.__all__))
        for step in MIGRATIONS[len(migration_steps.__all__) :]:
            number = MIGRATIONS.index(step) + 1
            before = _schema(engine)
            assert upgrade(engine, target=number) == (number - 1, number), step.__name__
            after = _schema(engine)
            assert all(columns <= after.get(table, set()) for table, columns in before.items()), step.__name__
    finally:
        engine.dispose()
