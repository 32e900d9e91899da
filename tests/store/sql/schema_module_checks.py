"""Checks every module of the schema split out of ``qkv.store.sql.tables`` passes (``tables_class``,
``tables_lti``): its tables are on Base.metadata whichever module is imported first, its models are
re-exported by ``tables``, and its columns are those of a migrated database. Each module's own test
module calls them."""

from __future__ import annotations

import importlib
import subprocess
import sys

from sqlalchemy import inspect

import qkv.store.sql.tables as tables
from qkv.store import Store
from qkv.store.sql.engine import create_store_engine


def importing_it_first_gives_the_whole_schema(name: str) -> None:
    program = (
        f"import {name} as m\n"
        "from qkv.store.sql.tables import Base\n"
        "print(len(Base.metadata.tables), sorted(getattr(m, n).__tablename__ for n in m.__all__))"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    module = importlib.import_module(name)
    mine = sorted(getattr(module, model).__tablename__ for model in module.__all__)
    assert done.stdout.split(" ", 1) == [str(len(tables.Base.metadata.tables)), f"{mine}\n"]


def its_models_are_the_tables_module_s_names(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ and set(module.__all__) <= set(tables.__all__)
    for model_name in module.__all__:
        model = getattr(module, model_name)
        assert getattr(tables, model_name) is model
        assert tables.Base.metadata.tables[model.__tablename__] is model.__table__


def its_columns_are_the_migrated_database_s(name: str, database_url: str) -> None:
    module = importlib.import_module(name)
    Store(database_url).close()
    engine = create_store_engine(database_url)
    try:
        found = inspect(engine)
        for model_name in module.__all__:
            table = getattr(module, model_name).__table__
            columns = {c["name"]: c["nullable"] for c in found.get_columns(table.name)}
            assert columns == {c.name: c.nullable for c in table.columns}, table.name
    finally:
        engine.dispose()
