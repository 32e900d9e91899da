"""No generic layer names a lesson: everything about a lesson lives in its folder under lessons/content.

The words of every built-in lesson — its id, its exercises' qualified ids, the functions its code
exercises ask for, its section ids and every sentence it shows (prompts, hints, named mistakes, choices,
grading hints) — are gathered from the lesson itself and searched for in every other file of qkv.

Two kinds of file may use a lesson's *function names*, because there they are the library's own: the core
library (``qkv/*.py``, which defines them) and the web layer's library API (``web/widget_api.py``, which
serves two of those functions over HTTP to any page). The widgets are no exception: each is a folder of its
chapter or of a lesson (``lessons/content/CHAPTER/[LESSON/]widgets/NAME/``), and the generic files name
none of them.

A docstring of the engine may give an id as an example (``L9.7``): ids are not searched for in Python
docstrings, so that a lesson an author adds under that id does not make the engine "name" it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import ModuleType

from qkv.lessons import BUILTIN_CONTENT, Lesson, load_catalog
from qkv.lessons.pyfiles import import_lesson_file

PACKAGE = Path(__file__).parents[2] / "src" / "qkv"
TEXT_SUFFIXES = {".py", ".md", ".html", ".js", ".css", ".toml", ".txt", ".json"}
LIBRARY_CALLERS = {PACKAGE / "web" / "widget_api.py"}
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


def test_no_generic_file_names_a_lesson_its_sentences_or_its_functions() -> None:
    library = LIBRARY_CALLERS | set(PACKAGE.glob("*.py"))
    assert [
        problem for lesson in load_catalog().lessons for problem in findings(lesson, generic_files(), library)
    ] == []


def test_the_search_finds_a_sentence_an_id_and_a_function(tmp_path: Path) -> None:
    lesson = load_catalog().lessons[0]
    code = next(exercise for exercise in lesson.exercises.values() if exercise.kind == "code")
    planted = tmp_path / "generic.py"
    hint = max(sentences_of(lesson), key=len)
    planted.write_text(f"HINT = {hint!r}\nEXERCISE = '{lesson.id}/{code.id}'\n{code.functions[0]}(1)\n")
    found = findings(lesson, [planted], set())
    assert f"{planted}: the sentence {hint[:60]!r}" in found
    assert f"{planted}: '{lesson.id}/{code.id}'" in found
    assert f"{planted}: the function {code.functions[0]!r}" in found
    # The library (and its web API) may call the lesson's functions; nothing else changes for them.
    assert [entry for entry in findings(lesson, [planted], {planted}) if "the function" not in entry] == [
        entry for entry in found if "the function" not in entry
    ]


def test_an_id_given_as_an_example_in_a_docstring_is_not_naming_the_lesson(tmp_path: Path) -> None:
    lesson = load_catalog().lessons[0]
    planted = tmp_path / "engine.py"
    planted.write_text(f'"""Ids sort by number: ``{lesson.id}`` first."""\n\nLESSON = "{lesson.id}"\n')
    assert findings(lesson, [planted], set()) == [f"{planted}: {lesson.id!r}"]


def widget_mentions(files: list[Path], widget_names: list[str]) -> list[str]:
    """Where ``files`` name one of the widgets (a whole name: ``mask-grid``, not ``mask-grid-table``)."""
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(name)}(?![\w-])" for name in widget_names))
    found = []
    for path in files:
        found += [
            f"{path}: {match.group(0)!r}" for match in pattern.finditer(path.read_text(encoding="utf-8"))
        ]
    return found


def test_no_generic_file_names_a_widget() -> None:
    names = load_catalog().widgets.names()
    assert len(names) >= 2
    assert widget_mentions(generic_files(), names) == []


def test_the_widget_search_finds_a_whole_name_only(tmp_path: Path) -> None:
    planted = tmp_path / "generic.js"
    planted.write_text('import("/widgets/mask-grid/widget.js"); el("table", {class: "mask-grid-table"});\n')
    assert widget_mentions([planted], ["mask-grid"]) == [f"{planted}: 'mask-grid'"]
