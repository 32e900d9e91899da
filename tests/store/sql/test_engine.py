"""Opening databases: URLs, the default location, and the messages when it goes wrong."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from qkv.store import Store, StoreError, create_store_engine, default_database_url, describe_url


def test_default_is_a_sqlite_file_in_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    from platformdirs import user_data_dir

    monkeypatch.delenv("QKV_DATABASE_URL", raising=False)
    assert (
        default_database_url() == f"sqlite:///{Path(user_data_dir('qkv', appauthor=False)) / 'qkv.sqlite3'}"
    )
    monkeypatch.setenv("QKV_DATABASE_URL", "sqlite:////tmp/elsewhere.sqlite3")
    assert default_database_url() == "sqlite:////tmp/elsewhere.sqlite3"


def test_passwords_are_hidden_in_messages() -> None:
    assert describe_url("postgresql+psycopg://u:hunter2@h/db") == "postgresql+psycopg://u:***@h/db"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "not a url",
            "The database URL 'not a url' is not a valid URL; use sqlite:///path/to/file.sqlite3 "
            "or postgresql+psycopg://user:password@host/database.",
        ),
        (
            "mysql://u:pw@h/db",
            "The database URL 'mysql://u:***@h/db' names 'mysql'; qkv supports SQLite "
            "(sqlite:///path) and PostgreSQL (postgresql+psycopg://user:password@host/database).",
        ),
    ],
)
def test_unusable_urls_are_refused_with_a_sentence(url: str, message: str) -> None:
    with pytest.raises(StoreError) as raised:
        create_store_engine(url)
    assert str(raised.value) == message


def test_a_missing_sqlite_file_is_not_created_when_it_must_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.sqlite3"
    with pytest.raises(StoreError) as raised:
        Store(f"sqlite:///{missing}", must_exist=True)
    assert str(raised.value) == f"There is no qkv database at {missing}; nothing has been saved there yet."
    assert not missing.exists()


def test_an_empty_database_without_migrating_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.sqlite3'}"
    with pytest.raises(StoreError, match=r"holds no qkv data yet\.$"):
        Store(url, migrate=False)


@pytest.mark.timeout(30)
def test_an_unreachable_postgresql_gives_a_sentence_with_the_password_hidden() -> None:
    with pytest.raises(StoreError) as raised:
        Store("postgresql+psycopg://qkv:secretpw@127.0.0.1:1/qkv")
    message = str(raised.value)
    assert message.startswith("Cannot open the database postgresql+psycopg://qkv:***@127.0.0.1:1/qkv: ")
    assert "secretpw" not in message


@pytest.mark.timeout(60)
def test_a_database_that_goes_away_gives_a_store_error_not_a_crash(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    store.database.engine.dispose()
    # The server's database becomes unreachable (nothing listens on port 1).
    store.database.engine = create_store_engine("postgresql+psycopg://qkv:pw@127.0.0.1:1/qkv")
    with pytest.raises(StoreError) as raised:
        store.progress.record_answer("a" * 36, "L4.1", "q", "1", correct=False, message="No.")
    assert str(raised.value).startswith("The database sqlite:///")
    assert "refused a write: " in str(raised.value)
    with pytest.raises(StoreError, match="refused a read: "):
        store.progress.lesson_activity("a" * 36, "L4.1")
    store.close()


@pytest.mark.postgres
def test_a_postgresql_database_made_with_sql_ascii_serves_text_as_utf8(postgres_admin_url: str) -> None:
    # A database created with ENCODING 'SQL_ASCII' (an old cluster's default) makes psycopg return bytes
    # unless the connection asks for UTF-8; SQLAlchemy's own first query then failed with a TypeError.
    name = f"qkv_ascii_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(
            text(
                f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
            )
        )
    url = make_url(postgres_admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        store = Store(url)  # migrates: every table made
        with store.database.engine.connect() as conn:
            assert conn.execute(text("SELECT 'Größe »3«'")).scalar_one() == "Größe »3«"
        store.close()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
        admin.dispose()
