"""Hand answers judged by one rule in every lesson, on every numeric exercise with its own exact values.

A typed number is right when it is the exact value to the precision typed and that precision is what
the prompt asks for, or when the exact value has no more decimals than were typed (0.2 for 0.2). The
exact value rounded to fewer decimals is told so and costs no attempt, and so does a decimal comma.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qkv.lessons import Exercise, Lesson
from qkv.lessons.answers import parse_typed_numbers
from qkv.lessons.feedback import decimals_checked
from tests import lesson_contract as contract

pytestmark = pytest.mark.content

NUMERIC = [
    (lesson, exercise) for lesson in contract.catalog().lessons for exercise in lesson.exercises.values()
    if exercise.kind == "numeric"
]  # fmt: skip
IDS = [f"{lesson.id}/{exercise.id}" for lesson, exercise in NUMERIC]
SEEDS = [None, 1, 7, 23]
# The exercises and variants whose answer has decimals (not whole numbers only), for the tests that
# round them or write them with a decimal comma.
FRACTIONAL = [
    (lesson, exercise, seed) for lesson, exercise in NUMERIC for seed in SEEDS
    if decimals_checked(exercise, lesson.variant(seed)[exercise.answer]) is not None
]  # fmt: skip
FRACTIONAL_IDS = [f"{lesson.id}/{exercise.id}/{seed}" for lesson, exercise, seed in FRACTIONAL]


def _values(lesson: Lesson, exercise: Exercise, seed: int | None) -> list[float]:
    return [float(number) for number in np.atleast_1d(np.asarray(lesson.variant(seed)[exercise.answer]))]


def _typed(values: list[float], decimals: int) -> str:
    """Each value rounded to ``decimals`` and written as a learner would: no trailing zeros (0.2, not 0.20)."""
    return "[" + ", ".join(_short(value, decimals) for value in values) + "]"


def _short(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def _exactly_typed(values: list[float], decimals: int) -> bool:
    """Whether every value has no more than ``decimals`` decimals (its rounding is the value itself)."""
    return all(math.isclose(value, round(value, decimals), rel_tol=1e-12, abs_tol=1e-12) for value in values)


@pytest.mark.parametrize(("lesson", "exercise"), NUMERIC, ids=IDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_exact_values_are_right_however_few_their_decimals(
    lesson: Lesson, exercise: Exercise, seed: int | None
) -> None:
    values = _values(lesson, exercise, seed)
    full = "[" + ", ".join(repr(value) for value in values) + "]"
    assert lesson.check(exercise.id, full, variant_seed=seed).correct, full
    decimals = decimals_checked(exercise, lesson.variant(seed)[exercise.answer])
    if decimals is None:  # whole numbers, typed as such or with a decimal point
        for typed in (_typed(values, 0), ", ".join(f"{value:.1f}" for value in values)):
            assert lesson.check(exercise.id, typed, variant_seed=seed).correct, typed
        return
    asked = ", ".join(f"{value:.{decimals}f}" for value in values)
    assert lesson.check(exercise.id, asked, variant_seed=seed).correct, asked
    for fewer in range(decimals):  # 0.2 for an exact 0.2, as the page may show it to more decimals
        if _exactly_typed(values, fewer):
            typed = _typed(values, fewer)
            assert lesson.check(exercise.id, typed, variant_seed=seed).correct, typed


@pytest.mark.parametrize(("lesson", "exercise", "seed"), FRACTIONAL, ids=FRACTIONAL_IDS)
def test_the_value_rounded_too_far_is_told_so_and_costs_no_attempt(
    lesson: Lesson, exercise: Exercise, seed: int | None
) -> None:
    values = _values(lesson, exercise, seed)
    decimals = decimals_checked(exercise, lesson.variant(seed)[exercise.answer])
    assert decimals is not None
    largest = max(abs(value) for value in values)
    for fewer in range(decimals):
        if _exactly_typed(values, fewer) or largest < 10.0**-fewer:
            continue  # exact at that precision (right), or no digit of the answer shown at all
        typed = ", ".join(f"{value:.{fewer}f}" for value in values)  # 1.0 keeps its decimal: not 1
        feedback = lesson.check(exercise.id, typed, variant_seed=seed)
        assert not feedback.correct, typed
        if feedback.mistake is not None:  # the typed numbers are a named mistake's own, to the digit
            named = lesson.hooks.namespace(lesson.variant(seed))[feedback.mistake]
            mistake = np.atleast_1d(np.asarray(named, dtype=float))
            assert all(n.is_exactly(m) for n, m in zip(parse_typed_numbers(typed), mistake, strict=True))
            continue
        assert not feedback.counted_as_attempt, (typed, feedback.message)
        assert feedback.message.startswith("Right to the"), feedback.message
        needed = max(fewer + 1, decimals)
        assert f"type at least {needed} decimal{'s' * (needed > 1)}." in feedback.message, feedback.message


@pytest.mark.parametrize(("lesson", "exercise", "seed"), FRACTIONAL, ids=FRACTIONAL_IDS)
def test_a_decimal_comma_is_told_and_not_read_as_two_numbers(
    lesson: Lesson, exercise: Exercise, seed: int | None
) -> None:
    values = _values(lesson, exercise, seed)
    decimals = decimals_checked(exercise, lesson.variant(seed)[exercise.answer])
    assert decimals is not None
    typed = " ".join(f"{value:.{decimals}f}".replace(".", ",") for value in values)
    feedback = lesson.check(exercise.id, typed, variant_seed=seed)
    assert not feedback.correct and not feedback.counted_as_attempt, (typed, feedback.message)
    assert "a comma separates numbers here" in feedback.message and "with a point" in feedback.message
