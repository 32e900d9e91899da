"""Options and helpers shared by the commands that work on a server's database, and by the long-running ones.

``--database-url`` and ``--url`` mean the same in ``qkv instructor``, ``qkv learners``, ``qkv lti`` and
``qkv progress``, so they are written once here; so is opening the store with a sentence, not a
traceback, when the database cannot be used, and closing it when the command is done. ``--log-level``
and the log lines' format are those of ``qkv serve`` and ``qkv grader`` both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from qkv.store import Store

database_url_option = click.option(
    "--database-url", envvar="QKV_DATABASE_URL", help="The server's database (default: the local one)."
)


log_level_option = click.option(
    "--log-level", default="info", show_default=True, type=click.Choice(["debug", "info", "warning"])
)


def start_logging(level: str) -> None:
    """Log at ``level`` (``--log-level``'s value) to standard error, each line its level and logger first.

    Parameters
    ----------
    level : str
        ``debug``, ``info`` or ``warning``.
    """
    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")


def public_url_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--url``: where people reach the server, the start of every link a command prints.

    Parameters
    ----------
    help : str
        What the URL is for, in this command's words.

    Returns
    -------
    callable
        The click option decorator.
    """
    return click.option(
        "--url", envvar="QKV_PUBLIC_URL", default="http://127.0.0.1:8000", show_default=True, help=help
    )


def open_store(database_url: str | None) -> Store:
    """The store at ``database_url`` (or the local default), or a ClickException with the store's sentence.

    Parameters
    ----------
    database_url : str or None
        A SQLAlchemy URL; None means the local SQLite database.

    Returns
    -------
    Store
        The opened, migrated store.

    Raises
    ------
    click.ClickException
        If the database cannot be opened or migrated.
    """
    from qkv.store import Store, StoreError, default_database_url

    try:
        return Store(database_url or default_database_url())
    except StoreError as error:
        raise click.ClickException(str(error)) from None


@contextmanager
def opened_store(database_url: str | None) -> Iterator[Store]:
    """The store at ``database_url``, open for a ``with`` block and closed when it ends, however it ends.

    Parameters
    ----------
    database_url : str or None
        A SQLAlchemy URL; None means the local SQLite database.

    Yields
    ------
    Store
        The opened, migrated store (see ``open_store``).

    Raises
    ------
    click.ClickException
        If the database cannot be opened or migrated.

    Examples
    --------
    >>> with opened_store("sqlite://") as store:
    ...     store.ping()
    """
    store = open_store(database_url)
    try:
        yield store
    finally:
        store.close()
