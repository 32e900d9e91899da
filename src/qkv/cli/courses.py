"""``qkv courses``: the classes one server holds — make one by hand, list them with their ids.

Courses from an LMS are made by their first launch; a course made here takes a roster
(``qkv learners import ROSTER.csv --course ID``) and its instructors
(``qkv instructor add NAME --course ID``).
"""

from __future__ import annotations

import click

from qkv.cli.course_dates import register
from qkv.cli.options import database_url_option, opened_store

_DATABASE = database_url_option


@click.group()
def courses() -> None:
    """Courses: the classes on this server, each with its learners and its instructors."""


@courses.command("create")
@click.argument("title")
@_DATABASE
def create(title: str, database_url: str | None) -> None:
    """Make the course TITLE by hand and print its id."""
    with opened_store(database_url) as store:
        try:
            record = store.courses.create(title)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    click.echo(f"Created the course {record.title!r} with the id {record.id}.")
    click.echo(
        f"Import its roster with 'qkv learners import ROSTER.csv --course {record.id}' and give it an "
        f"instructor with 'qkv instructor add NAME --course {record.id}'."
    )


@courses.command("list")
@_DATABASE
def list_courses(database_url: str | None) -> None:
    """List the courses: id, origin, learners and title."""
    with opened_store(database_url) as store:
        found = [(record, store.courses.member_count(record.id)) for record in store.courses.all()]
    if not found:
        click.echo(
            "No courses yet: every instructor sees every learner. Make one with 'qkv courses create TITLE', "
            "or launch qkv from an LMS course."
        )
    for record, members in found:
        where = f" from {record.issuer}" if record.issuer else ""
        click.echo(
            f"{record.id}  {record.origin.value}{where}  {members} learner{'' if members == 1 else 's'}  "
            f"{record.title}"
        )


register(courses)
