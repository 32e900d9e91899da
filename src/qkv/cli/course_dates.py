"""``qkv courses due | dates | extend | extensions | unextend``: a course's due dates, closes, late credit and
learners' extensions (docs/instructor.md, "Dates").

WHEN is ``YYYY-MM-DD HH:MM`` in the course's time zone (``--timezone`` sets it; until then the server's), an
ISO 8601 time with its own offset, or a bare date (its end, 23:59). Every time is stored in UTC.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

import click

from qkv.cli.options import database_url_option, opened_store

if TYPE_CHECKING:
    from qkv.store import Store

_DATABASE = database_url_option
_CONTENT = click.option(
    "--content",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The lessons the server serves, if not the built-in ones (the lesson ids are checked against them).",
)


def _check_course(store: Store, course_id: str) -> None:
    if store.courses.get(course_id) is None:
        raise click.ClickException(
            f"There is no course with the id {course_id!r}; 'qkv courses list' shows the courses and their "
            "ids."
        )


def _check_lesson(content: Path | None, lesson_id: str) -> None:
    from qkv.lessons import LessonError, load_catalog

    try:
        load_catalog(content).lesson(lesson_id)
    except LessonError as error:
        raise click.ClickException(str(error)) from None


def _when(text: str, zone: tzinfo) -> datetime:
    from qkv.store import parse_when

    try:
        return parse_when(text, zone)
    except ValueError as error:
        raise click.ClickException(str(error)) from None


def shown(moment: datetime | None, zone: tzinfo) -> str:
    """A stored UTC moment in the course's zone (``local_text``)."""
    from qkv.store.instructor.due_dates import local_text

    return local_text(moment, zone)


def _zone(store: Store, course_id: str, timezone: str | None) -> tzinfo:
    if timezone is not None:
        try:
            store.due_dates.set_time_zone(course_id, timezone)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    return store.due_dates.time_zone(course_id)


def _credit_words(credit: float) -> str:
    if credit >= 1.0:
        return "late work counts in full"
    if credit <= 0.0:
        return "late work earns nothing"
    return f"late work counts at {credit:g}"


@click.command("due")
@click.argument("course")
@click.argument("lesson")
@click.argument("when", required=False)
@click.option("--close", "close", metavar="WHEN", help="A hard close: work after it earns nothing.")
@click.option(
    "--late-credit", type=float, default=1.0, show_default=True, help="What late work earns, from 0 to 1."
)
@click.option(
    "--timezone", help="The course's time zone (an IANA name such as Europe/Paris), kept for the course."
)
@click.option("--clear", is_flag=True, help="Take the lesson's dates (and its extensions) away.")
@_CONTENT
@_DATABASE
def due(
    course: str,
    lesson: str,
    when: str | None,
    close: str | None,
    late_credit: float,
    timezone: str | None,
    clear: bool,
    content: Path | None,
    database_url: str | None,
) -> None:
    """Make LESSON of COURSE due at WHEN (in the course's time zone), optionally closing at --close."""
    with opened_store(database_url) as store:
        _check_course(store, course)
        _check_lesson(content, lesson)
        zone = _zone(store, course, timezone)
        if clear:
            gone = store.due_dates.clear_due(course, lesson)
            click.echo(f"The lesson {lesson} has {'no more' if gone else 'no'} due date in this course.")
            return
        if when is None:
            raise click.ClickException("Say when the lesson is due: qkv courses due COURSE LESSON WHEN.")
        due_at = _when(when, zone)
        close_at = None if close is None else _when(close, zone)
        try:
            store.due_dates.set_due(course, lesson, due_at, close_at, late_credit)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    closes = "" if close_at is None else f", closes {shown(close_at, zone)}"
    click.echo(f"{lesson} is due {shown(due_at, zone)}{closes}; {_credit_words(late_credit)}.")


@click.command("dates")
@click.argument("course")
@_DATABASE
def dates(course: str, database_url: str | None) -> None:
    """List COURSE's due dates, closes and late credit, in the course's time zone."""
    with opened_store(database_url) as store:
        _check_course(store, course)
        zone = store.due_dates.time_zone(course)
        found = store.due_dates.for_course(course)
    if not found:
        click.echo(
            "No lesson of this course has a due date; set one with 'qkv courses due COURSE LESSON WHEN'."
        )
    for item in found:
        click.echo(
            f"{item.lesson_id}  due {shown(item.due_at, zone)}  closes {shown(item.close_at, zone)}  "
            f"{_credit_words(item.late_credit)}"
        )


def _check_learner(store: Store, course: str, learner: str) -> None:
    if not store.courses.is_member(course, learner):
        raise click.ClickException(
            f"The learner {learner!r} is not in this course; give the learner id the instructor's view shows."
        )


@click.command("extend")
@click.argument("course")
@click.argument("learner")
@click.argument("lesson")
@click.option("--until", metavar="WHEN", help="The learner's new due date.")
@click.option("--days", type=int, help="Days after the course's due date.")
@_DATABASE
def extend(
    course: str, learner: str, lesson: str, until: str | None, days: int | None, database_url: str | None
) -> None:
    """Give LEARNER of COURSE a later due date for LESSON (their close, if any, moves as far)."""
    from qkv.store import DatesInForce
    from qkv.store.instructor.due_dates import extension_until

    with opened_store(database_url) as store:
        _check_course(store, course)
        _check_learner(store, course, learner)
        zone = store.due_dates.time_zone(course)
        existing = store.due_dates.due(course, lesson)
        if existing is None:
            raise click.ClickException(
                f"The lesson {lesson!r} has no due date in this course, so there is nothing to extend; set "
                "one first with 'qkv courses due'."
            )
        try:
            moment = None if until is None else _when(until, zone)
            ends = extension_until(existing.due_at, until=moment, days=days)
            store.due_dates.extend(course, learner, lesson, ends)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        now_in_force: DatesInForce | None = store.due_dates.in_force(course, learner, lesson)
    assert now_in_force is not None
    closes = "" if now_in_force.close_at is None else f", closing {shown(now_in_force.close_at, zone)}"
    click.echo(f"{learner} now has {lesson} due {shown(now_in_force.due_at, zone)}{closes}.")


@click.command("extensions")
@click.argument("course")
@_DATABASE
def extensions(course: str, database_url: str | None) -> None:
    """List COURSE's extensions: learner, lesson, new due date."""
    from qkv.store import LearnerScope

    with opened_store(database_url) as store:
        _check_course(store, course)
        zone = store.due_dates.time_zone(course)
        found = store.due_dates.extensions(course)
        names = {
            learner.id: learner.display_name
            for learner in store.instructors.within(LearnerScope(course)).learners()
        }
    if not found:
        click.echo("No learner of this course has an extension.")
    for item in found:
        name = names.get(item.learner_id) or "(no name)"
        click.echo(f"{item.learner_id}  {name}  {item.lesson_id}  until {shown(item.until_at, zone)}")


@click.command("unextend")
@click.argument("course")
@click.argument("learner")
@click.argument("lesson")
@_DATABASE
def unextend(course: str, learner: str, lesson: str, database_url: str | None) -> None:
    """Revoke LEARNER's extension of LESSON in COURSE: the course's dates hold for them again."""
    with opened_store(database_url) as store:
        _check_course(store, course)
        gone = store.due_dates.unextend(course, learner, lesson)
    if not gone:
        raise click.ClickException(f"The learner {learner!r} has no extension of {lesson!r} in this course.")
    click.echo(f"Revoked {learner}'s extension of {lesson}: the course's dates hold for them again.")


def register(group: click.Group) -> None:
    """Add the date commands to ``qkv courses``."""
    for command in (due, dates, extend, extensions, unextend):
        group.add_command(command)


__all__ = ["register", "shown"]
