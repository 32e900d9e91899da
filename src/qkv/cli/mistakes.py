"""``qkv mistakes``: a class's failing programs grouped by behaviour, and the instructor's notes on them.

``list`` shows the groups (``--json`` for a program), ``name`` gives a group its one-sentence note (every
later program of the course with that behaviour gets it first), ``unname`` takes it away, and ``export``
writes a lesson's named notes as catalogue entries, each with a test program for the lesson's corpus.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from qkv.cli.options import database_url_option, opened_store
from qkv.store import Store
from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.instructor.mistake_group_records import MistakeGroup

_DATABASE = database_url_option
_COURSE = click.option(
    "--course",
    "course",
    default=None,
    help="The course (its id, as 'qkv courses list' shows); 'all' or none: every learner of the server.",
)


@click.group()
def mistakes() -> None:
    """A class's mistakes grouped by behaviour, and the notes that name them."""


def _scope(store: Store, course: str | None) -> tuple[LearnerScope, str]:
    """The learners a command reads and the key its notes are kept under."""
    if course is None or course == "all":
        return EVERYONE, ""
    if store.courses.get(course) is None:
        raise click.ClickException(f"There is no course {course!r}; 'qkv courses list' shows them.")
    return LearnerScope(course), course


@mistakes.command("list")
@click.option("--lesson", default=None, help="Only this lesson's groups (an id such as L9.1).")
@_COURSE
@click.option("--json", "as_json", is_flag=True, help="Print the groups as a JSON list.")
@_DATABASE
def list_groups(lesson: str | None, course: str | None, as_json: bool, database_url: str | None) -> None:
    """List the groups: unnamed first, the most learners first."""
    with opened_store(database_url) as store:
        scope, key = _scope(store, course)
        found = store.mistakes.groups(scope, key, lesson=lesson)
    if as_json:
        click.echo(json.dumps([group.to_dict() for group in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("No failing program has been grouped yet.")
    for group in found:
        named = f"  named: {group.sentence}" if group.state == "named" else ""
        proposed = f"  proposed: {group.sentence}" if group.state == "proposed" else ""
        click.echo(
            f"{group.id}  {group.lesson}/{group.exercise} {group.function}  {group.learners} learners, "
            f"{group.programs} programs{named}{proposed}\n    first message: {group.first_message}"
        )


def _course_of(store: Store, group: str, course: str | None) -> str:
    """The course whose note a command changes: ``--course``, else the one course whose learners made it."""
    if course is not None:
        return _scope(store, course)[1]
    made = store.mistakes.where_made(group)
    if made is None:
        raise click.ClickException(
            f"There is no group of mistakes {group!r}; 'qkv mistakes list' shows them."
        )
    courses, alone = made
    if len(courses) == 1 and not alone:
        return courses[0]
    if not courses:
        return ""
    raise click.ClickException(
        f"Learners of {len(courses)} courses made this mistake ({', '.join(courses)}); name the course with "
        "--course ID (or --course all for the learners in no course)."
    )


@mistakes.command("name")
@click.argument("group")
@click.argument("sentence")
@_COURSE
@click.option("--by", default="qkv mistakes", help="Who names it, as the page shows.")
@_DATABASE
def name_group(group: str, sentence: str, course: str | None, by: str, database_url: str | None) -> None:
    """Give GROUP the note SENTENCE: every later program of the course with its behaviour gets it first."""
    with opened_store(database_url) as store:
        key = _course_of(store, group, course)
        try:
            store.mistakes.name(key, group, sentence, by=by)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    click.echo(
        f"Named the group {group} {'for every learner in no course' if not key else f'in the course {key}'}."
    )


@mistakes.command("unname")
@click.argument("group")
@_COURSE
@_DATABASE
def unname_group(group: str, course: str | None, database_url: str | None) -> None:
    """Take GROUP's note away: later programs get the grader's own message again."""
    with opened_store(database_url) as store:
        key = _course_of(store, group, course)
        gone = store.mistakes.unname(key, group)
    click.echo(f"Took the note of {group} away." if gone else f"The group {group} had no note there.")


@mistakes.command("export")
@click.option(
    "--lesson", required=True, help="The lesson whose named notes are written (an id such as L9.1)."
)
@_COURSE
@click.option(
    "--to",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write catalogue.py and one test program per group under wrong/ here (else print them).",
)
@_DATABASE
def export(lesson: str, course: str | None, folder: Path | None, database_url: str | None) -> None:
    """Write the lesson's named notes as catalogue entries, each with a test program for the corpus."""
    with opened_store(database_url) as store:
        key = None if course is None else _scope(store, course)[1]
        named = store.mistakes.named(key, lesson)
    if not named:
        raise click.ClickException(f"No group of {lesson} is named{f' in the course {key}' if key else ''}.")
    entries = catalogue_text(lesson, named)
    programs = {
        f"{constant_of(group).lower()}.py": corpus_program(group) for group in named if group.examples
    }
    if folder is None:
        click.echo(entries)
        for file_name, text in programs.items():
            click.echo(f"\n# ---- wrong/{file_name}\n{text}")
        return
    (folder / "wrong").mkdir(parents=True, exist_ok=True)
    (folder / "catalogue.py").write_text(entries, encoding="utf-8")
    for file_name, text in programs.items():
        (folder / "wrong" / file_name).write_text(text, encoding="utf-8")
    click.echo(f"Wrote {folder / 'catalogue.py'} and {len(programs)} test programs under {folder / 'wrong'}.")


def constant_of(group: MistakeGroup) -> str:
    """The catalogue name of a group's note: ``CLASS_`` + its function + its id's first six digits.

    Examples
    --------
    >>> from datetime import datetime
    >>> when = datetime(2026, 1, 1)
    >>> group = MistakeGroup("0a1b2c3d4e5f6a7b", "L9.1", "shapes", "area", "0" * 32, 1, 1, when, "")
    >>> constant_of(group)
    'CLASS_AREA_0A1B2C'
    """
    return f"CLASS_{re.sub(r'[^A-Za-z0-9]', '_', group.function).upper()}_{group.id[:6].upper()}"


def catalogue_text(lesson: str, groups: list[MistakeGroup]) -> str:
    """The catalogue entries: one named sentence per group, and the hint rule to complete beside it."""
    lines: list[Any] = [
        f"# The named notes of {lesson} ('qkv mistakes export'): paste each sentence into the chapter's",
        "# catalogue (chapter.py), add a hint rule that computes the mistake to the exercise's suite",
        "# (grading.py), and put each test program in the lesson's corpus (corpus/EXERCISE/wrong/ in the",
        "# lesson's folder).",
    ]
    for group in groups:
        name = constant_of(group)
        lines += [
            "",
            f"# {group.exercise}.{group.function}, group {group.id}",
            f"{name} = {json.dumps(group.sentence, ensure_ascii=False)}",
            f"# Mistake({name}, lambda *args: ...),  # what the mistake computes, for the suite's hints",
        ]
    return "\n".join(lines) + "\n"


def corpus_program(group: MistakeGroup) -> str:
    """The group's first example as a corpus program, headed by the hint the corpus expects of it."""
    head = "# ruff: noqa  (a learner's file, graded as text; never imported by the tests)"
    return f"{head}\n# expected hint: {constant_of(group)}\n{group.examples[0].rstrip()}\n"
