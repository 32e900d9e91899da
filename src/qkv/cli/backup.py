"""``qkv backup FILE`` and ``qkv restore FILE``: a copy of the class's database, taken while servers run,
and the database made again from it."""

from __future__ import annotations

from pathlib import Path

import click

from qkv.cli.options import database_url_option


def _size(size: int) -> str:
    """A file size for people.

    Examples
    --------
    >>> _size(512), _size(3 * 1024 * 1024)
    ('512 bytes', '3.0 MiB')
    """
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, writable=True, path_type=Path))
@database_url_option
def backup(file: Path, database_url: str | None) -> None:
    """Copy the database into FILE while servers keep running (SQLite: the online backup; PostgreSQL:
    pg_dump's custom format). FILE is replaced only once the copy is complete, and is readable by its
    owner only: it holds every learner's work and the cookie-signing key."""
    from qkv.store import StoreError, default_database_url
    from qkv.store.sql.backup import backup as take_backup

    try:
        report = take_backup(database_url or default_database_url(), file)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"Backed up {report.database} (schema version {report.schema_version}) into {file} "
        f"({_size(report.size)})."
    )


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@database_url_option
def restore(file: Path, database_url: str | None) -> None:
    """Make the database again from FILE, a backup 'qkv backup' wrote, in a new SQLite file or an empty
    PostgreSQL database (never over an existing one). Start 'qkv serve' on it afterwards; a backup from
    an older qkv is upgraded then."""
    from qkv.store import StoreError, default_database_url
    from qkv.store.sql.backup import restore as restore_backup

    try:
        report = restore_backup(file, database_url or default_database_url())
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Restored {file} (schema version {report.schema_version}) into {report.database}.")
