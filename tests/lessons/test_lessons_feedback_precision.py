"""How typed answers are read at the precision the learner typed them, on exercises made up here.

A right answer rounded too far is told so (and how many decimals the box wants) and costs no attempt,
a named mistake is recognised when typed to two or more significant digits, and single numbers are
echoed as numbers.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.lessons.answers import TypedNumber, parse_numbers, parse_typed_numbers
from qkv.lessons.feedback import check_answer
from qkv.lessons.model import Exercise, Feedback

SCALED = 2**-0.5  # 0.707107
NAMES = {"scores": [SCALED, 0.0], "unscaled": [1.0, 0.0], "twice": [2 * SCALED, 0.0], "count": 1048576}


def _exercise(atol: float = 0.001, rtol: float = 0.0, answer: str = "scores") -> Exercise:
    return Exercise(
        id="ex",
        kind="numeric",
        part="practice",
        prompt="",
        prompt_template="",
        answer=answer,
        name="the scores" if answer == "scores" else "the count",
        atol=atol,
        rtol=rtol,
        mistakes={"unscaled": "Those are not scaled yet.", "twice": "You multiplied by √d_k."},
    )


@pytest.mark.parametrize(
    ("answer", "half_units"),
    [
        ("[0.71, 0]", [0.005, 0.5]),
        ("0.7071 -3", [0.00005, 0.5]),
        ("1/3", [0.0]),
        ("1.5e3, 2.50E-2", [50.0, 0.00005]),
        ("+.5", [0.05]),
    ],
)
def test_each_number_keeps_half_of_its_last_typed_digit(answer: str, half_units: list[float]) -> None:
    typed = parse_typed_numbers(answer)
    assert [number.half_unit for number in typed] == pytest.approx(half_units)
    assert [number.value for number in typed] == parse_numbers(answer)


def test_one_digit_is_too_little_to_agree_with_a_value() -> None:
    assert TypedNumber(0.71, 0.005).agrees_with(SCALED)
    assert not TypedNumber(0.7, 0.05).agrees_with(SCALED)  # 0.7 is one digit: it could be anything near
    assert not TypedNumber(0.72, 0.005).agrees_with(SCALED)  # two digits, but not SCALED's
    assert TypedNumber(0.0, 0.5).agrees_with(0.0) and not TypedNumber(0.0, 0.5).agrees_with(0.3)


@pytest.mark.parametrize(
    ("answer", "message", "counted"),
    [
        (
            "[0.71, 0]",
            "Right to the 2 decimals you typed, but this box checks the scores more closely than that; "
            "type at least 3 decimals.",
            False,  # the right value typed too coarsely is not a wrong attempt: it costs nothing
        ),
        (
            "0.7, 0",
            # one digit is still the value rounded: too coarse to judge, so it costs nothing either
            "Right to the 1 decimal you typed, but this box checks the scores more closely than that; "
            "type at least 3 decimals.",
            False,
        ),
        (
            "1, 0",
            # a whole number shows no digit of 0.707 at all: not said to be right (it is a named mistake)
            "Those are not scaled yet.",
            True,
        ),
    ],
)
def test_a_right_answer_rounded_too_far_is_told_how_many_decimals(
    answer: str, message: str, counted: bool
) -> None:
    feedback = check_answer(_exercise(), answer, NAMES)
    assert feedback == Feedback(False, message, counted)
    assert "0.707" not in feedback.message  # the answer itself is not given away


def test_the_decimals_asked_for_follow_the_tolerance() -> None:
    relative = check_answer(_exercise(atol=1e-6, rtol=1e-5), "[0.707, 0]", NAMES)
    assert relative.message.endswith("type at least 5 decimals.")
    exact = check_answer(_exercise(atol=0.0), "[0.7071068, 0]", NAMES)
    assert exact.message.endswith("type the exact value (a fraction is fine).")
    assert check_answer(_exercise(), "[0.707, 0]", NAMES).correct  # within the tolerance: right


@pytest.mark.parametrize(
    ("answer", "mistake"), [("[1.41, 0]", "twice"), ("[1.4142, 0]", "twice"), ("1, 0", "unscaled")]
)
def test_a_named_mistake_is_recognised_at_the_precision_typed(answer: str, mistake: str) -> None:
    feedback = check_answer(_exercise(), answer, NAMES)
    assert (feedback.correct, feedback.mistake) == (False, mistake)


def test_a_mistake_typed_to_one_digit_is_not_named() -> None:
    exercise = _exercise()
    halved = {**NAMES, "twice": [SCALED / 2, 0.0]}  # 0.353553
    assert check_answer(exercise, "[0.35, 0]", halved).mistake == "twice"
    assert check_answer(exercise, "[0.4, 0]", halved).mistake is None  # 0.4 is 0.35 to one digit


def test_rounding_wins_where_the_typed_numbers_fit_the_answer_and_a_mistake() -> None:
    names = {**NAMES, "twice": [0.709, 0.0]}  # a mistake within rounding of the answer
    feedback = check_answer(_exercise(atol=0.0001), "[0.71, 0]", names)
    assert feedback.mistake is None and feedback.message.startswith("Right to the 2 decimals you typed")


def test_a_single_number_is_echoed_as_a_number() -> None:
    exercise = _exercise(atol=0.0, answer="count")
    assert check_answer(exercise, "1048576", NAMES).message == "Correct: the count = 1048576."
    assert check_answer(exercise, "8", NAMES).message == "Not quite: 8 is not the count."


def test_thousands_separators_are_read_where_one_number_is_asked_for() -> None:
    exercise = _exercise(atol=0.0, answer="count")
    assert check_answer(exercise, "1,048,576", NAMES).correct
    # Where a vector is asked for, commas separate its components as always.
    assert parse_typed_numbers("1,048,576")[0].value == 1.0
    assert check_answer(_exercise(), "1,048", NAMES).message.startswith("Not quite: [1, 48]")


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 6))
def test_a_value_rounded_to_two_or_more_digits_agrees_with_it(value: float, decimals: int) -> None:
    text = f"{value:.{decimals}f}"
    typed = parse_typed_numbers(text)[0]
    assert typed.half_unit == pytest.approx(0.5 * 10.0**-decimals)
    if typed.half_unit <= 0.05 * abs(value):  # two or more significant digits typed
        assert typed.agrees_with(value), text
    elif not math.isclose(typed.value, value):
        assert not typed.agrees_with(value), text


def test_an_exact_value_is_right_with_no_more_decimals_than_it_has() -> None:
    names = {**NAMES, "scores": [0.2, -1.1]}
    exercise = _exercise(atol=1e-6)  # six decimals checked, but 0.2 has one
    assert check_answer(exercise, "[0.2, -1.1]", names).correct
    assert check_answer(exercise, "[0.20, -1.10]", names).correct
    assert not check_answer(exercise, "[0.2, -1.1]", {**names, "scores": [0.2000004, -1.1]}).correct


def test_components_rounded_to_different_decimals_are_told_together() -> None:
    names = {**NAMES, "scores": [-1.069043, -0.534522, 0.0, 1.603565]}
    feedback = check_answer(_exercise(), "[-1.07, -0.5, 0, 1.6]", names)
    assert feedback == Feedback(
        False,
        "Right to the digits you typed, but this box checks the scores more closely than that; "
        "type at least 3 decimals.",
        False,
    )
    one = check_answer(_exercise(), "[-1.1, -0.5, 0, 1.6]", names)
    assert one.message.startswith("Right to the 1 decimal you typed") and not one.counted_as_attempt
    wrong = check_answer(_exercise(), "[-1.1, -0.6, 0, 1.6]", names)  # -0.6 is not -0.53 rounded
    assert wrong.counted_as_attempt and wrong.message.startswith(
        "The first, third and fourth components are right"
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            "0,71 0",
            "'0,71' reads as two numbers, 0 and 71: a comma separates numbers here. "
            "Write decimals with a point, as in 0.71.",
        ),
        (
            "[0,707, 0,0]",
            "'0,707' reads as two numbers, 0 and 707: a comma separates numbers here. "
            "Write decimals with a point, as in 0.707.",
        ),
    ],
)
def test_a_decimal_comma_gets_a_sentence_and_costs_nothing(answer: str, message: str) -> None:
    assert check_answer(_exercise(), answer, NAMES) == Feedback(False, message, False)


def test_a_comma_that_may_be_a_decimal_comma_is_said_how_it_was_read() -> None:
    # Two numbers are asked for, and [0,5] reads as two: judged so, and told so.
    feedback = check_answer(_exercise(), "[0,5]", NAMES)
    assert feedback.counted_as_attempt and feedback.message == (
        "Not quite: [0, 5] is not the scores. '0,5' reads as two numbers, 0 and 5: a comma separates "
        "numbers here. Write decimals with a point, as in 0.5."
    )
    one = _exercise(atol=0.0, answer="count")
    assert check_answer(one, "1,5", NAMES).message.startswith("'1,5' reads as two numbers, 1 and 5")
    assert check_answer(one, "7,500", NAMES) == Feedback(
        False,
        "'7,500' could be 7500 or 7.500: a comma separates numbers here. Write 7500 without the comma, "
        "or decimals with a point, as in 7.500.",
        False,
    )
    assert check_answer(one, "1,048,576", NAMES).correct  # two separators: thousands, one reading only


def test_a_whole_number_typed_with_fewer_digits_is_asked_for_in_full() -> None:
    exercise = _exercise(atol=0.0, rtol=1e-6, answer="count")
    assert check_answer(exercise, "1.05e6", NAMES) == Feedback(
        False,
        "Right to the digits you typed, but this box checks the count more closely than that; "
        "type it in full, every digit.",
        False,
    )
    assert check_answer(exercise, "1048576", NAMES).correct
