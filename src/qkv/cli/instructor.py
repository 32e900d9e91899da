"""``qkv instructor``: create instructors and print their one-time sign-in links; list and remove them.

An instructor has courses: ``--course ID`` (as its instructor, or ``--role teaching-assistant``) or every
course of the server, ``--all-courses`` (an administrator). On a server with courses, ``add`` needs one
of the two; on a server with no course at all, an instructor made without either sees every learner,
as before courses.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from qkv.cli.options import database_url_option, opened_store, public_url_option

if TYPE_CHECKING:
    from qkv.store.instructor.instructors import InstructorDesk

_DATABASE = database_url_option
_URL = public_url_option("Where the instructor reaches the server (the start of the printed link).")


@contextmanager
def _desk(database_url: str | None) -> Iterator[InstructorDesk]:
    """The instructors of the store at ``database_url``, for a ``with`` block that closes the store."""
    with opened_store(database_url) as store:
        yield store.instructors


_COURSE = click.option(
    "--course",
    "course_id",
    default=None,
    help="A course (its id, from 'qkv courses list') the instructor gets.",
)
_ALL_COURSES = click.option(
    "--all-courses", is_flag=True, help="Every course of the server, and every learner (an administrator)."
)
_ROLE = click.option(
    "--role",
    type=click.Choice(["instructor", "teaching-assistant"]),
    default="instructor",
    show_default=True,
    help="The role in --course (a teaching assistant sees the class and its exports, and acts for nobody).",
)


def _grant(desk: InstructorDesk, name: str, course_id: str | None, all_courses: bool, role: str) -> str:
    """Give the instructor NAME the course or every course; a sentence saying what they have now."""
    from qkv.store.instructor.courses import Courses, StaffRole

    found = desk.find(name)
    if found is None:
        raise click.ClickException(
            f"There is no instructor named {name!r}; create one with 'qkv instructor add'."
        )
    courses = Courses(desk.database)
    if all_courses:
        courses.grant_all_courses(found.id)
        return f"{found.name} has every course of the server (an administrator)."
    if course_id is not None:
        staff_role = StaffRole.TEACHING_ASSISTANT if role == "teaching-assistant" else StaffRole.INSTRUCTOR
        try:
            courses.set_staff(course_id, found.id, staff_role)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
        title = courses.get(course_id).title  # type: ignore[union-attr]
        return f"{found.name} is {role.replace('-', ' ')} of the course {title!r}."
    return ""


def _check_flags(desk: InstructorDesk, course_id: str | None, all_courses: bool, *, required: bool) -> None:
    from qkv.store.instructor.courses import Courses

    if course_id is not None and all_courses:
        raise click.ClickException("Give either --course ID or --all-courses, not both.")
    if course_id is not None and Courses(desk.database).get(course_id) is None:
        raise click.ClickException(
            f"There is no course with the id {course_id!r}; 'qkv courses list' lists them."
        )
    if required and course_id is None and not all_courses and Courses(desk.database).any():
        raise click.ClickException(
            "This server has courses: say which the instructor gets with --course ID ('qkv courses list'), "
            "or --all-courses for an administrator."
        )


def _print_link(name: str, url: str, token: str) -> None:
    # The token is in the link's fragment: it never reaches a request line or an access log.
    from qkv.web.http.sign_in_links import instructor_sign_in_url

    click.echo(f"Sign-in link for {name} (works once, for 24 hours; keep it private):")
    click.echo(f"  {instructor_sign_in_url(url, token)}")


@click.group()
def instructor() -> None:
    """Instructors: who may open the class dashboard at /instructor."""


@instructor.command("add")
@click.argument("name")
@_COURSE
@_ALL_COURSES
@_ROLE
@_DATABASE
@_URL
def add(
    name: str, course_id: str | None, all_courses: bool, role: str, database_url: str | None, url: str
) -> None:
    """Create the instructor NAME of --course ID (or --all-courses) and print a one-time sign-in link."""
    with _desk(database_url) as desk:
        try:
            _check_flags(desk, course_id, all_courses, required=True)
            record, token = desk.add(name)
            granted = _grant(desk, record.name, course_id, all_courses, role)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"Created the instructor {record.name}.")
    if granted:
        click.echo(granted)
    _print_link(record.name, url, token)


@instructor.command("link")
@click.argument("name")
@_COURSE
@_ALL_COURSES
@_ROLE
@_DATABASE
@_URL
def link(
    name: str, course_id: str | None, all_courses: bool, role: str, database_url: str | None, url: str
) -> None:
    """Print a new one-time sign-in link for the existing instructor NAME (giving them --course ID or
    --all-courses as well, if said)."""
    with _desk(database_url) as desk:
        try:
            _check_flags(desk, course_id, all_courses, required=False)
            token = desk.new_sign_in_token(name)
            granted = _grant(desk, name, course_id, all_courses, role)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    if granted:
        click.echo(granted)
    _print_link(" ".join(name.split()), url, token)


@instructor.command("list")
@_DATABASE
def list_instructors(database_url: str | None) -> None:
    """List the instructors."""
    with _desk(database_url) as desk:
        found = desk.all()
    if not found:
        click.echo("No instructors yet; create one with 'qkv instructor add NAME'.")
    for record in found:
        rights = "every course" if record.all_courses else "its courses"
        click.echo(f"{record.name}  (since {record.created_at:%Y-%m-%d %H:%M} UTC; {rights})")


@instructor.command("remove")
@click.argument("name")
@_DATABASE
def remove(name: str, database_url: str | None) -> None:
    """Remove the instructor NAME; their sessions end on every server at once."""
    with _desk(database_url) as desk:
        removed = desk.remove(name)
    if not removed:
        raise click.ClickException(f"There is no instructor named {name!r}.")
    click.echo(f"Removed the instructor {' '.join(name.split())}; their sessions have ended.")
