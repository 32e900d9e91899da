"""What every exercise tells the learner before they answer: how precisely a number is checked, and under Run,
that inputs are fresh each run and how long a run may take."""

from __future__ import annotations

import pytest

from qkv.grading import Limits
from qkv.lessons import CodeExercise, Exercise, Lesson
from qkv.lessons.feedback import decimals_checked
from qkv.lessons.render import FRESH_INPUTS_NOTE, exercise_html
from tests import lesson_contract as contract

CODE_EXERCISES = contract.catalog().code_exercises()

pytestmark = pytest.mark.content


@pytest.mark.parametrize("entry", CODE_EXERCISES, ids=[entry.id for entry in CODE_EXERCISES])
def test_every_code_exercise_states_fresh_inputs_and_its_time_limit(entry: CodeExercise) -> None:
    page = exercise_html(entry.exercise, entry.lesson.variant(None))
    limit = entry.suite.time_limit_s or Limits().wall_s
    assert f"{FRESH_INPUTS_NOTE} Each run may take up to {min(limit, Limits().wall_s):g} s" in page


NUMERIC = [
    (lesson, exercise) for lesson in contract.catalog().lessons for exercise in lesson.exercises.values()
    if exercise.kind == "numeric"
]  # fmt: skip


@pytest.mark.parametrize(("lesson", "exercise"), NUMERIC, ids=[f"{l.id}/{e.id}" for l, e in NUMERIC])
@pytest.mark.parametrize("seed", [None, 1, 7])
def test_every_numeric_prompt_states_the_precision_it_checks_and_means_it(
    lesson: Lesson, exercise: Exercise, seed: int | None
) -> None:
    value = lesson.variant(seed)[exercise.answer]
    page = exercise_html(exercise, lesson.variant(seed))
    decimals = decimals_checked(exercise, value)
    if decimals is None:  # whole numbers: nothing to say
        assert "precision-note" not in page
        return
    assert f'<span class="precision-note">Give {decimals} decimal' in page
    # typed to exactly that many decimals, the answer is right
    numbers = value if isinstance(value, list) else [value]
    typed = ", ".join(f"{number:.{decimals}f}" for number in numbers)
    assert lesson.check(exercise.id, typed, variant_seed=seed).correct, typed
