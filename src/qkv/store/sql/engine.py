"""Opening a database: the default SQLite file, the URL checks, and SQLite's connection settings."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from qkv.store.store_error import StoreError

DATABASE_URL_ENV = "QKV_DATABASE_URL"


@dataclass(frozen=True)
class PoolLimits:
    """How many connections an engine keeps and how long a request waits for one.

    Parameters
    ----------
    size : int
        Connections kept open in the pool.
    overflow : int
        Extra connections opened when all pooled ones are busy (closed again when returned).
    timeout_s : float
        How long a read or write waits for a free connection before the store gives up.

    Raises
    ------
    ValueError
        If a number is out of range.

    Examples
    --------
    >>> PoolLimits(size=1, overflow=0, timeout_s=0.5).size
    1
    >>> PoolLimits(size=0, overflow=0, timeout_s=1)
    Traceback (most recent call last):
    ...
    ValueError: A connection pool needs size >= 1, overflow >= 0 and timeout_s > 0, not 0, 0 and 1.
    """

    size: int = 10
    overflow: int = 10
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.size < 1 or self.overflow < 0 or not self.timeout_s > 0:
            raise ValueError(
                "A connection pool needs size >= 1, overflow >= 0 and timeout_s > 0, "
                f"not {self.size!r}, {self.overflow!r} and {self.timeout_s!r}."
            )


def default_database_url() -> str:
    """The database used when none is given: ``$QKV_DATABASE_URL``, else a SQLite file in the user data dir.

    Returns
    -------
    str
        A SQLAlchemy URL.

    Examples
    --------
    >>> default_database_url().startswith(("sqlite:///", "postgresql"))
    True
    """
    configured = os.environ.get(DATABASE_URL_ENV, "").strip()
    if configured:
        return configured
    from platformdirs import user_data_dir

    return f"sqlite:///{Path(user_data_dir('qkv', appauthor=False)) / 'qkv.sqlite3'}"


def describe_url(url: str | URL) -> str:
    """The URL as it may be shown to a person: any password replaced by ``***``.

    Examples
    --------
    >>> describe_url("postgresql+psycopg://qkv:secret@127.0.0.1:5432/qkv")
    'postgresql+psycopg://qkv:***@127.0.0.1:5432/qkv'
    """
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "an unreadable database URL"


def create_store_engine(url: str, *, must_exist: bool = False, pool: PoolLimits | None = None) -> Engine:
    """A SQLAlchemy engine for ``url``, with SQLite set up for concurrent use (WAL, busy timeout).

    Parameters
    ----------
    url : str
        ``sqlite:///path``, ``sqlite://`` (in memory) or ``postgresql+psycopg://user:pw@host/db``.
    must_exist : bool
        For SQLite files: refuse to create a new database (used by read-only commands).
    pool : PoolLimits, optional
        The connection pool's size and wait; by default 10 + 10 connections for PostgreSQL and
        SQLAlchemy's own for a SQLite file. An in-memory SQLite database has one shared connection
        and ignores it.

    Returns
    -------
    sqlalchemy.Engine

    Raises
    ------
    StoreError
        If the URL cannot be parsed, names an unsupported database, or (with ``must_exist``) a
        SQLite file that does not exist.

    Examples
    --------
    >>> create_store_engine("sqlite://").dialect.name
    'sqlite'
    >>> create_store_engine("mysql://x@y/z")
    Traceback (most recent call last):
    ...
    qkv.store.store_error.StoreError: The database URL 'mysql://x@y/z' names 'mysql'; qkv supports SQLite ...
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(
            f"The database URL {url!r} is not a valid URL; use sqlite:///path/to/file.sqlite3 "
            "or postgresql+psycopg://user:password@host/database."
        ) from None
    shown = describe_url(parsed)
    backend = parsed.get_backend_name()
    if backend not in {"sqlite", "postgresql"}:
        raise StoreError(
            f"The database URL {shown!r} names {backend!r}; qkv supports SQLite (sqlite:///path) and "
            "PostgreSQL (postgresql+psycopg://user:password@host/database)."
        )
    if backend == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is the driver we install
    options: dict[str, Any] = {}
    if backend == "sqlite":
        path = parsed.database or ""
        if path in {"", ":memory:"}:
            options.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
        else:
            file = Path(path).expanduser()
            if must_exist and not file.is_file():
                raise StoreError(f"There is no qkv database at {file}; nothing has been saved there yet.")
            try:
                make_private(file)
            except OSError as error:
                raise StoreError(
                    f"Cannot create the database {file} readable by its owner only: {error}."
                ) from None
            options.update(connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S})
            if pool is not None:
                options.update(pool_size=pool.size, max_overflow=pool.overflow, pool_timeout=pool.timeout_s)
    else:
        limits = pool or PoolLimits()
        options.update(
            pool_pre_ping=True,
            pool_size=limits.size,
            max_overflow=limits.overflow,
            pool_timeout=limits.timeout_s,
            # Text is exchanged as UTF-8 whatever the database's own encoding: a database made with
            # SQL_ASCII would otherwise hand back bytes, which nothing downstream reads.
            connect_args={"client_encoding": "utf8"},
        )
    try:
        engine = create_engine(parsed, **options)
    except (NoSuchModuleError, ImportError) as error:
        raise StoreError(f"Cannot open {shown!r}: its database driver is not installed ({error}).") from None
    if backend == "sqlite":
        _configure_sqlite(engine)
    return engine


def make_private(file: Path) -> None:
    """Create the SQLite file (and missing folders) readable by its owner only: it holds the signing key.

    A new folder is made 0700 and a new file 0600; an existing file of ours that others could read is
    made 0600 (SQLite gives its -wal and -shm files the database file's permissions).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "new"
    >>> make_private(folder / "qkv.sqlite3")
    >>> oct((folder / "qkv.sqlite3").stat().st_mode & 0o777), oct(folder.stat().st_mode & 0o777)
    ('0o600', '0o700')
    """
    missing = [parent for parent in reversed(file.parents) if not parent.exists()]
    for folder in missing:
        folder.mkdir(mode=0o700)
    if not file.exists():
        os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o600))
    elif file.stat().st_mode & 0o077 and file.stat().st_uid == os.geteuid():
        file.chmod(0o600)


SQLITE_BUSY_TIMEOUT_S = 30.0


def _switch_to_wal(cursor: Any) -> None:
    """``PRAGMA journal_mode=WAL``, retried while another connection is switching the same new file.

    Changing the journal mode needs the file to itself for a moment. When several connections open a
    new database at once (servers or threads starting together), SQLite answers "database is locked" at
    once to all but one instead of waiting through the busy timeout (it would otherwise risk a
    deadlock); measured: 1 start in 10 of four threads on a new file failed so. Once the file is in WAL
    mode, which it keeps, the statement changes nothing and takes no such lock.
    """
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _configure_sqlite(engine: Engine) -> None:
    """WAL lets readers run beside a writer; we issue BEGIN ourselves so DDL is transactional too."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # pysqlite would otherwise BEGIN only before DML
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Writers take the write lock up front, so two writers queue on busy_timeout instead of
        # failing with SQLITE_BUSY when a read transaction tries to upgrade.
        immediate = connection.get_execution_options().get("qkv_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
