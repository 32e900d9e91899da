"""Checking the structure of a lesson or reference Markdown file: sections, directives and math.

Problems are collected, not raised, each located as ``file:line``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it.token import Token

from qkv.grading import Suite
from qkv.lessons.directives import read_body, read_exercise, read_widget
from qkv.lessons.markup import (
    ID_PATTERN,
    PLACEHOLDER,
    directive_of,
    display_math_html,
    latex_to_mathml,
    new_parser,
    placeholders_in,
    unknown_placeholder,
)
from qkv.lessons.model import Exercise, LessonPart, Problem
from qkv.lessons.parts import check_part_sections
from qkv.lessons.widgets import WidgetSet

__all__ = ["STRUCTURE_PARSER", "check_markdown"]

# Structure lives in block tokens (sections, headings, fences, display math, front matter); parsing the
# inline text of every paragraph would double the cost of loading a lesson for nothing checked here.
STRUCTURE_PARSER = new_parser().disable("inline")
INLINE_PARSER = new_parser()  # for a paragraph's inline formulas, checked at the line that holds each


def check_markdown(
    file: Path,
    text: str,
    names: Mapping[str, Any],
    problems: list[Problem],
    *,
    in_reference: bool,
    suites: Mapping[str, Suite] | None = None,
    parts: Sequence[LessonPart] = (),
    part_lines: Mapping[str, int] | None = None,
    tokens: Sequence[Token] | None = None,
    widgets: WidgetSet | None = None,
    check_math: bool = True,
) -> dict[str, Exercise]:
    """Check a lesson's (or a chapter reference's) Markdown and build its exercises.

    Parameters
    ----------
    file : Path
        The file, for problem locations.
    text : str
        Its Markdown.
    names : mapping
        The seed variant's values and named wrong answers.
    problems : list of Problem
        Every problem found is appended here.
    in_reference : bool
        True for a chapter reference, which has no sections and no exercises.
    suites : mapping of str to Suite, optional
        The lesson's grading suites by exercise id (from its ``grading.py``); code exercises need one.
    parts : sequence of LessonPart
        The parts the front matter declares; each must be a section, and each exercise names one.
    part_lines : mapping of str to int, optional
        The line of each part's declaration, for problems.
    tokens : sequence of Token, optional
        ``STRUCTURE_PARSER.parse(text)``, when the caller has parsed it already.
    widgets : WidgetSet, optional
        The widgets of the chapter, which ``{widget}`` blocks may name; none by default.
    check_math : bool
        Convert every display formula to MathML to find the ones latex2mathml cannot read (the full check;
        loading leaves it to the first render).

    Returns
    -------
    dict of str to Exercise
        The valid exercises, in page order.

    Examples
    --------
    >>> text = '::::section idea\\n## Idea\\nHi.\\n::::\\n'
    >>> found: list[Problem] = []
    >>> drill = LessonPart("drill", "Drill")
    >>> check_markdown(Path("lesson.md"), text, {}, found, in_reference=False, parts=[drill])
    {}
    >>> [str(problem) for problem in found]
    ["lesson.md:1: The part 'drill' is not a section of the page; its sections are idea."]
    """
    problems += _placeholder_problems(file, text, names)
    page = _PageCheck(file, names, problems, in_reference, suites or {}, [part.id for part in parts], widgets)
    tokens = STRUCTURE_PARSER.parse(text) if tokens is None else tokens
    for index, token in enumerate(tokens):
        line = (token.map[0] + 1) if token.map else 1
        page.check_layout(tokens, index, line)
        if check_math:
            problems += _math_problems(file, text, token, line)
        directive = directive_of(token) if token.type == "fence" else None
        if directive is not None:
            page.check_directive(token, line, *directive)
    if not in_reference and not page.section_ids:
        problems.append(
            Problem(
                file, 1, "This lesson has no sections; wrap its content in '::::section ID' … '::::' blocks."
            )
        )
    if not in_reference:
        problems += check_part_sections(parts, dict(part_lines or {}), page.page_order, file)
    return page.exercises


def _placeholder_problems(file: Path, text: str, names: Mapping[str, Any]) -> list[Problem]:
    """Each ``{{name}}`` that names no value, at its line."""
    return [
        Problem(file, number, unknown_placeholder(name))
        for number, text_line in enumerate(text.splitlines(), start=1)
        for name in placeholders_in(text_line)
        if name not in names
    ]


def _math_problems(file: Path, text: str, token: Token, line: int) -> list[Problem]:
    """The formulas of one token that cannot be converted to MathML."""
    if token.type == "inline":
        return _inline_math_problems(file, text, token)
    if not token.type.startswith("math"):
        return []
    try:
        render = latex_to_mathml if token.type == "math_inline" else display_math_html
        render(token.content)
    except ValueError as error:
        return [Problem(file, line, str(error))]
    return []


@dataclass
class _PageCheck:
    """One walk over a page's tokens: what it has found so far (sections, exercises) and where it is."""

    file: Path
    names: Mapping[str, Any]
    problems: list[Problem]
    in_reference: bool
    suites: Mapping[str, Suite]
    part_ids: list[str]
    widgets: WidgetSet | None
    exercises: dict[str, Exercise] = field(default_factory=dict)
    section_ids: set[str] = field(default_factory=set)
    page_order: list[str] = field(default_factory=list)
    depth: int = 0

    def check_layout(self, tokens: Sequence[Token], index: int, line: int) -> None:
        """Sections open and close, never nest, and hold every piece of text (none in a reference)."""
        token, file = tokens[index], self.file
        if token.type == "container_section_open":
            if self.in_reference:
                self.problems.append(
                    Problem(
                        file,
                        line,
                        "The chapter reference is one section already; it cannot hold ::::section blocks.",
                    )
                )
            elif self.depth > 0:
                self.problems.append(
                    Problem(
                        file, line, "Sections cannot be nested; close the section above with '::::' first."
                    )
                )
            following = tokens[index + 1 : index + 2]
            found_id = _check_section(file, line, token, following, self.section_ids, self.problems)
            self.section_ids |= found_id
            self.page_order += sorted(found_id)
            self.depth += 1
        elif token.type == "container_section_close":
            self.depth -= 1
        elif (
            self.depth == 0
            and token.level == 0
            and token.nesting >= 0
            and token.type != "front_matter"
            and not self.in_reference
        ):
            self.problems.append(
                Problem(
                    file,
                    line,
                    "This text is outside any section; put it between '::::section ID' and '::::'.",
                )
            )

    def check_directive(self, token: Token, line: int, kind: str, argument: str) -> None:
        """A ``{widget}`` or ``{exercise}`` block is read (a valid exercise kept); others are refused."""
        file = self.file
        if kind == "widget":
            self.problems += read_widget(token, argument, file, self.names, self.widgets or WidgetSet())
        elif kind == "exercise" and self.in_reference:
            self.problems.append(
                Problem(file, line, "The chapter reference cannot hold exercises; put them in a lesson.")
            )
        elif kind == "exercise":
            if argument in self.exercises:
                self.problems.append(
                    Problem(file, line, f"The exercise id {argument!r} is used twice in this lesson.")
                )
            suite = self.suites.get(argument)
            exercise, found = read_exercise(token, argument, file, self.names, suite, self.part_ids)
            self.problems += found
            if exercise is not None:
                self.exercises.setdefault(argument, exercise)
        else:
            self.problems.append(
                Problem(
                    file,
                    line,
                    f"Unknown directive '{{{kind}}}'; the directives are {{exercise}} and {{widget}}.",
                )
            )
            read_body(token, file)


def _check_section(
    file: Path, line: int, token: Token, following: Sequence[Token], seen: set[str], problems: list[Problem]
) -> set[str]:
    section_id = token.info.strip().removeprefix("section").strip()
    if not ID_PATTERN.fullmatch(section_id):
        problems.append(
            Problem(
                file,
                line,
                f"A section needs an id of lowercase letters, digits and dashes, not {section_id!r}.",
            )
        )
        return set()
    if section_id in seen or section_id == "reference":
        problems.append(Problem(file, line, f"The section id {section_id!r} is already used on this page."))
    if not following or following[0].type != "heading_open" or following[0].tag != "h2":
        problems.append(
            Problem(file, line, f"The section {section_id!r} must start with its title as a '## ' heading.")
        )
    return {section_id}


def _inline_math_problems(file: Path, text: str, token: Token) -> list[Problem]:
    """The inline formulas of one paragraph that cannot be converted, each at the line that holds it."""
    if not token.map:
        return []
    first = token.map[0]
    lines = text.splitlines()[first : token.map[1]]
    problems = []
    for child in INLINE_PARSER.parseInline(token.content)[0].children or []:
        if child.type != "math_inline":
            continue
        try:  # a placeholder stands for a number there, filled in before the formula is converted
            latex_to_mathml(PLACEHOLDER.sub("1", child.content))
        except ValueError as error:
            offset = next((i for i, line in enumerate(lines) if child.content in line), 0)
            problems.append(Problem(file, first + 1 + offset, str(error)))
    return problems
