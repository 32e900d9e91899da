"""Every code exercise says, under its Run button, that inputs are fresh each run and how long a run may take."""

from __future__ import annotations

import pytest

from qkv.grading import Limits
from qkv.lessons import CodeExercise, load_catalog
from qkv.lessons.render import FRESH_INPUTS_NOTE, exercise_html

CODE_EXERCISES = load_catalog().code_exercises()


@pytest.mark.parametrize("entry", CODE_EXERCISES, ids=[entry.id for entry in CODE_EXERCISES])
def test_every_code_exercise_states_fresh_inputs_and_its_time_limit(entry: CodeExercise) -> None:
    page = exercise_html(entry.exercise, entry.lesson.variant(None))
    limit = entry.suite.time_limit_s or Limits().wall_s
    assert f"{FRESH_INPUTS_NOTE} Each run may take up to {min(limit, Limits().wall_s):g} s" in page
