"""``qkv progress export``: the gradebook, one row per learner and exercise, as CSV or JSON."""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from qkv.store import GradebookRow

COLUMNS = [
    "learner_id",
    "display_name",
    "lesson_id",
    "exercise_id",
    "attempts",
    "submissions",
    "solved",
    "best_score",
    "first_solved_at",
    "last_activity_at",
]


def _catalog_exercises() -> list[tuple[str, str]]:
    """Every exercise of the built-in lessons, so untouched ones get a row too."""
    try:
        from qkv.lessons import load_catalog

        catalog = load_catalog()
    except Exception:  # the gradebook still lists every exercise with saved work
        return []
    return [(lesson.id, exercise_id) for lesson in catalog.lessons for exercise_id in lesson.exercises]


@click.group()
def progress() -> None:
    """Learners' saved progress."""


@progress.command("export")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option(
    "--database-url", envvar="QKV_DATABASE_URL", help="The server's database (default: the local one)."
)
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="File to write (default: stdout).",
)
def export(fmt: str, database_url: str | None, output: TextIO) -> None:
    """Print the gradebook: one row per learner and exercise, with attempts and whether it is solved."""
    from qkv.store import Store, StoreError, default_database_url  # SQLAlchemy only for this command

    url = database_url or default_database_url()
    try:
        store = Store(url, must_exist=True)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    try:
        rows = store.gradebook(_catalog_exercises())
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    finally:
        store.close()
    write_gradebook(rows, fmt, output)
    if not rows:
        click.echo("No learner has saved any work yet.", err=True)


def write_gradebook(rows: list[GradebookRow], fmt: str, stream: TextIO) -> None:
    """Write ``rows`` to ``stream`` as CSV (with a header) or as a JSON array of objects."""
    records = [row.to_dict() for row in rows]
    if fmt == "json":
        json.dump(records, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: spreadsheet_safe(record[key]) for key in COLUMNS})


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A CSV cell that a spreadsheet shows as text instead of running it as a formula (OWASP's advice).

    Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading apostrophe;
    numbers stay numbers.

    Examples
    --------
    >>> print(spreadsheet_safe('=HYPERLINK("http://x")'), spreadsheet_safe("Ada"), spreadsheet_safe(-3))
    '=HYPERLINK("http://x") Ada -3
    >>> spreadsheet_safe(None)
    ''
    """
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
