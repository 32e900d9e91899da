"""Finding, reading and validating lesson content on disk.

A content folder holds chapter folders; a chapter folder holds ``chapter.toml``, its reference
Markdown, optionally a ``chapter.py`` that its lessons share, one folder per written lesson
(``lesson.md`` and, if needed, ``lesson.py``, ``grading.py`` and a ``widgets`` folder of the lesson's own
widgets) and, if its pages share widgets, a ``widgets`` folder with one folder per widget (see
``qkv.lessons.widgets``). Every problem found is
collected as ``file:line: message`` rather than stopping at the first.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it.token import Token

from qkv.lessons.catalog import Catalog, Chapter, Lesson
from qkv.lessons.markup import directive_of, toml_error
from qkv.lessons.model import Exercise, LessonError, LessonPart, PlannedLesson, Problem
from qkv.lessons.parts import read_parts
from qkv.lessons.pyfiles import import_chapter_module
from qkv.lessons.render import render_reference, render_sections
from qkv.lessons.structure import STRUCTURE_PARSER, check_markdown
from qkv.lessons.suites import GRADING_FILE, load_suites
from qkv.lessons.variants import LessonHooks, load_hooks
from qkv.lessons.widgets import WidgetSet, load_widgets

__all__ = ["BUILTIN_CONTENT", "load_catalog", "validate"]

BUILTIN_CONTENT = Path(__file__).parent / "content"
_SAMPLE_SEEDS = (1, 2, 3)


def load_catalog(path: Path | None = None) -> Catalog:
    """Load every chapter and lesson under ``path`` (None: the lessons shipped with qkv, loaded once).

    Loading parses and builds; it draws only the printed page's variant and renders nothing. The full
    check, which also draws and renders sample variants, is ``validate`` (``qkv lessons validate``, and
    the tests).

    Parameters
    ----------
    path : Path, optional
        A content folder, a chapter folder (with ``chapter.toml``) or a lesson folder.

    Returns
    -------
    Catalog

    Raises
    ------
    LessonError
        If anything is wrong; the message lists every problem as ``file:line: message`` and
        ``.problems`` holds them.

    Examples
    --------
    >>> catalog = load_catalog()
    >>> (chapter,) = catalog.chapters
    >>> catalog.lessons[0].place == f"{chapter.lesson_ids[0]} · lesson 1 of {len(chapter.lesson_ids)}"
    True
    """
    if path is None:
        return _builtin_catalog()
    return _checked_load(Path(path))


@functools.cache
def _builtin_catalog() -> Catalog:
    """The built-in lessons never change while a process runs: one load serves every caller."""
    return _checked_load(BUILTIN_CONTENT)


def _checked_load(path: Path) -> Catalog:
    catalog, problems = _load(path, thorough=False)
    if problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        listing = "\n".join(str(problem) for problem in problems)
        raise LessonError(f"The lessons under {path} have {count}:\n{listing}", tuple(problems))
    return catalog


def validate(path: Path | None = None) -> list[Problem]:
    """Every problem with the lesson content under ``path`` (None: the built-in lessons).

    Returns
    -------
    list of Problem
        Empty when the content is valid.

    Examples
    --------
    >>> validate()
    []
    >>> [str(p) for p in validate(Path("/no/such/folder"))]
    ['/no/such/folder:1: This path does not exist.']
    """
    problems = _load(BUILTIN_CONTENT if path is None else Path(path), thorough=True)[1]
    return list(dict.fromkeys(problems))  # each problem once (a placeholder is seen by two checks)


def _chapter_folders(path: Path) -> tuple[list[Path], list[Problem]]:
    if not path.exists():
        return [], [Problem(path, 1, "This path does not exist.")]
    folder = path.parent if path.is_file() else path
    for candidate in (folder, folder.parent):
        if (candidate / "chapter.toml").is_file():
            return [candidate], []
    chapters = sorted(child for child in folder.iterdir() if (child / "chapter.toml").is_file())
    if not chapters:
        return [], [Problem(path, 1, "No chapter.toml was found here or in the folders right below it.")]
    return chapters, []


def _load(path: Path, *, thorough: bool) -> tuple[Catalog, list[Problem]]:
    """The catalog and every problem found; ``thorough`` also draws and renders the sample variants."""
    folders, problems = _chapter_folders(path)
    chapters: list[Chapter] = []
    lessons: list[Lesson] = []
    for folder in folders:
        chapter = _load_chapter(folder / "chapter.toml", problems, thorough=thorough)
        if chapter is None:
            continue
        if any(existing.id == chapter.id for existing in chapters):
            problems.append(
                Problem(chapter.source, 1, f"The chapter id {chapter.id!r} is used by another chapter.")
            )
        chapters.append(chapter)
        _, shared_problems = import_chapter_module(folder)
        if shared_problems:  # its lessons import it: reported once here, not again for every lesson file
            problems += shared_problems
            continue
        texts = _lesson_texts(folder, problems)  # each lesson.md read once, for the outline and the lesson
        _add_unlisted_lessons(texts, chapter)
        found = [
            lesson
            for file, text in texts.items()
            if (lesson := _load_lesson(file, text, chapter, problems, thorough=thorough))
        ]
        seen: set[str] = set()
        for lesson in found:
            if lesson.id in seen:
                problems.append(
                    Problem(
                        lesson.source, 2, f"Another folder of this chapter also holds lesson {lesson.id}."
                    )
                )
            seen.add(lesson.id)
        lessons += sorted(found, key=lambda lesson: chapter.lesson_ids.index(lesson.id))
    widgets, clashes = WidgetSet().joined(chapter.widgets for chapter in chapters)
    return Catalog(chapters, lessons, widgets), problems + clashes


_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def _lesson_texts(folder: Path, problems: list[Problem]) -> dict[Path, str]:
    """The text of every ``lesson.md`` of a chapter folder, in folder order; one that cannot be read is a
    problem and is left out."""
    texts = {}
    for file in sorted(folder.glob("*/lesson.md")):
        try:
            texts[file] = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(Problem(file, 1, f"This file cannot be read: {error}."))
    return texts


def _add_unlisted_lessons(texts: Mapping[Path, str], chapter: Chapter) -> None:
    """Put the chapter's lessons that chapter.toml does not list at the end of its outline, in id order.

    So adding a lesson is adding its folder: chapter.toml orders the lessons and lists the planned ones,
    but a written lesson of the chapter (its id starts with the chapter's, ``L9.7`` in ``L9``) needs no
    line there. A front matter that cannot be read is left to the full load, which says why.
    """
    unlisted: list[PlannedLesson] = []
    for text in texts.values():
        found = _FRONT_MATTER.match(text)
        try:
            data = tomllib.loads(found.group(1)) if found else {}
        except tomllib.TOMLDecodeError:
            continue
        lesson_id, title = data.get("id"), data.get("title")
        if (
            isinstance(lesson_id, str)
            and isinstance(title, str)
            and lesson_id.startswith(f"{chapter.id}.")
            and lesson_id not in chapter.lesson_ids
            and all(lesson_id != other.id for other in unlisted)
        ):
            unlisted.append(PlannedLesson(lesson_id, title))
    for lesson in sorted(unlisted, key=lambda planned: _id_order(planned.id)):
        chapter.planned.append(lesson)
        chapter.lesson_ids.append(lesson.id)


def _id_order(lesson_id: str) -> tuple[tuple[int, int | str], ...]:
    """``L9.10`` after ``L9.9``: the id's dotted parts, numbers as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in lesson_id.split("."))


def _widgets_placed(tokens: Sequence[Token]) -> tuple[str, ...]:
    """The names of the widgets that ``{widget} NAME`` blocks place, in page order, each once."""
    placed = (directive_of(token) for token in tokens if token.type == "fence")
    return tuple(dict.fromkeys(found[1] for found in placed if found is not None and found[0] == "widget"))


def _read_toml(
    file: Path, problems: list[Problem], text: str | None = None, first_line: int = 1
) -> dict[str, Any] | None:
    try:
        return tomllib.loads(file.read_text(encoding="utf-8") if text is None else text)
    except tomllib.TOMLDecodeError as error:
        line, reason = toml_error(error, first_line)
        problems.append(Problem(file, line, f"Invalid TOML: {reason}."))
    except (OSError, UnicodeDecodeError) as error:
        problems.append(Problem(file, 1, f"This file cannot be read: {error}."))
    return None


def _line_of(file: Path, key: str) -> int:
    try:
        for number, text in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            if re.match(rf"^\s*{re.escape(key)}\s*=", text):
                return number
    except (OSError, UnicodeDecodeError):
        pass
    return 1


def _text_field(
    data: Mapping[str, Any], key: str, file: Path, problems: list[Problem], line: int | None = None
) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(
            Problem(file, line or _line_of(file, key), f"'{key}' must be a non-empty text, not {value!r}.")
        )
        return ""
    return value


def _load_chapter(file: Path, problems: list[Problem], *, thorough: bool) -> Chapter | None:
    data = _read_toml(file, problems)
    if data is None:
        return None
    before = len(problems)
    widgets = _chapter_widgets(file.parent, problems)
    chapter_id = _text_field(data, "id", file, problems)
    title = _text_field(data, "title", file, problems)
    for key in sorted(set(data) - {"id", "title", "reference", "lessons"}):
        problems.append(
            Problem(
                file,
                _line_of(file, key),
                f"chapter.toml has no setting '{key}' (allowed: id, title, reference, lessons).",
            )
        )
    planned = _planned_lessons(file, data.get("lessons"), problems)
    reference_text = _check_reference(file, data, widgets, problems, before, thorough=thorough)
    if len(problems) > before:
        return None
    placed = _widgets_placed(STRUCTURE_PARSER.parse(reference_text))
    return Chapter(chapter_id, title, [p.id for p in planned], planned, reference_text, file, widgets, placed)


def _planned_lessons(file: Path, entries: object, problems: list[Problem]) -> list[PlannedLesson]:
    """The lessons ``chapter.toml`` lists, each with an id and a title, none twice."""
    planned: list[PlannedLesson] = []
    if not isinstance(entries, list) or not entries:
        problems.append(
            Problem(
                file, 1, "chapter.toml needs a [[lessons]] table for each lesson, with an id and a title."
            )
        )
        entries = []
    for entry in entries:
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k] for k in ("id", "title")
        ):
            problems.append(
                Problem(
                    file,
                    _line_of(file, "id"),
                    f"Every [[lessons]] table needs an id and a title, not {entry!r}.",
                )
            )
        elif any(p.id == entry["id"] for p in planned):
            problems.append(Problem(file, 1, f"The lesson id {entry['id']!r} is listed twice."))
        else:
            planned.append(PlannedLesson(entry["id"], entry["title"]))
    return planned


def _check_reference(
    file: Path,
    data: Mapping[str, Any],
    widgets: WidgetSet,
    problems: list[Problem],
    before: int,
    *,
    thorough: bool,
) -> str:
    """The chapter reference's text, checked; "" when it is missing. When ``thorough`` and ``problems`` has
    grown no longer than ``before`` (nothing found in the chapter), it is also rendered once."""
    reference_file = file.parent / str(data.get("reference", "reference.md"))
    reference_text = ""
    if not reference_file.is_file():
        problems.append(
            Problem(
                file,
                _line_of(file, "reference"),
                f"The chapter reference {reference_file.name!r} does not exist.",
            )
        )
    else:
        reference_text = reference_file.read_text(encoding="utf-8")
        check_markdown(
            reference_file,
            reference_text,
            {},
            problems,
            in_reference=True,
            widgets=widgets,
            check_math=thorough,
        )
    if thorough and len(problems) == before:  # loading renders it on first use (Chapter.reference)
        try:
            render_reference(reference_text, widgets)
        except Exception as error:  # a last safety net: report, never crash the loader
            problems.append(Problem(reference_file, 1, f"The reference could not be rendered: {error}"))
    return reference_text


def _chapter_widgets(folder: Path, problems: list[Problem]) -> WidgetSet:
    """The widgets of a chapter folder and those of its lessons' own folders (``LESSON/widgets/NAME/``):
    a widget used by one lesson lives in that lesson's folder; one shared by several, in the chapter's."""
    widgets, found = load_widgets(folder)
    problems += found
    for lesson_folder in sorted(path.parent for path in folder.glob("*/lesson.md")):
        own, found = load_widgets(lesson_folder)
        widgets, clashes = widgets.joined([own])
        problems += found + clashes
    return widgets


@dataclass(frozen=True)
class _Front:
    """A lesson's front matter: its id, title and goal, and the parts of its page."""

    fields: dict[str, str]
    parts: tuple[LessonPart, ...]
    part_lines: dict[str, int]


def _front_matter(file: Path, tokens: list[Token], problems: list[Problem]) -> _Front | None:
    if not tokens or tokens[0].type != "front_matter":
        problems.append(
            Problem(
                file, 1, "A lesson starts with front matter: id, title and goal in TOML between '---' lines."
            )
        )
        return None
    data = _read_toml(file, problems, tokens[0].content, first_line=2)
    if data is None:
        return None
    fields = {
        key: _text_field(data, key, file, problems, _line_of(file, key)) for key in ("id", "title", "goal")
    }
    for key in sorted(set(data) - {*fields, "parts"}):
        problems.append(
            Problem(
                file,
                _line_of(file, key),
                f"The front matter has no setting '{key}' (allowed: id, title, goal, parts).",
            )
        )
    parts, part_lines, part_problems = read_parts(data.get("parts"), file, tokens[0].content, 2)
    problems += part_problems
    return _Front(fields, parts, part_lines) if all(fields.values()) else None


def _seed_names(hooks: LessonHooks, problems: list[Problem], *, thorough: bool) -> dict[str, Any] | None:
    try:
        names = hooks.namespace(hooks.variant(None))
        for seed in _SAMPLE_SEEDS if thorough else ():
            if hooks.variant(seed) != hooks.variant(seed):
                problems.append(
                    Problem(
                        hooks.source, 1, f"variant({seed}) gives different numbers each time it is called."
                    )
                )
            hooks.namespace(hooks.variant(seed))
    except LessonError as error:  # its own located problem when it has one: the path said once
        problems += error.problems or (Problem(hooks.source, 1, str(error)),)
        return None
    return names


def _load_lesson(
    file: Path, text: str, chapter: Chapter, problems: list[Problem], *, thorough: bool
) -> Lesson | None:
    before = len(problems)
    tokens = STRUCTURE_PARSER.parse(text)
    matter = _front_matter(file, tokens, problems)
    hooks, hook_problems = load_hooks(file.parent / "lesson.py")
    problems += hook_problems
    suites, suite_problems = load_suites(file.parent)
    problems += suite_problems
    names = _seed_names(hooks, problems, thorough=thorough) if not hook_problems else None
    if matter is None or names is None:
        return None
    front = matter.fields
    if front["id"] not in chapter.lesson_ids:
        problems.append(
            Problem(
                file,
                _line_of(file, "id"),
                f"The lesson id {front['id']!r} does not belong to chapter {chapter.id}: a lesson of this "
                f"folder has an id that starts with {chapter.id + '.'!r}.",
            )
        )
    exercises = check_markdown(
        file,
        text,
        names,
        problems,
        in_reference=False,
        check_math=thorough,
        suites=suites,
        parts=matter.parts,
        part_lines=matter.part_lines,
        tokens=tokens,
        widgets=chapter.widgets,
    )
    if len(problems) == before:
        problems += _unclaimed_suites(file, suites.keys(), exercises)
    if len(problems) > before:
        return None
    if thorough and not _renders(file, text, hooks, exercises, chapter.widgets, problems):
        return None
    return Lesson(
        id=front["id"],
        title=front["title"],
        goal=front["goal"],
        chapter_id=chapter.id,
        place=chapter.position(front["id"]),
        exercises=exercises,
        parts=matter.parts,
        text=text,
        source=file,
        hooks=hooks,
        chapter=chapter,
        widget_names=tuple(dict.fromkeys([*_widgets_placed(tokens), *chapter.reference_widgets])),
    )


def _unclaimed_suites(
    file: Path, suite_ids: Iterable[str], exercises: Mapping[str, Exercise]
) -> list[Problem]:
    """A problem for each suite of ``grading.py`` that no code exercise of the page takes."""
    code = [key for key, exercise in exercises.items() if exercise.kind == "code"]
    return [
        Problem(
            file.parent / GRADING_FILE,
            1,
            f"SUITES[{exercise_id!r}] belongs to no code exercise of {file.name} "
            f"(its code exercises: {', '.join(code) or 'none'}).",
        )
        for exercise_id in set(suite_ids) - set(code)
    ]


def _renders(
    file: Path,
    text: str,
    hooks: LessonHooks,
    exercises: Mapping[str, Exercise],
    widgets: WidgetSet,
    problems: list[Problem],
) -> bool:
    """Whether the page renders for the seed variant and every sample seed (a problem added when not)."""
    for seed in (None, *_SAMPLE_SEEDS):
        try:
            render_sections(text, hooks.namespace(hooks.variant(seed)), exercises, widgets)
        except LessonError as error:  # lesson.py's own failure, at its own line
            problems += error.problems or (Problem(file, 1, f"The lesson could not be rendered: {error}"),)
            return False
        except Exception as error:  # a last safety net: report, never crash the loader
            problems.append(Problem(file, 1, f"The lesson could not be rendered for variant {seed}: {error}"))
            return False
    return True
