"""``qkv progress export``: the gradebook, one row per learner and exercise, as CSV or JSON."""

from __future__ import annotations

from typing import TextIO

import click

from qkv.cli.options import database_url_option


def _catalog_exercises() -> list[tuple[str, str]]:
    """Every exercise of the built-in lessons, so untouched ones get a row too."""
    from qkv.web.instructor.exports import catalog_exercises

    try:
        from qkv.lessons import load_catalog

        catalog = load_catalog()
    except Exception:  # the gradebook still lists every exercise with saved work
        return []
    return catalog_exercises(catalog)


@click.group()
def progress() -> None:
    """Learners' saved progress."""


@progress.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "json", "lms", "events"]),
    default="csv",
    show_default=True,
    help="csv, json: the gradebook; lms: a row per learner for an LMS; events: every answer and program.",
)
@database_url_option
@click.option(
    "--after-solution-credit",
    type=click.Choice(["full", "reduced", "none"]),
    default="reduced",
    show_default=True,
    help="--format lms: what a solve after the reference solution was shown counts (1, half, 0).",
)
@click.option(
    "--after-hint-credit",
    type=click.Choice(["full", "reduced", "none"]),
    default="full",
    show_default=True,
    help="--format lms: what a solve after hints (not after the solution) counts (1, half, 0).",
)
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="File to write (default: stdout).",
)
def export(
    fmt: str, database_url: str | None, after_solution_credit: str, after_hint_credit: str, output: TextIO
) -> None:
    """Print the gradebook: one row per learner and exercise, with attempts and whether it is solved.

    ``--format lms`` prints one row per learner with the exercises solved per lesson (the layout of
    Moodle's CSV grade import); ``--format events`` every answer and program with its time,
    exercise, correctness and named mistake, and every hint (``hint``) and reference solution
    (``solution``) shown. Every CSV cell is made spreadsheet-safe.
    """
    from qkv.store import Store, StoreError, default_database_url  # SQLAlchemy only for this command
    from qkv.web.instructor.exports import write_gradebook  # the instructor's download, the same code

    url = database_url or default_database_url()
    try:
        store = Store(url, must_exist=True)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    try:
        if fmt in {"lms", "events"}:
            _write_class_file(store, fmt, output, (after_solution_credit, after_hint_credit))
            return
        rows = store.gradebook.rows(_catalog_exercises())
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    finally:
        store.close()
    write_gradebook(rows, fmt, output)
    if not rows:
        click.echo("No learner has saved any work yet.", err=True)


def _write_class_file(
    store: object, fmt: str, output: TextIO, credit: tuple[str, str] = ("reduced", "full")
) -> None:
    """The LMS import file or the event log, written by the same code as the instructor's downloads."""
    from qkv.lessons import load_catalog
    from qkv.store import EVERYONE, Store
    from qkv.web.instructor.exports import catalog_exercises, write_events, write_lms
    from qkv.web.learner.solution_credit import AfterSolutionCredit, HelpPolicy

    assert isinstance(store, Store)
    desk = store.instructors
    if fmt == "lms":
        catalog = load_catalog()
        rows = store.gradebook.rows(catalog_exercises(catalog))
        policy = HelpPolicy(AfterSolutionCredit(credit[0]), AfterSolutionCredit(credit[1]))
        write_lms(catalog, rows, desk.learners(), output, policy)
    else:
        notes = store.mistakes.shown(EVERYONE)  # the instructors' notes shown, among the events
        write_events(
            desk.answer_events(), desk.code_events(), desk.learners(), output, desk.help_events(), notes
        )
