"""Reading the ``[[parts]]`` tables of a lesson's front matter, with ``file:line`` problems.

A lesson declares the sections of its page that hold exercises::

    [[parts]]
    id = "practice"              # the id of a ::::section of the page
    title = "Practice"           # shown in the progress panel
    changes_with_variant = true  # default false
    counts_toward_done = true    # default true

Every exercise names one of these parts; a lesson that declares no parts has no exercises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qkv.lessons.markup import ID_PATTERN
from qkv.lessons.model import LessonPart, Problem

__all__ = ["PART_KEYS", "check_part_sections", "read_parts"]

PART_KEYS = ("id", "title", "changes_with_variant", "counts_toward_done")
_HEADER = re.compile(r"^\s*\[\[\s*parts\s*\]\]")
_ANY_HEADER = re.compile(r"^\s*\[")


@dataclass(frozen=True)
class _Located:
    """Where one ``[[parts]]`` table sits in the file: its header line and its keys' lines."""

    header: int
    keys: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.keys.get(key, self.header)


def _locate(front_matter: str, first_line: int) -> list[_Located]:
    tables: list[_Located] = []
    current: _Located | None = None
    for number, text in enumerate(front_matter.splitlines(), start=first_line):
        if _HEADER.match(text):
            current = _Located(number, {})
            tables.append(current)
        elif _ANY_HEADER.match(text):
            current = None  # another table (such as a sub-table) ends this one
        elif current is not None and (match := re.match(r"^\s*([A-Za-z0-9_-]+)\s*=", text)):
            current.keys.setdefault(match.group(1), number)
    return tables


def read_parts(
    data: Any, file: Path, front_matter: str, first_line: int
) -> tuple[tuple[LessonPart, ...], dict[str, int], list[Problem]]:
    """Build the lesson's parts from the front matter's ``parts`` value, or say what is wrong.

    Parameters
    ----------
    data : object
        The front matter's ``parts`` value (None when there is none).
    file : Path
        The lesson file, for problem locations.
    front_matter : str
        The front matter's TOML text, to locate the tables' lines.
    first_line : int
        The line of the file that holds the front matter's first line.

    Returns
    -------
    parts : tuple of LessonPart
        The valid parts, in the order declared.
    lines : dict of str to int
        The line of each valid part's ``id`` key.
    problems : list of Problem

    Examples
    --------
    >>> text = '[[parts]]\\nid = "practice"\\ntitle = "Practice"\\n[[parts]]\\nid = "practice"\\n'
    >>> data = [{"id": "practice", "title": "Practice"}, {"id": "practice"}]
    >>> parts, lines, problems = read_parts(data, Path("lesson.md"), text, 2)
    >>> [(part.id, part.title) for part in parts], lines
    ([('practice', 'Practice')], {'practice': 3})
    >>> [str(problem) for problem in problems]  # doctest: +NORMALIZE_WHITESPACE
    ["lesson.md:5: The part 'practice' needs a title, which the progress panel shows.",
     "lesson.md:6: The part id 'practice' is declared twice."]
    """
    if data is None:
        return (), {}, []
    located = _locate(front_matter, first_line)
    if not isinstance(data, list) or not all(isinstance(table, dict) for table in data):
        line = next(
            (
                n
                for n, text in enumerate(front_matter.splitlines(), first_line)
                if re.match(r"^\s*parts\b", text)
            ),
            first_line,
        )
        message = f"parts must be [[parts]] tables, each with an id and a title, not {data!r}."
        return (), {}, [Problem(file, line, message)]
    parts: list[LessonPart] = []
    lines: dict[str, int] = {}
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, table in enumerate(data):
        where = located[index] if index < len(located) else _Located(first_line, {})
        part, found = _read_part(table, file, where)
        problems += found
        part_id = table.get("id")
        if isinstance(part_id, str) and part_id in seen:
            problems.append(Problem(file, where.line_of("id"), f"The part id {part_id!r} is declared twice."))
            continue
        seen.add(str(part_id))
        if part is not None:
            parts.append(part)
            lines[part.id] = where.line_of("id")
    return tuple(parts), lines, problems


def _read_part(table: dict[str, Any], file: Path, where: _Located) -> tuple[LessonPart | None, list[Problem]]:
    problems = [
        Problem(
            file,
            where.line_of(key),
            f"A [[parts]] table has no setting '{key}' (allowed: {', '.join(PART_KEYS)}).",
        )
        for key in sorted(set(table) - set(PART_KEYS))
    ]
    part_id = table.get("id")
    if part_id is None:
        problems.append(
            Problem(file, where.header, "Every [[parts]] table needs an id: the id of a section of the page.")
        )
        part_id = ""
    elif not isinstance(part_id, str) or not ID_PATTERN.fullmatch(part_id):
        problems.append(
            Problem(
                file,
                where.line_of("id"),
                f"A part id must be a section id (lowercase letters, digits and dashes), not {part_id!r}.",
            )
        )
    title = table.get("title")
    if title is None:
        named = f"The part {part_id!r}" if part_id else "Every [[parts]] table"
        problems.append(
            Problem(file, where.header, f"{named} needs a title, which the progress panel shows.")
        )
    elif not isinstance(title, str) or not title.strip():
        problems.append(
            Problem(file, where.line_of("title"), f"A part's title must be a non-empty text, not {title!r}.")
        )
    flags = {"changes_with_variant": False, "counts_toward_done": True}
    for key, default in flags.items():
        value = table.get(key, default)
        if not isinstance(value, bool):
            problems.append(Problem(file, where.line_of(key), f"{key} must be true or false, not {value!r}."))
        flags[key] = bool(value)
    if problems:
        return None, problems
    return LessonPart(str(part_id), str(title), **flags), []


def check_part_sections(
    parts: Sequence[LessonPart], lines: dict[str, int], section_ids: Sequence[str], file: Path
) -> list[Problem]:
    """Problems with parts that are not sections of the page (empty when every part is one).

    Examples
    --------
    >>> parts = [LessonPart("practice", "Practice"), LessonPart("drill", "Drill")]
    >>> [str(p) for p in check_part_sections(parts, {"drill": 9}, ["idea", "practice"], Path("lesson.md"))]
    ["lesson.md:9: The part 'drill' is not a section of the page; its sections are idea, practice."]
    """
    known = ", ".join(section_ids) or "none"
    return [
        Problem(
            file,
            lines.get(part.id, 1),
            f"The part {part.id!r} is not a section of the page; its sections are {known}.",
        )
        for part in parts
        if part.id not in section_ids
    ]
