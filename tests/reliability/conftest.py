"""Fixtures of the reliability tests: servers, their databases, and the load script as a module."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.reliability.reliability_support import POSTGRES_URL, REPO, Server


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[type[Server]]:
    """Start servers with ``start_server(database_url, *extra_options).start()``; all are killed afterwards."""
    started: list[Server] = []

    class _Tracked(Server):
        def start(self, ready_within: float = 60.0) -> Server:
            started.append(self)
            return super().start(ready_within)

        def __init__(self, database_url: str, *extra: str, port: int | None = None) -> None:
            super().__init__(database_url, tmp_path, *extra, port=port)

    yield _Tracked  # type: ignore[misc]
    for server in started:
        server.kill()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'qkv.sqlite3'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL whose connections live in a fresh PostgreSQL schema, dropped after the test."""
    from sqlalchemy import create_engine, make_url, text
    from sqlalchemy.exc import SQLAlchemyError

    schema = f"qkv_rel_{uuid.uuid4().hex[:12]}"
    try:
        admin = create_engine(POSTGRES_URL)
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
    except SQLAlchemyError as error:
        shown = make_url(POSTGRES_URL).render_as_string(hide_password=True)
        pytest.skip(f"PostgreSQL is not reachable at {shown}: {type(error).__name__}")
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"
    finally:
        with contextlib.suppress(SQLAlchemyError), admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="session")
def load_script() -> ModuleType:
    """``benchmarks/load.py`` imported as a module."""
    spec = importlib.util.spec_from_file_location("qkv_load_script", REPO / "benchmarks" / "load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
