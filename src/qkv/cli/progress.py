"""``qkv progress export``: the gradebook, one row per learner and exercise, as CSV or JSON."""

from __future__ import annotations

from typing import TextIO

import click

from qkv.cli.options import after_hint_credit_option, after_solution_credit_option, database_url_option


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
@after_solution_credit_option
@after_hint_credit_option
@click.option(
    "--course",
    default=None,
    help="Only this course's learners, with its due dates: late solves marked, and credited as it says.",
)
@click.option(
    "--output",
    "-o",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="File to write (default: stdout).",
)
def export(
    fmt: str,
    database_url: str | None,
    after_solution_credit: str,
    after_hint_credit: str,
    course: str | None,
    output: TextIO,
) -> None:
    """Print the gradebook: one row per learner and exercise, with attempts and whether it is solved.

    ``--format lms`` prints one row per learner with the exercises solved per lesson (the layout of
    Moodle's CSV grade import); ``--format events`` every answer and program with its time,
    exercise, correctness and named mistake, and every hint (``hint``) and reference solution
    (``solution``) shown. Every CSV cell is made spreadsheet-safe. With ``--course``, the course's learners
    only, and its due dates: the gradebook marks each solve ``late`` with its ``late_credit``, the LMS file
    weighs late solves by it (nothing after the close), the events have the due date in force (``due_at``).
    """
    from qkv.store import LearnerScope, Store, StoreError, default_database_url  # SQLAlchemy only here
    from qkv.web.instructor.exports import write_gradebook  # the instructor's download, the same code
    from qkv.web.instructor.late_work import LateWork

    url = database_url or default_database_url()
    try:
        store = Store(url, must_exist=True)
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    try:
        if course is not None and store.courses.get(course) is None:
            raise click.ClickException(f"There is no course {course!r}; 'qkv courses list' shows them.")
        late = LateWork.of_course(store, course)
        scope = None if course is None else LearnerScope(course)
        if fmt in {"lms", "events"}:
            _write_class_file(store, fmt, output, (after_solution_credit, after_hint_credit), scope, late)
            return
        gradebook = store.gradebook if scope is None else store.gradebook.within(scope)
        rows = gradebook.rows(_catalog_exercises())
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    finally:
        store.close()
    write_gradebook(rows, fmt, output, late)
    if not rows:
        click.echo("No learner has saved any work yet.", err=True)


def _write_class_file(
    store: object,
    fmt: str,
    output: TextIO,
    credit: tuple[str, str] = ("reduced", "full"),
    scope: object = None,
    late: object = None,
) -> None:
    """The LMS import file or the event log, written by the same code as the instructor's downloads (of
    ``scope``'s learners, with ``late``: their course's dates, when given)."""
    from qkv.lessons import load_catalog
    from qkv.store import EVERYONE, LearnerScope, Store
    from qkv.web.instructor.exports import catalog_exercises, write_events, write_lms
    from qkv.web.instructor.late_work import LateWork
    from qkv.web.solution_credit import AfterSolutionCredit, HelpPolicy

    assert isinstance(store, Store)
    within = scope if isinstance(scope, LearnerScope) else EVERYONE
    dates = late if isinstance(late, LateWork) else None
    desk = store.instructors.within(within)
    if fmt == "lms":
        catalog = load_catalog()
        rows = store.gradebook.within(within).rows(catalog_exercises(catalog))
        policy = HelpPolicy(AfterSolutionCredit(credit[0]), AfterSolutionCredit(credit[1]))
        write_lms(catalog, rows, desk.learners(), output, policy, dates)
    else:
        notes = store.mistakes.shown(within)  # the instructors' notes shown, among the events
        write_events(
            desk.answer_events(),
            desk.code_events(),
            desk.learners(),
            output,
            desk.help_events(),
            notes,
            dates,
        )
