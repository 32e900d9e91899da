"""Upgrades: a database left by every earlier schema version, with rows in it, migrates to today's and serves.

The fixtures are built here, deterministically, from the migrations themselves: for each released version
k, ``upgrade(engine, target=k)`` makes exactly the schema that version of qkv left behind, and rows are
written into it as that version knew it. The first version gets a learner's real work (answers, a graded
program, a lesson's variant); every table of every version gets a row of its own, its values chosen by
the column's type and name, its foreign keys pointing at the rows written before, so a step that moves
or copies old rows (the totals of version 3, the courses that everyone was put into) meets data. Then
today's qkv opens the file: the schema is today's, no row of any table is lost, the gradebook and a
learner's export read the old rows, and the app serves a lesson page, the health check and an
instructor's gradebook.

Building the fixtures at test time rather than keeping binary files means a migration appended later is
covered at once (its predecessor becomes one more old version); the migrations are never edited once
released (``qkv.store.sql.migrations``), so the schema at each k is the one that version shipped.

Then the other way: ``qkv serve`` on a database that a newer qkv wrote stops with a sentence and a
non-zero status, no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    func,
    inspect,
    select,
    text,
)

from qkv.store import LATEST_VERSION, Store, create_store_engine, schema_version, upgrade
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import SECRET, sign_in_instructor

__all__ = ["postgres_admin_url", "postgres_url"]  # the store tests' PostgreSQL fixtures, used here

LEARNER = "0ld1earner-0000-0000-0000-000000000001"[:36]
WRITTEN = datetime(2026, 11, 1, 12, 0, 0)
OLD_VERSIONS = range(1, LATEST_VERSION)  # every released version before today's


def _write_version_1_work(engine: Engine) -> None:
    """A learner's work as the first release saved it: two answers, a graded program, a variant."""
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO learners (id, display_name, created_at) VALUES (:id, 'Old Timer', :t)"),
            {"id": LEARNER, "t": WRITTEN},
        )
        for answer, correct in (("3, 1", False), ("3, 2", True)):
            conn.execute(
                text(
                    "INSERT INTO answers (learner_id, lesson_id, exercise_id, variant_seed, answer, correct, "
                    "message, created_at) VALUES (:l, 'L4.1', 'q', NULL, :a, :c, 'saved by v1', :t)"
                ),
                {"l": LEARNER, "a": answer, "c": correct, "t": WRITTEN},
            )
        conn.execute(
            text(
                "INSERT INTO code_submissions (learner_id, lesson_id, exercise_id, source, status, passed, "
                "total, result_json, created_at) VALUES (:l, 'L4.1', 'code', 'pass', 'pass', 4, 4, "
                '\'{"status": "pass"}\', :t)'
            ),
            {"l": LEARNER, "t": WRITTEN},
        )
        conn.execute(
            text(
                "INSERT INTO lesson_state (learner_id, lesson_id, variant_seed, updated_at) "
                "VALUES (:l, 'L4.1', 99, :t)"
            ),
            {"l": LEARNER, "t": WRITTEN},
        )


# Values by column name where the type alone would make a row no version of qkv ever wrote.
_BY_NAME: dict[str, object] = {
    "lesson_id": "L4.1",
    "exercise_id": "q",
    "learner_id": LEARNER,
    "deployment_ids": '["deployment-1"]',
    "status": "pass",
    "state": "done",
    "kind": "roster",
    "role": "instructor",
    "source": "learner",
}


def _value(table: Table, column: Any, version: int) -> object:
    """A value of the column's type, the same on every run, unique enough for the one row a table gets."""
    if column.foreign_keys:
        return None  # filled from the referenced row
    if column.name in _BY_NAME and not column.primary_key:
        return _BY_NAME[column.name]
    kind = column.type
    if isinstance(kind, Boolean):
        return False
    if isinstance(kind, DateTime):
        return WRITTEN
    if isinstance(kind, Date):
        return date(2026, 11, 1)
    if isinstance(kind, Integer | BigInteger):
        return 1
    if isinstance(kind, Float):  # Float covers Double and DOUBLE_PRECISION
        return 0.5
    if column.name.endswith("_json"):
        return "{}"
    if isinstance(kind, String | Text):
        made = f"v{version}-{table.name}-{column.name}"
        length = getattr(kind, "length", None)
        return made[-length:] if length else made
    raise AssertionError(f"no value for {table.name}.{column.name} of type {kind!r}")


def _row_for(table: Table, written: dict[str, dict[str, object]], version: int) -> dict[str, object] | None:
    """One row of ``table``, its foreign keys naming rows already written (None: a target has no row)."""
    row: dict[str, object] = {}
    for column in table.columns:
        if column.primary_key and isinstance(column.type, Integer) and len(table.primary_key.columns) == 1:
            continue  # the database numbers these, as it did for every row a server saved
        if not column.foreign_keys:
            row[column.name] = _value(table, column, version)
            continue
        key = next(iter(column.foreign_keys))
        target = written.get(key.column.table.name)
        if target is not None and key.column.name in target:
            row[column.name] = target[key.column.name]
        elif not column.nullable:
            return None
    return row


def _fill_every_table(engine: Engine, version: int) -> dict[str, int]:
    """A row in every table of this version that the first version's work left empty; the rows per table."""
    meta = MetaData()
    meta.reflect(engine)
    written: dict[str, dict[str, object]] = {}
    with engine.begin() as conn:
        for table in meta.sorted_tables:
            if table.name == "schema_version":
                continue
            present = conn.execute(select(table).limit(1)).mappings().first()
            if present is not None:
                written[table.name] = dict(present)
                continue
            row = _row_for(table, written, version)
            if row is not None:
                conn.execute(table.insert().values(**row))
                written[table.name] = row
        return {
            table.name: conn.execute(select(func.count()).select_from(table)).scalar_one()
            for table in meta.sorted_tables
        }


def _old_database(url: str, version: int) -> dict[str, int]:
    """The database qkv at schema ``version`` left behind, with rows in it: the rows of each table.

    It is made as a school's database was: the first version's work, then each later version up to
    ``version`` in turn, each writing a row in the tables it brought, so every step meets the rows of
    the versions before it.
    """
    engine = create_store_engine(url)
    try:
        assert upgrade(engine, target=1) == (0, 1)
        _write_version_1_work(engine)
        counts = _fill_every_table(engine, 1)
        for step in range(2, version + 1):
            assert upgrade(engine, target=step) == (step - 1, step)
            counts = _fill_every_table(engine, step)
        return counts
    finally:
        engine.dispose()


def _rows_now(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            assert schema_version(conn) == LATEST_VERSION
            return {
                t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                for t in meta.sorted_tables
            }
    finally:
        engine.dispose()


def _check_the_store_reads_the_old_rows(url: str) -> None:
    store = Store(url)
    try:
        activity = store.progress.lesson_activity(LEARNER, "L4.1")
        assert (activity.exercises["q"].solved, activity.variant_seed) == (True, 99)
        assert any(row.learner_id == LEARNER for row in store.gradebook.rows())
        exported = store.personal_data.export(LEARNER)
        assert exported is not None
        assert exported["tables"]["learners"][0]["id"] == LEARNER
    finally:
        store.close()


def _check_the_app_serves(url: str) -> None:
    app = create_app(Settings(database_url=url, secret_key=SECRET, warm_spares=0))
    with TestClient(app) as client:
        assert client.get("/healthz").json()["status"] == "ok"
        page = client.get("/lessons/L4.1", headers={"accept": "text/html"})
        assert page.status_code == 200, page.text
        store = app.state.qkv.store
        grace, token = store.instructors.add("Grace")
        store.courses.grant_all_courses(grace.id)
        sign_in_instructor(app, client, token)
        gradebook = client.get("/instructor/export/gradebook.csv")
        assert gradebook.status_code == 200, gradebook.text
        assert "Old Timer" in gradebook.text


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'old.sqlite3'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_a_database_of_every_earlier_version_migrates_and_serves(database_url: str, version: int) -> None:
    before = _old_database(database_url, version)
    assert sum(before.values()) > version, "the old database holds rows"

    _check_the_store_reads_the_old_rows(database_url)
    after = _rows_now(database_url)
    lost = {name: (count, after.get(name, 0)) for name, count in before.items() if after.get(name, 0) < count}
    assert lost == {}, f"rows lost in the upgrade from version {version} (before, after): {lost}"
    _check_the_app_serves(database_url)


def test_the_fixtures_fill_every_table_of_every_version(tmp_path: Path) -> None:
    # Honest fixtures: each old version's tables hold a row, so a migration that copies rows meets some.
    for version in (1, LATEST_VERSION - 1):
        counts = _old_database(f"sqlite:///{tmp_path / f'v{version}.sqlite3'}", version)
        empty = sorted(name for name, count in counts.items() if count == 0 and name != "schema_version")
        assert empty == [], f"version {version} left these tables empty: {empty}"


def test_serve_refuses_a_database_from_a_newer_qkv_with_a_sentence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.sqlite3'}"
    Store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": LATEST_VERSION + 1})
        assert inspect(conn).has_table("learners")
    engine.dispose()

    environment = {**os.environ, "QKV_SECRET_KEY": SECRET}
    command = [
        sys.executable,
        "-m",
        "qkv",
        "serve",
        "--database-url",
        url,
        "--port",
        "0",
        "--warm-spares",
        "0",
    ]
    finished = subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=120, check=False
    )

    assert finished.returncode != 0
    assert "Traceback" not in finished.stderr + finished.stdout
    assert (
        f"The database has schema version {LATEST_VERSION + 1}, but this qkv knows versions up to "
        f"{LATEST_VERSION}; upgrade qkv before using this database."
    ) in finished.stderr
