"""The database the store's repositories share: one engine, opened and migrated once, and its transactions.

Every repository reads and writes through ``Database.read()`` and ``Database.write()``, each one short
transaction whose failures come back as a ``StoreError`` sentence naming the database.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from sqlalchemy import Connection, Engine, Table, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from qkv.store.sql.clock import utc_now
from qkv.store.sql.engine import SQLITE_BUSY_TIMEOUT_S, PoolLimits, create_store_engine, describe_url
from qkv.store.sql.migrations import schema_version, upgrade
from qkv.store.sql.tables import LearnerRow, PrivacyAudit
from qkv.store.store_error import LearnerErased, StoreError

_LEARNERS: Table = LearnerRow.__table__  # type: ignore[assignment]
_AUDIT: Table = PrivacyAudit.__table__  # type: ignore[assignment]


class Database:
    """One SQLite or PostgreSQL database on one SQLAlchemy engine, with the schema brought up to date.

    Parameters
    ----------
    url : str
        A database URL (see ``create_store_engine``).
    migrate : bool
        Bring the schema up to date on opening (the server does; a read-only export does not).
    must_exist : bool
        Refuse to create a new SQLite file.
    pool : PoolLimits, optional
        The connection pool's size and wait (see ``create_store_engine``).

    Raises
    ------
    StoreError
        If the database cannot be reached, holds no qkv data (without ``migrate``), or was written by a
        newer qkv.

    Examples
    --------
    >>> from sqlalchemy import select
    >>> database = Database("sqlite://")
    >>> with database.read() as conn:
    ...     conn.execute(select(1)).scalar()
    1
    >>> database.close()
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        must_exist: bool = False,
        pool: PoolLimits | None = None,
    ) -> None:
        self.url = url
        self.engine: Engine = create_store_engine(url, must_exist=must_exist, pool=pool)
        # SQLite lets one writer at a time in; a writer that finds the lock taken sleeps and tries again
        # (1, 2, 5, ... up to 100 ms a time), so under load it may wait long after the lock is free and
        # lose it to later writers: in a 300-learner burst a write waited 13 ms at the median, 0.7 s at
        # the 99th percentile, 1.1 s at most. This process's writers queue here instead, on a lock that
        # hands over at once (another process writing to the file still meets SQLite's own wait).
        self._writers = threading.RLock() if self.engine.dialect.name == "sqlite" else None
        try:
            if migrate:
                upgrade(self.engine)
            else:
                with self.engine.connect() as conn:
                    version = schema_version(conn)
                if version == 0:
                    raise StoreError(f"The database {describe_url(url)} holds no qkv data yet.")
        except OperationalError as error:
            self.engine.dispose()
            raise StoreError(
                f"Cannot open the database {describe_url(url)}: {_first_line(error.orig)}."
            ) from None
        except BaseException:
            self.engine.dispose()
            raise

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back if it raises.

        Yields
        ------
        sqlalchemy.Connection
            The transaction's connection.

        Raises
        ------
        StoreError
            If no connection comes free in time or the database refuses the write.

        Examples
        --------
        >>> from sqlalchemy import text
        >>> database = Database("sqlite://")
        >>> with database.write() as conn:
        ...     _ = conn.execute(text("CREATE TABLE notes (body TEXT)"))
        ...     _ = conn.execute(text("INSERT INTO notes VALUES ('hello')"))
        >>> with database.read() as conn:
        ...     conn.execute(text("SELECT body FROM notes")).scalar()
        'hello'
        >>> database.close()
        """
        with self._transaction("write") as conn:
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """One read transaction (a consistent view of the database for the block).

        Yields
        ------
        sqlalchemy.Connection
            The transaction's connection.

        Raises
        ------
        StoreError
            If no connection comes free in time or the database refuses the read.

        Examples
        --------
        >>> from sqlalchemy import select
        >>> database = Database("sqlite://")
        >>> with database.read() as conn:
        ...     conn.execute(select(2)).scalar()
        2
        >>> database.close()
        """
        with self._transaction("read") as conn:
            yield conn

    @contextmanager
    def _transaction(self, action: Literal["read", "write"]) -> Iterator[Connection]:
        """A transaction for ``action``, its failures as sentences; writes are marked for the engine's
        write lock (SQLite takes it at BEGIN, see ``create_store_engine``)."""
        try:
            with self._turn_to(action):
                connection = self.engine.connect()
                if action == "write":
                    connection = connection.execution_options(qkv_write=True)
                with connection as conn, conn.begin():
                    yield conn
        except PoolTimeout as error:
            raise StoreError(
                f"No connection to the database {describe_url(self.url)} came free in time for a "
                f"{action}: {_first_line(error)}."
            ) from None
        except OperationalError as error:
            raise StoreError(
                f"The database {describe_url(self.url)} refused a {action}: {_first_line(error)}."
            ) from None

    @contextmanager
    def _turn_to(self, action: Literal["read", "write"]) -> Iterator[None]:
        """For a write to SQLite, this process's writer lock, held until the transaction ends."""
        if action == "read" or self._writers is None:
            yield
            return
        if not self._writers.acquire(timeout=SQLITE_BUSY_TIMEOUT_S):
            raise StoreError(
                f"The database {describe_url(self.url)} refused a write: other writes in this process "
                f"held it for over {SQLITE_BUSY_TIMEOUT_S:g} s."
            )
        try:
            yield
        finally:
            self._writers.release()

    def ping(self) -> None:
        """Run a trivial query.

        Raises
        ------
        StoreError
            If the database is unreachable.

        Examples
        --------
        >>> database = Database("sqlite://")
        >>> database.ping()
        >>> database.close()
        """
        with self.read() as conn:
            conn.execute(select(1))

    @staticmethod
    def insert_ignore(conn: Connection, table: Table, values: Mapping[str, Any], keys: list[str]) -> bool:
        """Insert one row unless a row with the same ``keys`` exists (on either database); whether it did.

        Parameters
        ----------
        conn : sqlalchemy.Connection
            A connection inside ``write()``.
        table : sqlalchemy.Table
            The table.
        values : mapping
            The row's columns.
        keys : list of str
            The columns of the unique index that decides whether the row exists.

        Examples
        --------
        >>> from sqlalchemy import func, select
        >>> from qkv.store.sql.tables import ServerSecret
        >>> table = ServerSecret.__table__
        >>> database = Database("sqlite://")
        >>> with database.write() as conn:
        ...     database.insert_ignore(conn, table, {"name": "k", "value": "first"}, ["name"])
        ...     database.insert_ignore(conn, table, {"name": "k", "value": "second"}, ["name"])
        True
        False
        >>> with database.read() as conn:
        ...     conn.execute(select(table.c.value)).scalars().all()
        ['first']
        >>> database.close()
        """
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        # RETURNING says whether the row went in, alike on both databases (psycopg's rowcount does not).
        statement = dialect.insert(table).values(**values).on_conflict_do_nothing(index_elements=keys)
        return conn.execute(statement.returning(table.c[keys[0]])).first() is not None

    def ensure_learner(self, conn: Connection, learner_id: str) -> None:
        """Create the learner's row on their first saved work, and mark them seen now.

        Parameters
        ----------
        conn : sqlalchemy.Connection
            A connection inside ``write()``.
        learner_id : str
            The learner's id.

        Examples
        --------
        >>> from sqlalchemy import select
        >>> from qkv.store.sql.tables import LearnerRow
        >>> database = Database("sqlite://")
        >>> with database.write() as conn:
        ...     database.ensure_learner(conn, "a" * 36)
        ...     database.ensure_learner(conn, "a" * 36)
        >>> with database.read() as conn:
        ...     len(conn.execute(select(LearnerRow.__table__)).all())
        1
        >>> database.close()

        Raises
        ------
        LearnerErased
            If the learner's data was erased on request (the write's transaction then saves nothing).
        """
        now = utc_now()
        row = {"id": learner_id, "created_at": now, "last_seen_at": now}
        if self.insert_ignore(conn, _LEARNERS, row, ["id"]):
            if _was_erased(conn, learner_id):
                raise LearnerErased(
                    f"The learner {learner_id} was erased on request; nothing is saved under that id again."
                )
            return  # a new row: seen now already
        conn.execute(update(_LEARNERS).where(_LEARNERS.c.id == learner_id).values(last_seen_at=now))


def _was_erased(conn: Connection, learner_id: str) -> bool:
    """Whether the privacy audit notes an erasure of ``learner_id`` (asked only when a row is new)."""
    erased = select(_AUDIT.c.id).where(_AUDIT.c.action == "erase", _AUDIT.c.subject == learner_id).limit(1)
    return conn.execute(erased).first() is not None


def _first_line(error: object) -> str:
    error = getattr(error, "orig", None) or error
    text = str(error).strip().splitlines()
    return text[0].rstrip(".") if text else type(error).__name__


__all__ = ["Database"]
