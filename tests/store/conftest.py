"""Store fixtures: every store test runs on a SQLite file and on the real PostgreSQL server.

PostgreSQL tests each get a schema of their own (dropped afterwards), so they neither see nor
disturb other data in the test database.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

POSTGRES_URL = os.environ.get("QKV_TEST_POSTGRES_URL", "postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_test")


def _postgres_reachable() -> str | None:
    try:
        engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
    except (OperationalError, ImportError) as error:
        return f"PostgreSQL is not reachable at {POSTGRES_URL} ({str(error).splitlines()[0]})"
    return None


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    problem = _postgres_reachable()
    if problem:
        pytest.skip(problem)
    return POSTGRES_URL


@pytest.fixture
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """A URL whose connections live in a fresh, empty schema."""
    schema = f"qkv_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_admin_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in postgres_admin_url else "?"
    yield f"{postgres_admin_url}{separator}options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'qkv.sqlite3'}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> str:
    """Each test using this runs twice: on SQLite and on PostgreSQL."""
    name = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return str(request.getfixturevalue(name))
