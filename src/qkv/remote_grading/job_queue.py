"""The job queue both sides share: procrastinate on the store's PostgreSQL database.

Web servers defer a job per program (its only argument is the id of its row in ``grading_jobs``);
graders run the task that grades it. procrastinate keeps its own tables (``procrastinate_jobs``,
``procrastinate_workers``, ...) beside the store's, created by whichever process starts first.
"""

from __future__ import annotations

import procrastinate
import psycopg
from procrastinate.schema import SchemaManager
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from qkv.store import describe_url

GRADING_QUEUE = "qkv-grading"
GRADE_TASK = "qkv.grade"
# Any fixed number: the PostgreSQL advisory lock under which the first process creates the queue's tables.
_SCHEMA_LOCK_KEY = 0x716B7671


class RemoteGradingError(RuntimeError):
    """Remote grading cannot start: the message says why, in a sentence."""


def queue_conninfo(database_url: str) -> str:
    """The libpq address of the queue's database, from the store's SQLAlchemy URL.

    Parameters
    ----------
    database_url : str
        ``postgresql+psycopg://user:password@host:port/db`` (query options such as ``options=`` are kept).

    Returns
    -------
    str
        The same database as a ``postgresql://`` URL that psycopg takes.

    Raises
    ------
    RemoteGradingError
        If the URL is not a PostgreSQL one (graders on other machines cannot reach a SQLite file).

    Examples
    --------
    >>> queue_conninfo("postgresql+psycopg://qkv:secret@db.internal:5432/qkv")
    'postgresql://qkv:secret@db.internal:5432/qkv'
    >>> queue_conninfo("sqlite:////srv/qkv.sqlite3")
    Traceback (most recent call last):
    ...
    qkv.remote_grading.job_queue.RemoteGradingError: Grading on other machines needs PostgreSQL, ...
    """
    try:
        url = make_url(database_url)
    except ArgumentError:
        raise RemoteGradingError(
            f"{database_url!r} is not a database URL; give postgresql+psycopg://user:password@host/db."
        ) from None
    backend = url.get_backend_name()
    if backend != "postgresql":
        raise RemoteGradingError(
            "Grading on other machines needs PostgreSQL, because the graders take their jobs from a queue in "
            f"the database, but {describe_url(database_url)} is a {backend} database. Give a "
            "postgresql+psycopg://user:password@host/db URL with --database-url, or grade on this server "
            "with --grading local."
        )
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def queue_app(database_url: str, *, max_connections: int) -> procrastinate.App:
    """A procrastinate app on the store's database, with at most ``max_connections`` connections of its own.

    Raises
    ------
    RemoteGradingError
        If the URL is not a PostgreSQL one.
    """
    connector = procrastinate.PsycopgConnector(
        conninfo=queue_conninfo(database_url), min_size=1, max_size=max_connections
    )
    return procrastinate.App(connector=connector)


async def ensure_queue_tables(database_url: str) -> bool:
    """Create procrastinate's tables unless they exist; True when this call created them.

    Processes starting together wait for each other on an advisory lock, so the tables are made once.

    Raises
    ------
    RemoteGradingError
        If the database cannot be reached or refuses to create them.
    """
    conninfo = queue_conninfo(database_url)
    try:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            await conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK_KEY,))
            try:
                found = await (await conn.execute("SELECT to_regclass('procrastinate_jobs')")).fetchone()
                if found is not None and found[0] is not None:
                    return False
                # One script, sent without parameters: PostgreSQL runs it as one transaction.
                await conn.execute(SchemaManager.get_schema())
                return True
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK_KEY,))
    except psycopg.Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise RemoteGradingError(
            f"The grading queue's tables in {describe_url(database_url)} could not be checked or made: "
            f"{first}."
        ) from None


__all__ = [
    "GRADE_TASK",
    "GRADING_QUEUE",
    "RemoteGradingError",
    "ensure_queue_tables",
    "queue_app",
    "queue_conninfo",
]
