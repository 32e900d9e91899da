"""``qkv lessons``: list the chapters and lessons, and validate lesson content."""

from __future__ import annotations

from pathlib import Path

import click

from qkv.lessons import LessonError, load_catalog, validate


@click.group("lessons")
def lessons() -> None:
    """List the lessons, or check lesson files for mistakes."""


@lessons.command("list")
@click.option(
    "--path",
    type=click.Path(path_type=Path),
    default=None,
    help="A content folder to list instead of the lessons shipped with qkv.",
)
def list_lessons(path: Path | None) -> None:
    """List every chapter and its lessons, written or planned, with each exercise's id.

    An exercise id (LESSON/EXERCISE) is what `qkv check FILE --exercise ID` takes.
    """
    try:
        catalog = load_catalog(path)
    except LessonError as error:
        for problem in error.problems or ():
            click.echo(str(problem), err=True)
        if not error.problems:
            click.echo(str(error), err=True)
        raise SystemExit(1) from None
    written = {lesson.id: lesson for lesson in catalog.lessons}
    for chapter in catalog.chapters:
        click.echo(f"{chapter.id}  {chapter.title}")
        for planned in chapter.planned:
            lesson = written.get(planned.id)
            if lesson is None:
                click.echo(f"  {planned.id}  {planned.title}  (planned)")
            else:
                count = len(lesson.exercises)
                click.echo(f"  {lesson.id}  {lesson.title}  ({count} exercise{'s' if count != 1 else ''})")
                for exercise in lesson.exercises.values():
                    functions = f": {', '.join(exercise.functions)}" if exercise.kind == "code" else ""
                    click.echo(f"      {lesson.id}/{exercise.id} ({exercise.kind}{functions})")


@lessons.command("validate")
@click.argument("path", required=False, type=click.Path(path_type=Path))
def validate_lessons(path: Path | None) -> None:
    """Check lesson content (default: the lessons shipped with qkv); print file:line: message per problem.

    PATH may be a content folder, a chapter folder (with chapter.toml), a lesson folder or a lesson.md.
    Exits with status 1 when there are problems.
    """
    problems = validate(path)
    for problem in problems:
        click.echo(str(problem))
    if problems:
        click.echo(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} found.", err=True)
        raise SystemExit(1)
    click.echo(f"{path or 'The built-in lessons'}: no problems found.")
