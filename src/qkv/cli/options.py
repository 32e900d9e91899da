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
log_format_option = click.option(
    "--log-format",
    default="text",
    show_default=True,
    type=click.Choice(["text", "json"]),
    help="text: a line per record for people. json: one JSON object a line (time, level, logger, message; "
    "for a request its id, route template, status, duration and hashed learner), for a log collector.",
)
_LOGS = {"format": "text"}

_CREDITS = click.Choice(["full", "reduced", "none"])
# What a solve after help earns (``qkv.web.solution_credit.HelpPolicy``): ``qkv serve`` gives it to the LMS
# scores, the grid and the exports, and ``qkv progress export`` and ``qkv regrade`` take the same settings,
# so that what they write or send again is what the server would.
after_solution_credit_option = click.option(
    "--after-solution-credit",
    type=_CREDITS,
    default="reduced",
    show_default=True,
    help="What a solve after the reference solution was shown counts in the LMS score: 1 (full), half "
    "(reduced) or 0 (none). Such solves are marked in the gradebook and the exports either way.",
)
after_hint_credit_option = click.option(
    "--after-hint-credit",
    type=_CREDITS,
    default="full",
    show_default=True,
    help="What a solve after hints (and not after the reference solution) counts in the LMS score, the "
    "class grid and the LMS file: 1 (full), half (reduced) or 0 (none). Such solves are marked either way.",
)


def start_logging(level: str, log_format: str = "text") -> None:
    """Log at ``level`` (``--log-level``'s value) to standard error: each line its level and logger first,
    or with ``log_format="json"`` one JSON object a line (``qkv.web.http.json_logs``).

    Parameters
    ----------
    level : str
        ``debug``, ``info`` or ``warning``.
    log_format : str
        ``text`` or ``json``.
    """
    _LOGS["format"] = log_format
    if log_format == "json":
        from qkv.web.http import json_logs

        json_logs.install(level)
        return
    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")


def json_logging() -> bool:
    """Whether ``start_logging`` chose JSON lines."""
    return _LOGS["format"] == "json"


def say(message: str, *, err: bool = False) -> None:
    """What a long-running command tells its operator: a line on standard output (standard error with
    ``err``), or under ``--log-format json`` a log record (a warning with ``err``), so that every line of
    its output is JSON.

    Parameters
    ----------
    message : str
        The sentence.
    err : bool
        A warning rather than a note.
    """
    if json_logging():
        logging.getLogger("qkv.cli").log(logging.WARNING if err else logging.INFO, message)
    else:
        click.echo(message, err=err)


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
