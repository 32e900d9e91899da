"""Backups of a qkv database and their restore: SQLite's online backup, PostgreSQL's custom-format dump.

A SQLite database is copied page by page with SQLite's online backup API while servers keep writing
(each step holds the read lock only while it copies; a write in between makes it start over, so the copy
is one consistent moment); the copy is a SQLite file of its own, checked with ``PRAGMA integrity_check``
before it replaces the file named. A PostgreSQL database is dumped by ``pg_dump --format=custom`` (one
consistent snapshot, taken while servers run) and restored by ``pg_restore`` into an empty database, in
one transaction. Neither copy names an owner or a grant, so it restores under another role.

Restoring never overwrites: the target must hold no qkv database yet (a new SQLite file, or an empty
PostgreSQL database), so a mistyped URL cannot replace a class's work. A backup of an older qkv is
upgraded by the next server that opens it, as any database is.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from qkv.store.sql.engine import create_store_engine, describe_url, make_private
from qkv.store.sql.migrations import LATEST_VERSION
from qkv.store.store_error import StoreError

__all__ = ["BackupReport", "backup", "backup_kind", "restore"]

SQLITE_MAGIC = b"SQLite format 3\x00"
PG_DUMP_MAGIC = b"PGDMP"
_PAGES_PER_STEP = 256  # pages copied per step of SQLite's backup, before servers may write again
_CLIENT_TOOLS = "install the PostgreSQL client tools (apt-get install postgresql-client)"


@dataclass(frozen=True)
class BackupReport:
    """What a backup or a restore did.

    Parameters
    ----------
    kind : str
        ``sqlite`` or ``postgresql``.
    file : Path
        The backup file.
    database : str
        The database, as it may be shown (no password).
    schema_version : int
        The schema version the database had.
    size : int
        The backup file's size in bytes.
    """

    kind: str
    file: Path
    database: str
    schema_version: int
    size: int


def _parsed(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError:
        raise StoreError(f"The database URL {url!r} is not a valid URL.") from None


def _sqlite_path(url: URL) -> Path:
    path = url.database or ""
    if path in {"", ":memory:"}:
        raise StoreError("An in-memory SQLite database has no file to back up or restore; name a file.")
    return Path(path).expanduser()


def backup_kind(file: Path) -> str:
    """Which kind of backup ``file`` is, read from its first bytes: ``sqlite`` or ``postgresql``.

    Raises
    ------
    StoreError
        If the file cannot be read or is neither a SQLite file nor a ``pg_dump`` custom-format archive.

    Examples
    --------
    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = file.write_text("hello")
    >>> backup_kind(file)
    Traceback (most recent call last):
    ...
    qkv.store.store_error.StoreError: ... is neither a SQLite database nor a pg_dump custom-format archive...
    """
    try:
        with file.open("rb") as stream:
            head = stream.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise StoreError(f"The backup {str(file)!r} cannot be read: {error.strerror or error}.") from None
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PG_DUMP_MAGIC):
        return "postgresql"
    raise StoreError(
        f"{str(file)!r} is neither a SQLite database nor a pg_dump custom-format archive, so it is not a "
        "backup that 'qkv backup' wrote."
    )


def _version_of(connection: sqlite3.Connection, where: str) -> int:
    """The qkv schema version of an open SQLite database, or a StoreError saying it is not one."""
    try:
        row = connection.execute("SELECT MAX(version) FROM schema_version").fetchone()
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{where} is not a qkv database ({error}).") from None
    return int(row[0] or 0) if row else 0


def _copy_sqlite(source: sqlite3.Connection, target: Path) -> None:
    """The online backup of ``source`` into a new file at ``target`` (one file, no WAL beside it), checked."""
    copy = sqlite3.connect(target)
    try:
        source.backup(copy, pages=_PAGES_PER_STEP)
        copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        verdict = copy.execute("PRAGMA integrity_check").fetchone()
        if not verdict or verdict[0] != "ok":
            raise StoreError(f"The copy of the database failed SQLite's integrity check: {verdict}.")
    finally:
        copy.close()


def _sqlite_backup(url: URL, file: Path) -> BackupReport:
    path = _sqlite_path(url)
    if not path.is_file():
        raise StoreError(f"There is no qkv database at {path} to back up.")
    source = sqlite3.connect(path, timeout=30)  # waits out a writer's moment, as a server does
    try:
        version = _version_of(source, str(path))
        _write_atomically(file, lambda partial: _copy_sqlite(source, partial))
    finally:
        source.close()
    return BackupReport("sqlite", file, describe_url(url), version, file.stat().st_size)


def _write_atomically(file: Path, write: Callable[[Path], None]) -> None:
    """Write through a private temporary file beside ``file``, renamed over it only once complete."""
    folder = file.parent if str(file.parent) else Path(".")
    handle, name = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".partial", dir=folder)
    os.close(handle)  # made 0600: a backup holds the cookie-signing key and every learner's work
    partial = Path(name)
    try:
        partial.unlink()  # SQLite and pg_dump each make the file themselves
        write(partial)
        partial.chmod(0o600)
        partial.replace(file)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _pg_environment(url: URL) -> dict[str, str]:
    """libpq's variables for ``url``: the password travels in the environment, never on a command line."""
    environment = dict(os.environ)
    values = {
        "PGHOST": url.host,
        "PGPORT": str(url.port) if url.port else None,
        "PGUSER": url.username,
        "PGPASSWORD": url.password,
        "PGDATABASE": url.database,
    }
    for name, value in values.items():
        if value:
            environment[name] = str(value)
    options = url.query.get("options")
    if isinstance(options, str) and options:
        environment["PGOPTIONS"] = options
    return environment


def _run_tool(command: list[str], url: URL, doing: str) -> None:
    """Run a PostgreSQL client tool; its own message in a sentence when it fails."""
    if shutil.which(command[0]) is None:
        raise StoreError(f"{doing} needs {command[0]}, which is not installed; {_CLIENT_TOOLS}.")
    finished = subprocess.run(command, env=_pg_environment(url), capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        said = " ".join(finished.stderr.split()) or f"exit status {finished.returncode}"
        raise StoreError(f"{doing} failed: {command[0]} said: {said}")


def _pg_version(url: str) -> int:
    """The schema version of the PostgreSQL database (0: no qkv database there)."""
    engine = create_store_engine(url)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("schema_version"):
                return 0
            return int(conn.execute(text("SELECT MAX(version) FROM schema_version")).scalar() or 0)
    except SQLAlchemyError as error:
        message = str(error.orig if hasattr(error, "orig") else error).splitlines()[0]
        raise StoreError(f"Cannot reach the database {describe_url(url)}: {message}") from None
    finally:
        engine.dispose()


def _pg_backup(url: str, parsed: URL, file: Path) -> BackupReport:
    version = _pg_version(url)
    if version == 0:
        raise StoreError(f"The database {describe_url(parsed)} holds no qkv database to back up.")
    command = ["pg_dump", "--format=custom", "--no-owner", "--no-privileges"]
    _write_atomically(
        file, lambda partial: _run_tool([*command, f"--file={partial}"], parsed, "Backing up the database")
    )
    return BackupReport("postgresql", file, describe_url(parsed), version, file.stat().st_size)


def backup(url: str, file: Path) -> BackupReport:
    """Back the database at ``url`` up into ``file`` while servers run; ``file`` is replaced once complete.

    Parameters
    ----------
    url : str
        The database: ``sqlite:///path`` or ``postgresql+psycopg://user:password@host/db``.
    file : Path
        Where the backup goes; readable by its owner only.

    Returns
    -------
    BackupReport

    Raises
    ------
    StoreError
        If the database cannot be read, holds no qkv database, or the copy fails.

    Examples
    --------
    >>> import tempfile
    >>> from qkv.store import Store
    >>> folder = Path(tempfile.mkdtemp())
    >>> Store(f"sqlite:///{folder / 'class.sqlite3'}").close()
    >>> report = backup(f"sqlite:///{folder / 'class.sqlite3'}", folder / "copy.sqlite3")
    >>> report.kind, report.schema_version == LATEST_VERSION
    ('sqlite', True)
    >>> oct((folder / "copy.sqlite3").stat().st_mode & 0o777)
    '0o600'
    """
    parsed = _parsed(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_backup(parsed, file)
    if parsed.get_backend_name() == "postgresql":
        return _pg_backup(url, parsed, file)
    raise StoreError(f"qkv backs up SQLite and PostgreSQL databases, not {describe_url(parsed)!r}.")


def _check_version(version: int, file: Path) -> None:
    if version > LATEST_VERSION:
        raise StoreError(
            f"The backup {str(file)!r} has schema version {version}, but this qkv knows versions up to "
            f"{LATEST_VERSION}; restore it with the qkv that wrote it, or a newer one."
        )


def _sqlite_restore(file: Path, parsed: URL) -> BackupReport:
    target = _sqlite_path(parsed)
    if target.exists() and target.stat().st_size > 0:
        raise StoreError(
            f"{target} already exists; restore into a new file (a path where no database is yet), so that "
            "no class's work is overwritten."
        )
    source = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
    try:
        version = _version_of(source, repr(str(file)))
        _check_version(version, file)
        make_private(target)
        _copy_sqlite(source, target)
    finally:
        source.close()
    return BackupReport("sqlite", file, describe_url(parsed), version, file.stat().st_size)


def _pg_restore(file: Path, url: str, parsed: URL) -> BackupReport:
    found = _pg_version(url)
    if found:
        raise StoreError(
            f"The database {describe_url(parsed)} already holds a qkv database (schema version {found}); "
            "restore into a new, empty database (createdb), so that no class's work is overwritten."
        )
    command = ["pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"]
    _run_tool([*command, f"--dbname={parsed.database}", str(file)], parsed, "Restoring the backup")
    version = _pg_version(url)
    _check_version(version, file)
    return BackupReport("postgresql", file, describe_url(parsed), version, file.stat().st_size)


def restore(file: Path, url: str) -> BackupReport:
    """Restore the backup ``file`` into the database at ``url``, which must hold no qkv database yet.

    Parameters
    ----------
    file : Path
        A backup that :func:`backup` wrote: a SQLite file or a ``pg_dump`` custom-format archive.
    url : str
        The database to restore into, of the backup's kind: a SQLite file that does not exist yet, or an
        empty PostgreSQL database.

    Returns
    -------
    BackupReport

    Raises
    ------
    StoreError
        If the file is no backup, the kinds differ, the target already holds a database, or the restore
        fails.

    Examples
    --------
    >>> import tempfile
    >>> from qkv.store import Store
    >>> folder = Path(tempfile.mkdtemp())
    >>> Store(f"sqlite:///{folder / 'class.sqlite3'}").close()
    >>> _ = backup(f"sqlite:///{folder / 'class.sqlite3'}", folder / "copy.sqlite3")
    >>> restore(folder / "copy.sqlite3", f"sqlite:///{folder / 'class.sqlite3'}")
    Traceback (most recent call last):
    ...
    qkv.store.store_error.StoreError: ... already exists; restore into a new file ...
    >>> restore(folder / "copy.sqlite3", f"sqlite:///{folder / 'new.sqlite3'}").kind
    'sqlite'
    """
    kind = backup_kind(file)
    parsed = _parsed(url)
    backend = parsed.get_backend_name()
    if kind != backend:
        raise StoreError(
            f"{str(file)!r} is a {_KIND_NAMES[kind]} backup, so it restores into a {_KIND_NAMES[kind]} "
            f"database, not into {describe_url(parsed)!r}."
        )
    if kind == "sqlite":
        return _sqlite_restore(file, parsed)
    return _pg_restore(file, url, parsed)


_KIND_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
