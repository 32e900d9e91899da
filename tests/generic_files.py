"""Searching qkv's generic files (all of src/qkv but the lessons' content) for what belongs to a lesson:
its id, its exercises' ids and its sections' (ids in Python docstrings are examples, not names), the
functions its code exercises ask for, every sentence it shows, and the widgets' names. Used by
tests/lessons/test_lessons_generic.py and by the test that a new lesson's words are its own.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

from qkv.lessons import BUILTIN_CONTENT, Lesson
from qkv.lessons.pyfiles import import_lesson_file

PACKAGE = Path(__file__).parents[1] / "src" / "qkv"
TEXT_SUFFIXES = {".py", ".md", ".html", ".js", ".css", ".toml", ".txt", ".json"}
LIBRARY_CALLERS = {PACKAGE / "web" / "learner" / "widget_api.py"}
MIN_SENTENCE = 24  # shorter strings ("Check your understanding") may well be generic words


def generic_files() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file()
        and path.suffix in TEXT_SUFFIXES
        and BUILTIN_CONTENT not in path.parents
        and "vendor" not in path.parts
    ]


def _grading_module(lesson: Lesson) -> ModuleType | None:
    path = lesson.source.parent / "grading.py"
    return import_lesson_file(path)[0] if path.is_file() else None


def sentences_of(lesson: Lesson) -> set[str]:
    """Every sentence a learner can read from this lesson, from its exercises and its grading module."""
    texts: set[str] = {lesson.goal}
    for exercise in lesson.exercises.values():
        texts |= {
            exercise.prompt_template,
            exercise.hint,
            exercise.correct_message,
            *exercise.mistakes.values(),
            *exercise.hints,
        }
        texts |= {choice.text for choice in exercise.choices} | {
            choice.feedback for choice in exercise.choices
        }
        if exercise.suite is not None:
            texts |= {case.name for case in exercise.suite.table}
    module = _grading_module(lesson)
    if module is not None:
        texts |= {value for name, value in vars(module).items() if isinstance(value, str) and name.isupper()}
    return {text for text in texts if len(text) >= MIN_SENTENCE}


def names_of(lesson: Lesson) -> set[str]:
    """Identifiers of the lesson: its id, qualified exercise ids and the ids of its parts."""
    names = {lesson.id, *(f"{lesson.id}/{exercise_id}" for exercise_id in lesson.exercises)}
    return names | {part.id for part in lesson.parts}


def functions_of(lesson: Lesson) -> set[str]:
    return {name for exercise in lesson.exercises.values() for name in exercise.functions}


def without_docstrings(path: Path, text: str) -> str:
    """``text`` with the docstrings of a Python file blanked out (other files as they are)."""
    if path.suffix != ".py":
        return text
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                for number in range(first.lineno - 1, first.end_lineno):
                    lines[number] = "\n"
    return "".join(lines)


def findings(lesson: Lesson, files: list[Path], library_callers: set[Path]) -> list[str]:
    """Where ``files`` name the lesson, one of its sentences or (outside the library) one of its functions."""
    sentences, functions = sentences_of(lesson), functions_of(lesson)
    names = re.compile("|".join(rf"(?<![\w.]){re.escape(name)}(?![\w/])" for name in names_of(lesson)))
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        found += [f"{path}: the sentence {sentence[:60]!r}" for sentence in sentences if sentence in text]
        found += [f"{path}: {match.group(0)!r}" for match in names.finditer(without_docstrings(path, text))]
        if path not in library_callers:
            found += [
                f"{path}: the function {name!r}" for name in functions if re.search(rf"\b{name}\b", text)
            ]
    return found


def widget_mentions(files: list[Path], widget_names: list[str]) -> list[str]:
    """Where ``files`` name one of the widgets (a whole name: ``mask-grid``, not ``mask-grid-table``)."""
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(name)}(?![\w-])" for name in widget_names))
    found = []
    for path in files:
        found += [
            f"{path}: {match.group(0)!r}" for match in pattern.finditer(path.read_text(encoding="utf-8"))
        ]
    return found
