"""``qkv instructor``: create instructors and print their one-time sign-in links; list and remove them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from qkv.cli.options import database_url_option, open_store, public_url_option

if TYPE_CHECKING:
    from qkv.store.instructors import InstructorDesk

_DATABASE = database_url_option
_URL = public_url_option("Where the instructor reaches the server (the start of the printed link).")


def _desk(database_url: str | None) -> InstructorDesk:
    return open_store(database_url).instructors


def _print_link(name: str, url: str, token: str) -> None:
    # The token is in the link's fragment: it never reaches a request line or an access log.
    from qkv.web.sign_in_links import instructor_sign_in_url

    click.echo(f"Sign-in link for {name} (works once, for 24 hours; keep it private):")
    click.echo(f"  {instructor_sign_in_url(url, token)}")


@click.group()
def instructor() -> None:
    """Instructors: who may open the class dashboard at /instructor."""


@instructor.command("add")
@click.argument("name")
@_DATABASE
@_URL
def add(name: str, database_url: str | None, url: str) -> None:
    """Create the instructor NAME and print a one-time sign-in link."""
    desk = _desk(database_url)
    try:
        record, token = desk.add(name)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    finally:
        desk.database.close()
    click.echo(f"Created the instructor {record.name}.")
    _print_link(record.name, url, token)


@instructor.command("link")
@click.argument("name")
@_DATABASE
@_URL
def link(name: str, database_url: str | None, url: str) -> None:
    """Print a new one-time sign-in link for the existing instructor NAME."""
    desk = _desk(database_url)
    try:
        token = desk.new_sign_in_token(name)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    finally:
        desk.database.close()
    _print_link(" ".join(name.split()), url, token)


@instructor.command("list")
@_DATABASE
def list_instructors(database_url: str | None) -> None:
    """List the instructors."""
    desk = _desk(database_url)
    try:
        found = desk.all()
    finally:
        desk.database.close()
    if not found:
        click.echo("No instructors yet; create one with 'qkv instructor add NAME'.")
    for record in found:
        click.echo(f"{record.name}  (since {record.created_at:%Y-%m-%d %H:%M} UTC)")


@instructor.command("remove")
@click.argument("name")
@_DATABASE
def remove(name: str, database_url: str | None) -> None:
    """Remove the instructor NAME; their sessions end on every server at once."""
    desk = _desk(database_url)
    try:
        removed = desk.remove(name)
    finally:
        desk.database.close()
    if not removed:
        raise click.ClickException(f"There is no instructor named {name!r}.")
    click.echo(f"Removed the instructor {' '.join(name.split())}; their sessions have ended.")
