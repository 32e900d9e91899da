"""Checking a typed answer and naming the mistake behind a wrong one.

Unreadable answers (empty, not numbers, the wrong number of components, a decimal comma, a letter
that is not an option) get a format message and do not count as an attempt. Readable wrong answers
are compared with the lesson's known mistakes first, then with the expected value component by
component.

One rule judges every typed number, in every lesson: it is right when it is the exact value to the
precision typed and that precision is enough for the exercise's tolerance (``0.670`` for 0.669762
where three decimals are checked), or when the exact value has no more decimals than were typed
(``0.2`` for 0.2, ``0`` for 0). The exact value rounded to fewer digits than that (``0.2`` for
0.19557) may be right: the learner is told to type more decimals, and no attempt is charged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from qkv.lessons.answers import (
    AnswerFormatError,
    TypedNumber,
    decimal_comma_message,
    example_vector,
    format_value,
    parse_letter,
    parse_typed_numbers,
)
from qkv.lessons.markup import fill
from qkv.lessons.model import Exercise, Feedback, LessonError

__all__ = ["CHECKER_MISTAKES", "REVERSE_ORDER", "check_answer", "decimals_checked", "precision_note"]

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def check_answer(exercise: Exercise, answer: str, names: Mapping[str, Any]) -> Feedback:
    """Check one typed answer against an exercise, with the variant's values in ``names``.

    Parameters
    ----------
    exercise : Exercise
        A numeric, letter or choice exercise.
    answer : str
        What the learner typed or picked.
    names : mapping
        The variant's values and the lesson's named wrong answers.

    Returns
    -------
    Feedback

    Raises
    ------
    LessonError
        If the exercise is a code exercise (those go to the grader) or ``answer`` is not a str.

    Examples
    --------
    >>> ex = Exercise(id="q", kind="numeric", part="practice", prompt="", prompt_template="", answer="q")
    >>> check_answer(ex, "3, 2", {"q": [3, 2]})
    Feedback(correct=True, message='Correct: q = [3, 2].', counted_as_attempt=True, mistake=None)
    >>> check_answer(ex, "3", {"q": [3, 2]}).counted_as_attempt
    False
    >>> ex = Exercise(id="q", kind="numeric", part="practice", prompt="", prompt_template="", answer="q",
    ...               mistakes={"q_swapped": "Those are the components swapped."})
    >>> check_answer(ex, "2, 3", {"q": [3, 2], "q_swapped": [2, 3]}).mistake
    'q_swapped'
    """
    if not isinstance(answer, str):
        raise LessonError(f"An answer must be text (a str), not the {type(answer).__name__} {answer!r}.")
    if exercise.kind == "numeric":
        return _judge_numeric(exercise, answer, names)
    if exercise.kind == "letter":
        return _judge_letter(exercise, answer, names)
    if exercise.kind == "choice":
        return _judge_choice(exercise, answer, names)
    raise LessonError(
        f"The exercise '{exercise.id}' is a code exercise; the grader runs its tests on a program, "
        "so it is not checked as a typed answer."
    )


def _as_numbers(value: Any) -> list[float]:
    if isinstance(value, int | float):
        return [float(value)]
    return [float(item) for item in value]


def _decimals_within(tolerance: float) -> int:
    """The fewest decimals whose rounding error (half a unit of the last one) stays within ``tolerance``."""
    return max(1, math.ceil(-math.log10(2 * tolerance)))


def decimals_checked(exercise: Exercise, value: Any) -> int | None:
    """How many decimals a typed answer needs to be judged right, or None when every component is whole.

    Examples
    --------
    >>> ex = Exercise(
    ...     id="w", kind="numeric", part="p", prompt="", prompt_template="", answer="w", atol=0.001, rtol=0
    ... )
    >>> decimals_checked(ex, [0.66976, 0.33024]), decimals_checked(ex, [3, 2])
    (3, None)
    """
    fractional = [number for number in _as_numbers(value) if number != round(number)]
    if not fractional:
        return None
    tolerance = min(max(exercise.atol, exercise.rtol * abs(number)) for number in fractional)
    return _decimals_within(tolerance) if tolerance > 0 else None


def precision_note(exercise: Exercise, value: Any) -> str:
    """The sentence a numeric prompt ends with: how precisely the box checks this variant's answer.

    Examples
    --------
    >>> ex = Exercise(
    ...     id="w", kind="numeric", part="p", prompt="", prompt_template="", answer="w", atol=0.001, rtol=0
    ... )
    >>> precision_note(ex, [0.66976, 0.33024]), precision_note(ex, [3, 2])
    ('Give 3 decimals (or more).', '')
    """
    decimals = decimals_checked(exercise, value)
    if decimals is None:
        return ""
    return f"Give {decimals} decimal{'s' * (decimals > 1)} (or more)."


class _Fit(Enum):
    """How one typed number fits the value it is compared with."""

    RIGHT = "right"  # within the tolerance and typed precisely enough, or exactly the value
    COARSE = "coarse"  # the value rounded to the digits typed, but too few digits to be judged right
    WRONG = "wrong"


def _tolerance(exercise: Exercise, value: float) -> float:
    return max(exercise.atol, exercise.rtol * abs(value))


def _coarsest(values: Sequence[float]) -> float:
    """Half a unit of the leading digit of the largest value: a coarser typed number shows no digit
    of the answer at all (``1`` for 0.7), so it is not said to be right, even rounded."""
    largest = max((abs(value) for value in values), default=0.0)
    return 0.5 * 10.0 ** math.floor(math.log10(largest)) if largest > 0 else 0.0


def _fits(typed: Sequence[TypedNumber], values: Sequence[float], exercise: Exercise) -> list[_Fit]:
    """The one rule for every typed number: right when it is the value to the precision typed and that
    precision is what the exercise checks (or the value has no more decimals than typed); coarse when it
    is the value rounded to fewer digits than that; wrong otherwise."""
    coarsest = _coarsest(values)
    fits = []
    for number, value in zip(typed, values, strict=True):
        tolerance = _tolerance(exercise, value) * (1 + 1e-9)
        precise = number.half_unit <= tolerance and abs(number.value - value) <= tolerance
        if number.is_exactly(value) or precise:
            fits.append(_Fit.RIGHT)
        elif number.rounds_from(value) and number.half_unit <= coarsest * (1 + 1e-9):
            fits.append(_Fit.COARSE)
        else:
            fits.append(_Fit.WRONG)
    return fits


def _close(got: Sequence[float], expected: Sequence[float], exercise: Exercise) -> list[bool]:
    return [
        math.isclose(g, e, rel_tol=exercise.rtol, abs_tol=exercise.atol)
        for g, e in zip(got, expected, strict=True)
    ]


def _agree(typed: Sequence[TypedNumber], values: Sequence[float], exercise: Exercise) -> bool:
    """Every typed number is within the exercise's tolerance of its value, or rounds from it."""
    if len(typed) != len(values):
        return False
    close = _close([t.value for t in typed], values, exercise)
    return all(ok or t.agrees_with(v) for t, v, ok in zip(typed, values, close, strict=True))


def _near(got: float, expected: float) -> bool:
    """Within 10 % (or 0.05 near zero): close enough to call a wrong number a slip rather than a method."""
    return math.isclose(got, expected, rel_tol=0.1, abs_tol=0.05)


def _shown(numbers: Sequence[float]) -> str:
    """A single number as a number, a vector as a list."""
    return format_value(numbers[0] if len(numbers) == 1 else list(numbers))


REVERSE_ORDER = "reverse_order"
"""The id under which a wrong answer that is the right numbers in reverse order is saved and counted."""
_REVERSED_OPENING = "Close: those are the right numbers, but in reverse order."
CHECKER_MISTAKES: Mapping[str, str] = {REVERSE_ORDER: _REVERSED_OPENING}
"""The mistakes the checker names itself for any numeric exercise, by id: the learner is told them as a
lesson's ``[mistakes]`` are told, and they are counted as named (the item statistics, the events export)."""


def _judge_numeric(exercise: Exercise, answer: str, names: Mapping[str, Any]) -> Feedback:
    expected = _as_numbers(names[exercise.answer])
    name = exercise.name or exercise.answer
    try:
        typed = parse_typed_numbers(answer, single=len(expected) == 1)
    except AnswerFormatError as error:
        return Feedback(False, str(error), False)
    if len(typed) != len(expected):
        got = [number.value for number in typed]
        message = decimal_comma_message(answer) or _length_message(name, got, len(expected))
        return Feedback(False, message, False)
    fits = _fits(typed, expected, exercise)
    if all(fit is _Fit.RIGHT for fit in fits):
        return Feedback(
            True,
            fill(exercise.correct_message, names) or f"Correct: {name} = {_shown(expected)}.",
            True,
        )
    named = _named_mistake(exercise, typed, expected, names, rounded=_Fit.WRONG not in fits)
    if named is not None:
        return named
    if _Fit.WRONG not in fits:  # the right value, typed too coarsely: not a wrong attempt
        return Feedback(False, _rounded_message(name, typed, expected, fits, exercise), False)
    message = _wrong_message(exercise, name, typed, expected, fits, names)
    comma = decimal_comma_message(answer)  # [0,804] is judged as two numbers, and told how it was read
    # The checker's own named mistake (the right numbers in reverse order) is counted as named.
    mistake = REVERSE_ORDER if message.startswith(_REVERSED_OPENING) else None
    return Feedback(False, f"{message} {comma}" if comma else message, True, mistake=mistake)


def _named_mistake(
    exercise: Exercise,
    typed: Sequence[TypedNumber],
    expected: Sequence[float],
    names: Mapping[str, Any],
    rounded: bool,
) -> Feedback | None:
    """The first named mistake the typed numbers show, or None.

    A mistake is recognised at the precision the learner typed (0.707 for 0.707107). Where what was
    typed is also the right answer ``rounded``, rounding is what to mention, unless the typed numbers
    are the mistake's own to the precision the exercise checks (``1, 0`` for the unscaled [1, 0]).
    """
    for key, message in exercise.mistakes.items():
        if key not in names:
            continue
        wrong = _as_numbers(names[key])
        if len(wrong) != len(typed) or all(_close(wrong, expected, exercise)):
            continue
        if rounded:
            shown = all(fit is _Fit.RIGHT for fit in _fits(typed, wrong, exercise))
        else:
            shown = _agree(typed, wrong, exercise)
        if shown:
            return Feedback(False, fill(message, names), True, mistake=key)
    return None


def _wrong_message(
    exercise: Exercise,
    name: str,
    typed: Sequence[TypedNumber],
    expected: Sequence[float],
    fits: Sequence[_Fit],
    names: Mapping[str, Any],
) -> str:
    """What to say about a wrong answer no named mistake explains: reversed, some components, or none."""
    hint = f" {fill(exercise.hint, names)}" if exercise.hint else ""
    got = [number.value for number in typed]
    backwards = expected[::-1]
    if (
        len(expected) > 1
        and _Fit.WRONG not in _fits(typed, backwards, exercise)
        and not all(_close(backwards, expected, exercise))
    ):
        # Right numbers, wrong order: say so without giving the answer away.
        return (
            f"{_REVERSED_OPENING} Write {name}[0] first, then "
            f"{name}[1]{', and so on' if len(expected) > 2 else ''}.{hint}"
        )
    matches = [fit is not _Fit.WRONG for fit in fits]
    if len(expected) > 1 and any(matches):
        wrong_places = [_ordinal(i) for i, ok in enumerate(matches) if not ok]
        right_places = [_ordinal(i) for i, ok in enumerate(matches) if ok]
        # "Almost" only when the wrong components are near (a slip in one number); a component that is far
        # off is more likely a different computation, which the hint, not "almost", should address.
        near = all(_near(g, e) for g, e, ok in zip(got, expected, matches, strict=True) if not ok)
        opening = "Almost: the" if near else "The"
        return (
            f"{opening} {_join(right_places)} component{_plural(right_places, 's are', ' is')} right, "
            f"but check the {_join(wrong_places)} component{_plural(wrong_places, 's', '')}.{hint}"
        )
    return f"Not quite: {_shown(got)} is not {name}.{hint}"


def _rounded_message(
    name: str,
    typed: Sequence[TypedNumber],
    expected: Sequence[float],
    fits: Sequence[_Fit],
    exercise: Exercise,
) -> str:
    """The right numbers, rounded further than the exercise accepts: say how many decimals it wants
    (the fewest whose rounding stays within the tolerance of every coarse component), or, where those
    are whole numbers, to type them in full."""
    off = [(t, e) for t, e, fit in zip(typed, expected, fits, strict=True) if fit is _Fit.COARSE]
    half_units = {t.half_unit for t, _ in off}
    typed_decimals = max(0, round(-math.log10(2 * min(half_units))))
    one = len(expected) == 1
    if len(half_units) > 1:
        typed_text = "the digits"  # some typed to more decimals than others
    elif typed_decimals > 0:
        typed_text = f"the {typed_decimals} decimal" + "s" * (typed_decimals > 1)
    elif min(half_units) <= 0.5:
        typed_text = "the whole number" if one else "the whole numbers"
    else:
        typed_text = "the digits"  # 1.05e6: fewer digits than the whole number has
    ask = _ask(off, exercise, typed_decimals, one)
    return f"Right to {typed_text} you typed, but this box checks {name} more closely than that; {ask}."


def _ask(off: Sequence[tuple[TypedNumber, float]], exercise: Exercise, typed_decimals: int, one: bool) -> str:
    """How to type the coarse components precisely enough."""
    if all(value == round(value) for _, value in off):
        return "type it in full, every digit" if one else "type them in full, every digit"
    tolerance = min(_tolerance(exercise, e) for _, e in off)
    if tolerance <= 0:
        return "type the exact value (a fraction is fine)"
    needed = max(typed_decimals + 1, _decimals_within(tolerance))
    return f"type at least {needed} decimal{'s' * (needed > 1)}"


def _length_message(name: str, got: list[float], size: int) -> str:
    if size == 1:
        return f"{name} is a single number, but you typed {len(got)} ({format_value(got)}); type just one."
    if len(got) == 1:
        every = "both" if size == 2 else f"all {size}"
        return (
            f"You typed a single number ({format_value(got[0])}), but {name} is a vector with {size} "
            f"components; type {every}, for example {example_vector(size)}."
        )
    typed = f"{len(got)} numbers ({format_value(got)})"
    return f"{name} has {size} components, but you typed {typed}; type exactly {size}."


def _judge_letter(exercise: Exercise, answer: str, names: Mapping[str, Any]) -> Feedback:
    try:
        letter = parse_letter(answer, exercise.options)
    except AnswerFormatError as error:
        return Feedback(False, str(error), False)
    if letter == exercise.answer:
        return Feedback(True, fill(exercise.correct_message, names) or f"Correct: {letter}.", True)
    hint = f" {exercise.hint}" if exercise.hint else ""
    message = exercise.mistakes.get(letter, f"Not {letter}.{hint}")
    mistake = letter if letter in exercise.mistakes else None
    return Feedback(False, fill(message, names), True, mistake=mistake)


def _judge_choice(exercise: Exercise, answer: str, names: Mapping[str, Any]) -> Feedback:
    letters = {choice.letter: choice for choice in exercise.choices}
    try:
        letter = parse_letter(answer, {letter: () for letter in letters})
    except AnswerFormatError as error:
        return Feedback(False, str(error), False)
    choice = letters[letter]
    return Feedback(
        choice.correct, fill(choice.feedback, names), True, mistake=None if choice.correct else letter
    )


def _ordinal(index: int) -> str:
    return _ORDINALS[index] if index < len(_ORDINALS) else f"number {index + 1}"


def _plural(items: list[str], many: str, one: str) -> str:
    return many if len(items) > 1 else one


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
