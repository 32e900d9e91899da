"""Every lesson names each of the chapter's catalogued mistakes that its functions can make.

The catalogue (the chapter's ``chapter.py``) writes each sentence once; here, per lesson, the mistakes
its code exercise can make must each be the message of some hint rule of its suite, alone or inside a
sentence that names two (``both``, ``either``). The corpora and benchmarks/mistakes.py show the rules fire.
"""

from __future__ import annotations

import pytest

from qkv.lessons import load_catalog
from qkv.lessons.pyfiles import import_lesson_file

CATALOG = load_catalog()
CHAPTER = CATALOG.lessons[0].source.parents[1] / "chapter.py"

APPLIES = {
    "L4.1": ["BY_COLUMNS"],
    "L4.2": ["BY_DK", "NOT_SCALED", "TIMES_ROOT", "SCORES_TRANSPOSED", "NO_TRANSPOSE"],
    "L4.3": [
        "BY_DK",
        "NOT_SCALED",
        "SCORES_TRANSPOSED",
        "WEIGHTS_TRANSPOSED",
        "NO_KEEPDIMS",
        "SCORES_IN_PLACE",
    ],
    "L4.4": [
        "BY_DK",
        "NOT_SCALED",
        "SCORES_TRANSPOSED",
        "WEIGHTS_TRANSPOSED",
        "NO_KEEPDIMS",
        "SOFTMAX_AXIS",
        "TRIU",
        "DIAGONAL_EXCLUDED",
        "BOTTOM_RIGHT",
        "AFTER_SOFTMAX",
        "RENORMALISED",
        "MULTIPLIED",
        "ZERO_BY_ZERO",
    ],
    "L4.5": [
        "BY_DK",
        "NOT_SCALED",
        "BY_COLUMNS",
        "SCORES_TRANSPOSED",
        "WEIGHTS_TRANSPOSED",
        "NO_KEEPDIMS",
        "SOFTMAX_AXIS",
        "TRIU",
        "AFTER_SOFTMAX",
        "RENORMALISED",
        "SPLIT_WITHOUT_TRANSPOSE",
        "MERGE_WITHOUT_TRANSPOSE",
    ],
    "L4.6": [
        "POST_NORM",
        "RESIDUAL_FROM_NORMED",
        "X_TWICE",
        "SECOND_RESIDUAL_FROM_X",
        "SAME_NORM",
        "CAUSAL_NOT_PASSED",
        "UNBIASED_VARIANCE",
        "EPS_OUTSIDE",
        "EPS_HARD_CODED",
        "EXACT_GELU",
        "GELU_SQUARE",
        "GELU_SIGMOID",
        "GELU_NO_CUBE",
        "X_IN_PLACE",
    ],
}


def catalogue_sentence(name: str) -> str:
    module, problems = import_lesson_file(CHAPTER)
    assert module is not None, problems
    sentence = getattr(module, name)
    assert isinstance(sentence, str), name
    return sentence


def hint_messages(lesson_id: str) -> list[str]:
    entries = [entry for entry in CATALOG.code_exercises() if entry.lesson.id == lesson_id]
    assert entries, lesson_id
    return [hint.message for entry in entries for row in entry.suite.table for hint in row.hints]


def test_every_lesson_is_listed() -> None:
    assert sorted(APPLIES) == sorted(lesson.id for lesson in CATALOG.lessons)


@pytest.mark.parametrize("lesson_id", sorted(APPLIES))
def test_the_lesson_names_every_catalogued_mistake_its_functions_can_make(lesson_id: str) -> None:
    messages = hint_messages(lesson_id)
    missing = [
        name for name in APPLIES[lesson_id] if not any(catalogue_sentence(name) in m for m in messages)
    ]
    assert missing == [], f"{lesson_id} does not name {missing}"


def test_every_catalogued_sentence_is_named_by_some_lesson() -> None:
    module, problems = import_lesson_file(CHAPTER)
    assert module is not None, problems
    applied = {name for names in APPLIES.values() for name in names}
    sentences = {
        name
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str) and value.endswith((".", ")", "…"))
    }
    assert sentences - applied <= {"MISMATCHED_TYPE_ERROR", "NOT_A_PAIR"}, sorted(sentences - applied)
