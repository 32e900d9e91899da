"""The LTI 1.3 tables (qkv.store.sql.tables_lti): on Base.metadata whichever module of the schema is imported
first, re-exported by qkv.store.sql.tables, and the same columns as a migrated database (SQLite and
PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys

from sqlalchemy import inspect

import qkv.store.sql.tables as tables
import qkv.store.sql.tables_lti as module
from qkv.store import Store
from qkv.store.sql.engine import create_store_engine


def test_importing_this_module_first_gives_the_whole_schema() -> None:
    program = (
        "import qkv.store.sql.tables_lti as m\n"
        "from qkv.store.sql.tables import Base\n"
        "print(len(Base.metadata.tables), sorted(getattr(m, n).__tablename__ for n in m.__all__))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    mine = sorted(getattr(module, name).__tablename__ for name in module.__all__)
    assert done.stdout.split(" ", 1) == [str(len(tables.Base.metadata.tables)), f"{mine}\n"]


def test_its_models_are_the_tables_module_s_names() -> None:
    assert module.__all__ and set(module.__all__) <= set(tables.__all__)
    for name in module.__all__:
        model = getattr(module, name)
        assert getattr(tables, name) is model
        assert tables.Base.metadata.tables[model.__tablename__] is model.__table__


def test_its_columns_are_the_migrated_database_s(database_url: str) -> None:
    Store(database_url).close()
    engine = create_store_engine(database_url)
    try:
        found = inspect(engine)
        for name in module.__all__:
            table = getattr(module, name).__table__
            columns = {c["name"]: c["nullable"] for c in found.get_columns(table.name)}
            assert columns == {c.name: c.nullable for c in table.columns}, table.name
    finally:
        engine.dispose()
