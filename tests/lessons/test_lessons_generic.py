"""No generic layer names a lesson: everything about a lesson lives in its folder under lessons/content.

The words of every built-in lesson — its id, its exercises' qualified ids, the functions its code
exercises ask for, its section ids and every sentence it shows (prompts, hints, named mistakes, choices,
grading hints) — are gathered from the lesson itself and searched for in every other file of qkv.

Two kinds of file may use a lesson's *function names*, because there they are the library's own: the core
library (``qkv/*.py``, which defines them) and the web layer's library API (``web/learner/widget_api.py``, which
serves two of those functions over HTTP to any page). The widgets are no exception: each is a folder of its
chapter or of a lesson (``lessons/content/CHAPTER/[LESSON/]widgets/NAME/``), and the generic files name
none of them.

A docstring of the engine may give an id as an example (``L9.7``): ids are not searched for in Python
docstrings, so that a lesson an author adds under that id does not make the engine "name" it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qkv.lessons import load_catalog
from tests import lesson_contract as contract
from tests.generic_files import (
    LIBRARY_CALLERS,
    PACKAGE,
    findings,
    generic_files,
    sentences_of,
    widget_mentions,
)


@pytest.mark.content
def test_no_generic_file_names_a_lesson_its_sentences_or_its_functions() -> None:
    library = LIBRARY_CALLERS | set(PACKAGE.glob("*.py"))
    assert [
        problem
        for lesson in contract.catalog().lessons
        for problem in findings(lesson, generic_files(), library)
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


@pytest.mark.content
def test_no_generic_file_names_a_widget() -> None:
    names = contract.catalog().widgets.names()
    assert len(names) >= 2
    assert widget_mentions(generic_files(), names) == []


def test_the_widget_search_finds_a_whole_name_only(tmp_path: Path) -> None:
    planted = tmp_path / "generic.js"
    planted.write_text('import("/widgets/mask-grid/widget.js"); el("table", {class: "mask-grid-table"});\n')
    assert widget_mentions([planted], ["mask-grid"]) == [f"{planted}: 'mask-grid'"]
