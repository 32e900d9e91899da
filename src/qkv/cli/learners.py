"""``qkv learners``: a class roster becomes accounts with personal one-time sign-in links.

``import ROSTER.csv`` checks the whole roster first (every bad row is named by its line, and nothing is
imported unless all are good), then creates the accounts and writes a CSV of their links; ``link ID`` makes
a new link for one learner; ``list`` shows the accounts; ``export ID`` and ``erase ID`` answer a learner's
request for their data (``learner_data.py``).
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import click

from qkv.cli.learner_data import erase_learner, export_learner
from qkv.cli.options import database_url_option, opened_store, public_url_option

if TYPE_CHECKING:
    from qkv.store import Store

_DATABASE = database_url_option
_URL = public_url_option("Where learners reach the server (the start of each link).")
_DAYS = click.option(
    "--days",
    type=click.IntRange(1, 90),
    default=7,
    show_default=True,
    help="How many days each link works (it works once).",
)
_COLUMNS = ["name", "external_id", "email", "sign_in_link", "expires_at_utc"]


def _read_roster(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a spreadsheet's "CSV UTF-8" starts with a BOM
    except UnicodeDecodeError as error:
        line, byte = error.object[: error.start].count(b"\n") + 1, error.object[error.start]
        raise click.ClickException(
            f"The roster {path} is not UTF-8 text (line {line} has the byte {byte:#04x}); "
            "save it from the spreadsheet as 'CSV UTF-8'."
        ) from None
    except OSError as error:
        raise click.ClickException(f"Cannot read the roster {path}: {error.strerror}.") from None


def _write_private(path: Path, rows: list[dict[str, object]]) -> None:
    """Write the links CSV readable by its owner only: each link signs a learner in."""
    from qkv.store.instructor.exports import write_csv

    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(descriptor, "w", encoding="utf-8", newline="") as stream:
            write_csv(rows, _COLUMNS, stream)
    except OSError as error:
        raise click.ClickException(f"Cannot write the links to {path}: {error.strerror}.") from None


@click.group()
def learners() -> None:
    """Learner accounts: import a class roster and hand out personal sign-in links."""


learners.add_command(export_learner)
learners.add_command(erase_learner)


def _check_course(store: Store, course_id: str | None) -> None:
    if course_id is not None and store.courses.get(course_id) is None:
        raise click.ClickException(
            f"There is no course with the id {course_id!r}; 'qkv courses list' lists them."
        )
    if course_id is None and store.courses.any():
        raise click.ClickException(
            "This server has courses: say which one the roster fills with --course ID ('qkv courses list')."
        )


@learners.command("import")
@click.argument("roster", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the links (default: ROSTER-links.csv beside the roster).",
)
@click.option(
    "--course",
    "course_id",
    default=None,
    help="The course (its id, from 'qkv courses list') the learners join; required on a server with courses.",
)
@_DAYS
@_DATABASE
@_URL
def import_roster(
    roster: Path, out: Path | None, course_id: str | None, days: int, database_url: str | None, url: str
) -> None:
    """Create an account for each row of ROSTER (columns: name, external id) and write their links.

    With --course ID the learners join that course only (the roster fills its course, no other).

    The first line names the columns ('name' and 'external id', optionally 'email'). Every bad row is
    reported by its line number and then nothing is imported. Importing again updates the names and makes
    new links.
    """
    from qkv.store import RosterError, parse_roster
    from qkv.web.http.sign_in_links import sign_in_url

    try:
        entries = parse_roster(_read_roster(roster))
    except RosterError as error:
        raise click.ClickException(f"{roster}: {error}") from None
    destination = out or roster.with_name(f"{roster.stem}-links.csv")
    with opened_store(database_url) as store:
        try:
            _check_course(store, course_id)
            made = store.accounts.import_roster(entries, timedelta(days=days))
            if course_id is not None:
                from qkv.store.instructor.courses import MembershipSource

                for record, _ in made:
                    store.courses.enrol(course_id, record.learner_id, MembershipSource.ROSTER)
        except ValueError as error:
            raise click.ClickException(f"{roster}: {error} Nothing was imported.") from None
    from qkv.store.sql.clock import utc_now

    until = (utc_now() + timedelta(days=days)).strftime("%Y-%m-%d %H:%M")
    rows: list[dict[str, object]] = [
        {
            "name": record.display_name,
            "external_id": record.external_id,
            "email": record.email,
            "sign_in_link": sign_in_url(url, token),
            "expires_at_utc": until,
        }
        for record, token in made
    ]
    _write_private(destination, rows)
    click.echo(f"Imported {len(made)} learner{'' if len(made) == 1 else 's'} from {roster}.")
    click.echo(
        f"Their personal sign-in links are in {destination} (each works once, for {days} days; "
        "keep the file private and give each learner their own link)."
    )


@learners.command("link")
@click.argument("external_id")
@_DAYS
@_DATABASE
@_URL
def link(external_id: str, days: int, database_url: str | None, url: str) -> None:
    """Print a new one-time sign-in link for the learner whose external id is EXTERNAL_ID."""
    from qkv.web.http.sign_in_links import sign_in_url

    with opened_store(database_url) as store:
        found = store.accounts.find(None, external_id)
        if found is None:
            raise click.ClickException(
                f"No learner of the roster has the external id {external_id!r}; "
                "import them with 'qkv learners import ROSTER.csv'."
            )
        token = store.accounts.new_sign_in_token(found.learner_id, timedelta(days=days))
    who = found.display_name or found.external_id
    click.echo(f"Sign-in link for {who} (works once, for {days} days; keep it private):")
    click.echo(f"  {sign_in_url(url, token)}")


@learners.command("list")
@_DATABASE
def list_learners(database_url: str | None) -> None:
    """List the learner accounts (roster and LMS), with their external ids."""
    with opened_store(database_url) as store:
        found = store.accounts.all()
    if not found:
        click.echo("No learner accounts yet; import a roster with 'qkv learners import ROSTER.csv'.")
    for record in found:
        where = f" at {record.issuer}" if record.issuer else ""
        click.echo(f"{record.display_name or '(no name)'}  {record.external_id}{where}")
