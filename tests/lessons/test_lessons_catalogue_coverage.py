"""Every lesson names each of the chapter's catalogued mistakes that its functions can make.

The catalogue (the chapter's ``chapter.py``) writes each sentence once; each lesson lists, in its corpus
folder's ``catalogued-mistakes.txt``, the mistakes its code exercise can make, and each must be the message
of some hint rule of its suite, alone or inside a sentence that names two (``both``, ``either``). The
corpora and benchmarks/mistakes.py show the rules fire.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qkv.lessons import Lesson
from qkv.lessons.pyfiles import import_lesson_file
from tests import lesson_contract as contract

CATALOG = contract.catalog()
LESSONS = CATALOG.lessons
# Sentences of the catalogue that are no lesson's mistake: the grader's own words about a call.
NO_LESSONS_MISTAKE = {"MISMATCHED_TYPE_ERROR", "NOT_A_PAIR"}


def _chapter_module(lesson: Lesson) -> Path:
    return lesson.chapter.source.parent / "chapter.py"


def catalogue_sentence(lesson: Lesson, name: str) -> str:
    module, problems = import_lesson_file(_chapter_module(lesson))
    assert module is not None, problems
    sentence = getattr(module, name, None)
    assert isinstance(sentence, str), (
        f"{lesson.id} lists {name!r}, which the chapter's catalogue does not have"
    )
    return sentence


def hint_messages(lesson: Lesson) -> list[str]:
    entries = contract.code_exercises(lesson, CATALOG)
    return [hint.message for entry in entries for row in entry.suite.table for hint in row.hints]


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_the_lesson_names_every_catalogued_mistake_its_functions_can_make(lesson: Lesson) -> None:
    messages = hint_messages(lesson)
    listed = contract.catalogued_mistakes(lesson)
    missing = [name for name in listed if not any(catalogue_sentence(lesson, name) in m for m in messages)]
    assert missing == [], f"{lesson.id} does not name {missing}"


@pytest.mark.content
def test_every_catalogued_sentence_is_named_by_some_lesson() -> None:
    for chapter in CATALOG.chapters:
        lessons = [lesson for lesson in LESSONS if lesson.chapter_id == chapter.id]
        path = chapter.source.parent / "chapter.py"
        if not path.is_file():
            continue  # a chapter without a chapter.py has no catalogue
        module, problems = import_lesson_file(path)
        assert module is not None, problems
        applied = {name for lesson in lessons for name in contract.catalogued_mistakes(lesson)}
        sentences = {
            name
            for name, value in vars(module).items()
            if name.isupper() and isinstance(value, str) and value.endswith((".", ")", "…"))
        }
        assert sentences - applied <= NO_LESSONS_MISTAKE, sorted(sentences - applied)
