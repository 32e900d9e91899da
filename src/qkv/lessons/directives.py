"""Reading the ``{exercise}`` and ``{widget}`` blocks of a lesson file, with ``file:line`` problems.

A directive is a fenced block whose info string is ``{exercise} ID`` or ``{widget} NAME`` and whose
body is TOML. Every problem is reported at the line of the offending key when it can be found.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from markdown_it.token import Token

from qkv.grading import Suite
from qkv.lessons.help_ladder import leaked_lines
from qkv.lessons.markup import ID_PATTERN, fill, placeholders_in, toml_error, unknown_placeholder
from qkv.lessons.model import EXERCISE_KINDS, Choice, Exercise, Problem
from qkv.lessons.suites import GRADING_FILE
from qkv.lessons.widgets import WidgetSet

__all__ = ["read_body", "read_exercise", "read_widget"]

_COMMON_KEYS = {"kind", "part", "prompt", "label", "hint", "correct_message"}
_KIND_KEYS = {
    "numeric": {"answer", "name", "rtol", "atol", "mistakes"},
    "letter": {"answer", "options", "mistakes"},
    "choice": {"answer", "choices"},
    "code": {"starter_code", "hints", "solution"},
}


class _DirectiveBody:
    """A directive's parsed TOML body and a way to locate its keys in the file."""

    def __init__(self, token: Token, file: Path, data: dict[str, Any]) -> None:
        self.first_line = (token.map[0] + 1) if token.map else 1  # the opening fence
        self.lines = token.content.splitlines()
        self.file = file
        self.data = data

    def line_of(self, key: str) -> int:
        pattern = re.compile(rf"^\s*(\[+\s*)?{re.escape(key)}\s*(=|\])")
        for number, text in enumerate(self.lines, start=1):
            if pattern.match(text):
                return self.first_line + number
        return self.first_line

    def problem(self, key: str, message: str) -> Problem:
        return Problem(self.file, self.line_of(key), message)


def read_body(token: Token, file: Path) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Parse a directive's TOML body; a syntax error is reported at its line in the file.

    Examples
    --------
    >>> token = Token("fence", "code", 0, info="{widget} x", content="a = 1\\nb = \\n", map=[9, 12])
    >>> [str(problem) for problem in read_body(token, Path("lesson.md"))[1]]  # doctest: +ELLIPSIS
    ['lesson.md:12: The TOML in this block is invalid: Invalid value...']
    """
    fence_line = (token.map[0] + 1) if token.map else 1
    try:
        return tomllib.loads(token.content), []
    except tomllib.TOMLDecodeError as error:
        line, reason = toml_error(error, first_line=fence_line + 1)  # the body starts below the fence
        return None, [Problem(file, line, f"The TOML in this block is invalid: {reason}.")]


def read_widget(
    token: Token, name: str, file: Path, names: Mapping[str, Any], widgets: WidgetSet
) -> list[Problem]:
    """Problems with a ``{widget} NAME`` block, given the ``widgets`` its chapter has (empty when fine)."""
    data, problems = read_body(token, file)
    if data is None:
        return problems
    first_line = (token.map[0] + 1) if token.map else 1
    return [Problem(file, first_line, message) for message in widgets.check(name, data, names)]


def read_exercise(
    token: Token,
    exercise_id: str,
    file: Path,
    names: Mapping[str, Any],
    suite: Suite | None = None,
    parts: Sequence[str] = (),
) -> tuple[Exercise | None, list[Problem]]:
    """Build an Exercise from an ``{exercise} ID`` block, or report why it cannot be built.

    Parameters
    ----------
    token : Token
        The fence token.
    exercise_id : str
        The id after ``{exercise}``.
    file : Path
        The lesson file, for problem locations.
    names : mapping
        The seed variant's values and named wrong answers; placeholders and answer keys must be
        among them.
    suite : Suite, optional
        The tests of this exercise from the lesson's grading module (code exercises need one).
    parts : sequence of str
        The ids of the parts the lesson declares in its front matter; ``part`` must be one of them.

    Returns
    -------
    exercise : Exercise or None
    problems : list of Problem
    """
    data, problems = read_body(token, file)
    if data is None:
        return None, problems
    body = _DirectiveBody(token, file, data)
    if not ID_PATTERN.fullmatch(exercise_id):
        problems.append(
            Problem(
                file,
                body.first_line,
                f"The exercise id {exercise_id!r} must be lowercase letters, digits and dashes.",
            )
        )
    kind = data.get("kind")
    if kind not in EXERCISE_KINDS:
        problems.append(
            body.problem("kind", f"kind must be one of {', '.join(EXERCISE_KINDS)}, not {kind!r}.")
        )
        return None, problems
    problems += _check_part(body, parts)
    for key in sorted(set(data) - _COMMON_KEYS - _KIND_KEYS[kind]):
        allowed = ", ".join(sorted(_COMMON_KEYS | _KIND_KEYS[kind]))
        problems.append(body.problem(key, f"A {kind} exercise has no setting '{key}' (allowed: {allowed})."))
    for key in ("prompt", "label", "hint", "correct_message"):
        problems += _check_text(body, key, required=key == "prompt", names=names)
    if kind == "code":
        problems += _check_code(body, exercise_id, suite)
    else:
        checks: dict[str, Callable[[_DirectiveBody, Mapping[str, Any]], list[Problem]]] = {
            "numeric": _validate_numeric_spec,
            "letter": _validate_letter_spec,
            "choice": _validate_choice_spec,
        }
        problems += checks[kind](body, names)
    if problems:
        return None, problems
    return _build(exercise_id, kind, data, file, body.first_line, names, suite), []


def _build(
    exercise_id: str,
    kind: Any,
    data: dict[str, Any],
    file: Path,
    line: int,
    names: Mapping[str, Any],
    suite: Suite | None,
) -> Exercise:
    answer = str(data.get("answer", ""))
    choices = tuple(
        Choice(str(c["letter"]), str(c["text"]), str(c["letter"]) == answer, str(c["feedback"]))
        for c in data.get("choices", [])
    )
    return Exercise(
        id=exercise_id,
        kind=kind,
        part=str(data["part"]),
        prompt=fill(str(data["prompt"]), names),
        prompt_template=str(data["prompt"]),
        source=file,
        line=line,
        answer=answer,
        name=str(data.get("name", answer)),
        rtol=float(data.get("rtol", 1e-6)),
        atol=float(data.get("atol", 1e-9)),
        hint=str(data.get("hint", "")),
        correct_message=str(data.get("correct_message", "")),
        mistakes={str(k): str(v) for k, v in data.get("mistakes", {}).items()},
        options={str(k): tuple(str(w) for w in v) for k, v in data.get("options", {}).items()},
        choices=choices,
        starter_code=data.get("starter_code"),
        hints=tuple(_hint_text(hint) for hint in data.get("hints", [])),
        solution_hints=tuple(
            number
            for number, hint in enumerate(data.get("hints", []), start=1)
            if isinstance(hint, dict) and hint.get("shows_solution") is True
        ),
        solution=data.get("solution"),
        suite=_with_reference(suite, data.get("solution")) if kind == "code" else None,
        functions=tuple(suite.functions) if kind == "code" and suite is not None else (),
        label=str(data.get("label", "")),
    )


def _with_reference(suite: Suite | None, solution: Any) -> Suite | None:
    """The suite with the exercise's solution as its reference, from which the grader derives mutants."""
    if suite is None or not isinstance(solution, str) or suite.reference is not None:
        return suite
    return dataclasses.replace(suite, reference=solution)


def _check_part(body: _DirectiveBody, parts: Sequence[str]) -> list[Problem]:
    part = body.data.get("part")
    if part in parts:
        return []
    if not parts:
        return [
            body.problem(
                "part",
                f"The exercise is in part {part!r}, but the lesson declares no parts; add a [[parts]] "
                "table to the front matter for each section that holds exercises.",
            )
        ]
    return [
        body.problem("part", f"part must be one of the lesson's parts ({', '.join(parts)}), not {part!r}.")
    ]


def _check_text(body: _DirectiveBody, key: str, *, required: bool, names: Mapping[str, Any]) -> list[Problem]:
    value = body.data.get(key)
    if value is None:
        return [body.problem(key, f"This exercise needs a {key}.")] if required else []
    if not isinstance(value, str) or (required and not value.strip()):
        return [body.problem(key, f"{key} must be a non-empty text, not {value!r}.")]
    return [
        body.problem(key, unknown_placeholder(name)) for name in placeholders_in(value) if name not in names
    ]


def _is_numbers(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(_is_numbers(v) and not isinstance(v, list) for v in value)
    )


def _check_mistakes(
    body: _DirectiveBody, allowed: Callable[[str], bool], what: str, names: Mapping[str, Any]
) -> list[Problem]:
    mistakes = body.data.get("mistakes", {})
    if not isinstance(mistakes, dict) or not all(isinstance(v, str) for v in mistakes.values()):
        return [body.problem("mistakes", 'mistakes must be a table of texts, such as q_by_columns = "…".')]
    problems = [
        body.problem(key, f"The mistake '{key}' names {what}.") for key in mistakes if not allowed(key)
    ]
    for key, message in mistakes.items():
        problems += [
            body.problem(key, unknown_placeholder(name))
            for name in placeholders_in(message)
            if name not in names
        ]
    return problems


def _validate_numeric_spec(body: _DirectiveBody, names: Mapping[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    answer = body.data.get("answer")
    if not isinstance(answer, str) or answer not in names:
        numbers = sorted(name for name, value in names.items() if _is_numbers(value))
        problems.append(
            body.problem(
                "answer",
                f"answer must name a value of the lesson's variant, not {answer!r}; its numbers are "
                f"{', '.join(numbers) or 'none (lesson.py draws none)'}.",
            )
        )
    elif not _is_numbers(names[answer]):
        problems.append(
            body.problem("answer", f"The variant's {answer!r} is not a number or a list of numbers.")
        )
    for key in ("rtol", "atol"):
        value = body.data.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            problems.append(body.problem(key, f"{key} must be a number of at least 0, not {value!r}."))
    wrong_ok = lambda key: key in names and _is_numbers(names[key])  # noqa: E731
    problems += _check_mistakes(
        body, wrong_ok, "no numeric value of the variant or of wrong_answers()", names
    )
    return problems


def _validate_letter_spec(body: _DirectiveBody, names: Mapping[str, Any]) -> list[Problem]:
    options = body.data.get("options")
    if (
        not isinstance(options, dict)
        or len(options) < 2
        or not all(
            isinstance(words, list) and all(isinstance(w, str) for w in words) for words in options.values()
        )
    ):
        return [
            body.problem(
                "options", 'A letter exercise needs an [options] table: each letter = ["words", ...].'
            )
        ]
    problems: list[Problem] = []
    if body.data.get("answer") not in options:
        problems.append(
            body.problem(
                "answer", f"answer must be one of {', '.join(options)}, not {body.data.get('answer')!r}."
            )
        )
    problems += _check_mistakes(body, lambda key: key in options, "no option", names)
    return problems


def _validate_choice_spec(body: _DirectiveBody, names: Mapping[str, Any]) -> list[Problem]:
    choices = body.data.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        return [body.problem("choices", "A choice exercise needs at least two [[choices]] tables.")]
    problems: list[Problem] = []
    letters: list[str] = []
    for choice in choices:
        if not isinstance(choice, dict) or not all(
            isinstance(choice.get(k), str) for k in ("letter", "text", "feedback")
        ):
            problems.append(
                body.problem("choices", "Every [[choices]] table needs a letter, a text and a feedback.")
            )
            continue
        if choice["letter"] in letters:
            problems.append(body.problem("choices", f"The choice letter {choice['letter']!r} is used twice."))
        letters.append(choice["letter"])
    if not problems and body.data.get("answer") not in letters:
        problems.append(
            body.problem(
                "answer", f"answer must be one of {', '.join(letters)}, not {body.data.get('answer')!r}."
            )
        )
    return problems


def _check_code(body: _DirectiveBody, exercise_id: str, suite: Suite | None) -> list[Problem]:
    problems: list[Problem] = []
    starter = body.data.get("starter_code")
    if not isinstance(starter, str) or not starter.strip():
        problems.append(body.problem("starter_code", "A code exercise needs its starter_code."))
        starter = ""
    if suite is None:
        problems.append(
            Problem(
                body.file,
                body.first_line,
                f"The code exercise {exercise_id!r} has no tests: the lesson's {GRADING_FILE} must define "
                f"SUITES[{exercise_id!r}].",
            )
        )
        return problems
    problems += [
        body.problem("starter_code", f"The starter code has no 'def {name}(' for the function '{name}'.")
        for name in suite.functions
        if not re.search(rf"^def {re.escape(name)}\(", starter, re.MULTILINE)
    ]
    problems += _check_help(body, suite)
    return problems


MAX_HINTS = 10


def _hint_text(hint: object) -> str:
    """A hint's text: the string itself, or the ``text`` of a ``{text = ..., shows_solution = true}``."""
    return str(hint.get("text", "")) if isinstance(hint, dict) else str(hint)


def _hint_problem(number: int, hint: object) -> str | None:
    """Why hint ``number`` is no hint (None when it is one): a non-empty string, or a table of its text and
    ``shows_solution``."""
    if isinstance(hint, dict):
        if set(hint) - {"text", "shows_solution"} or not isinstance(hint.get("shows_solution", False), bool):
            return (
                f"Hint {number} must be a string or a table of text and shows_solution (true or false), "
                f"not {hint!r}."
            )
        hint = hint.get("text")
    if not isinstance(hint, str) or not hint.strip():
        return f"Hint {number} must be a non-empty string, not {hint!r}."
    return None


def _hint_leaks(body: _DirectiveBody, hints: list[Any], solution: str) -> list[Problem]:
    """A hint that holds a line of the reference solution must be marked ``shows_solution``."""
    problems = []
    for number, hint in enumerate(hints, start=1):
        if isinstance(hint, dict) and hint.get("shows_solution") is True:
            continue
        leaked = leaked_lines(_hint_text(hint), solution, str(body.data.get("starter_code") or ""))
        if leaked:
            problems.append(
                body.problem(
                    "hints",
                    f"Hint {number} holds the reference solution's code {leaked[0]!r}; say it in words, or "
                    "mark the hint {text = ..., shows_solution = true} so that reading it counts as being "
                    "shown the solution.",
                )
            )
    return problems


def _check_help(body: _DirectiveBody, suite: Suite) -> list[Problem]:
    """The optional ``hints`` (a list of sentences, shown one at a time) and ``solution`` (a program); no
    hint but one marked ``shows_solution`` holds a line of the solution's code."""
    problems: list[Problem] = []
    hints = body.data.get("hints")
    if hints is not None:
        if not isinstance(hints, list) or not hints or len(hints) > MAX_HINTS:
            problems.append(
                body.problem("hints", f"hints must be a list of 1 to {MAX_HINTS} sentences, not {hints!r}.")
            )
        else:
            problems += [
                body.problem("hints", problem)
                for number, hint in enumerate(hints, start=1)
                if (problem := _hint_problem(number, hint)) is not None
            ]
    solution = body.data.get("solution")
    if solution is not None:
        if not isinstance(solution, str) or not solution.strip():
            problems.append(body.problem("solution", "solution must be the reference program, as a string."))
        else:
            problems += [
                body.problem("solution", f"The solution has no 'def {name}(' for the function '{name}'.")
                for name in suite.functions
                if not re.search(rf"^def {re.escape(name)}\(", solution, re.MULTILINE)
            ]
            if isinstance(hints, list) and not problems:
                problems += _hint_leaks(body, hints, solution)
    return problems
