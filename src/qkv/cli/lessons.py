"""``qkv lessons``: list the chapters and lessons, validate lesson content, start a lesson and check one."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from qkv.lessons import BUILTIN_CONTENT, LessonError, load_catalog, validate


def _content_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--content``: a content folder the command works on instead of qkv's built-in lessons."""
    return click.option(
        "--content", type=click.Path(path_type=Path, file_okay=False), default=None, help=help
    )


def _corpora_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--corpora``: a folder of the lessons' corpora by lesson id; unless said, each lesson's corpus/."""
    return click.option(
        "--corpora",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help=help + " Unless given, each lesson's corpus is the corpus/ folder in its own folder.",
    )


@click.group("lessons")
def lessons() -> None:
    """List the lessons, check lesson files for mistakes, or start a new lesson."""


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


@lessons.command("new")
@click.argument("lesson_id", metavar="ID")
@click.argument("title")
@_content_option(
    "A content folder (or chapter folder) to add the lesson to, instead of qkv's built-in chapter."
)
@_corpora_option(
    "A folder of the lessons' corpora by lesson id, where the lesson's corpus folder is written."
)
@click.option("--widget", default=None, help="Also write a widget of the lesson's own, with this name.")
def new_lesson(
    lesson_id: str, title: str, content: Path | None, corpora: Path | None, widget: str | None
) -> None:
    """Start lesson ID, titled TITLE: a folder that validates, with its tests and its corpus.

    The folder (lesson.md with one exercise of each kind, lesson.py, grading.py, and with --widget a
    widget folder) joins the chapter whose id starts ID (L4.8 joins L4); its tests/ holds the lesson's own
    tests (its corpus graded, a walk in the browser) and its corpus/ right and wrong programs for the code
    exercise. Replace the example texts with the lesson's own, then run
    `qkv lessons check ID`.
    """
    from qkv.lessons.scaffold import write_new_lesson

    try:
        chapter = _chapter_for(lesson_id, content or BUILTIN_CONTENT)
        written = write_new_lesson(chapter, corpora, lesson_id, title, widget=widget)
    except LessonError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"Lesson {lesson_id} written:")
    for path in written.files:
        click.echo(f"  {path}")
    click.echo(
        f"Next: write its page in {written.folder / 'lesson.md'}, its numbers in lesson.py and its hidden "
        f"tests in grading.py (docs/lessons.md), then run: qkv lessons check {lesson_id}"
        + (f" --content {content}" if content else "")
        + (f" --corpora {corpora}" if corpora else "")
    )


def _chapter_for(lesson_id: str, content: Path) -> Path:
    """The chapter folder of ``content`` whose id starts the lesson's id (``L4`` for ``L4.8``)."""
    chapters = [content] if (content / "chapter.toml").is_file() else sorted(content.glob("*/chapter.toml"))
    folders = [path if path.is_dir() else path.parent for path in chapters]
    ids = {}
    for folder in folders:
        text = (folder / "chapter.toml").read_text(encoding="utf-8")
        found = re.search(r'^id\s*=\s*"([^"]+)"', text, re.M)
        if found:
            ids[found.group(1)] = folder
    chapter_id = lesson_id.rsplit(".", 1)[0]
    if chapter_id not in ids:
        known = ", ".join(sorted(ids)) or "none"
        raise LessonError(
            f"No chapter of {content} has the id {chapter_id!r}, which lesson {lesson_id!r} would join "
            f"(its chapters: {known}); a lesson's id is its chapter's id, a dot and a number."
        )
    return ids[chapter_id]


@lessons.command("check")
@click.argument("lesson_id", metavar="[ID]", required=False)
@_content_option("A content folder to check instead of qkv's built-in lessons.")
@_corpora_option("The folder of the lessons' corpora.")
@click.option(
    "--no-browser", is_flag=True, help="Leave out the browser tests (the smoke walk, accessibility)."
)
def check_lesson(lesson_id: str | None, content: Path | None, corpora: Path | None, no_browser: bool) -> None:
    """Check lesson ID (default: every lesson) as the tests will: validation, lint, its tests, a browser.

    Runs the engine's full check, ruff over the lesson's folder and its corpus, tsc over its widget scripts,
    and the content tests that `make test` runs (pytest -m content, the browser walks too where Chromium
    is), for this lesson; each problem is said once, with what to do, and a failed test by its exception's
    last line. The tests run from qkv's repository (run the command there), and not at all on a lesson that
    fails validation.
    Exits with status 1 when a step fails.
    """
    from qkv.cli.lesson_check import find_target, run_checks

    try:
        target = find_target(lesson_id, content, corpora)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    steps = run_checks(target, browser=not no_browser, echo=click.echo)
    failed = [step.name for step in steps if not step.passed]
    if failed:
        click.echo(
            f"{len(failed)} step{'s' if len(failed) > 1 else ''} failed: {', '.join(failed)}.", err=True
        )
        raise SystemExit(1)
    click.echo(f"{lesson_id or 'Every lesson'}: every check that could run passed.")
