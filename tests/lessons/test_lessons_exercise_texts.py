"""An exercise as a learner saw it (``Lesson.texts``): every question and named mistake of the built-in
chapter is filled with a variant's numbers, never left as a ``{{…}}`` template."""

from __future__ import annotations

import pytest

from qkv.lessons import LessonError, load_catalog
from tests import lesson_contract as contract


@pytest.mark.content
@pytest.mark.parametrize("seed", [None, 7, 2026])
def test_every_question_and_mistake_is_filled_in(seed: int | None) -> None:
    for lesson in contract.catalog().lessons:
        for exercise_id, exercise in lesson.exercises.items():
            texts = lesson.texts(exercise_id, seed)
            assert texts.prompt and "{{" not in texts.prompt, (lesson.id, exercise_id)
            assert "{{" not in texts.prompt_html and "<script" not in texts.prompt_html
            for key, sentence in texts.mistakes.items():
                assert sentence and "{{" not in sentence, (lesson.id, exercise_id, key)
            if exercise.kind != "choice":
                assert set(texts.mistakes) == set(exercise.mistakes)


def test_a_variant_changes_the_numbers_of_the_question() -> None:
    lesson = load_catalog().lessons[0]
    varying = [e for e, ex in lesson.exercises.items() if "{{" in ex.prompt_template]
    assert varying, "L4.1 has questions with numbers"
    assert any(lesson.texts(e).prompt != lesson.texts(e, 7).prompt for e in varying)


def test_an_unknown_exercise_is_refused_with_the_list() -> None:
    lesson = load_catalog().lessons[0]
    with pytest.raises(LessonError, match="has no exercise 'nope'"):
        lesson.texts("nope")
