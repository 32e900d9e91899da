"""Which of a lesson's unanswered numeric answers a computed result would give away.

A widget that computes for inputs the learner types (the chapter's attention explorer, say) must not
hand out an answer the page asks for before the learner has typed it: whatever the inputs, its result
is compared with every numeric answer of the lesson's current variant that is still unanswered, and a
result that contains one is withheld.

What counts as giving an answer away:

- an answer with at least two components, one of them not a whole number, whose components all
  appear, in order, among the numbers of one shown vector (a vector may hold more numbers: a key added
  in between does not hide a row of scores); each row of a matrix answer counts on its own;
- within ten times the tolerance the exercise checks, so inputs typed a little differently (rounded
  weights, say) do not slip past.

A single number, or a row of whole numbers, is not guarded, as the lessons' own check of their pages
does not guard them: such numbers are everywhere (a 2, a zero weight, the worked example's raw scores
[1, 0]), and withholding every result that shows one would hold back numbers that give nothing away.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from qkv.lessons.model import Exercise

__all__ = ["answers_given_away"]

SLACK = 10.0  # how many times the exercise's own tolerance a shown number may be off and still give it away


def answers_given_away(
    exercises: Iterable[Exercise],
    names: Mapping[str, Any],
    earned: Collection[str],
    shown: Iterable[Sequence[float | None]],
) -> list[Exercise]:
    """The numeric exercises not yet earned whose answer stands in one of the ``shown`` vectors.

    Parameters
    ----------
    exercises : iterable of Exercise
        A lesson's exercises; only the numeric ones are looked at.
    names : mapping
        The variant's values, where each numeric exercise's ``answer`` names its expected value.
    earned : collection of str
        Ids of the exercises the learner has answered correctly for this variant.
    shown : iterable of sequences of float or None
        The vectors a widget would show (None for a number it cannot show, such as −∞).

    Returns
    -------
    list of Exercise
        In the order given; empty when the result gives nothing away.

    Examples
    --------
    >>> ex = Exercise(id="w", kind="numeric", part="p", prompt="", prompt_template="", answer="w", atol=1e-3)
    >>> names = {"w": [0.19557, 0.80443]}
    >>> [e.id for e in answers_given_away([ex], names, set(), [[1.0, 2.0], [0.195570, 0.804430]])]
    ['w']
    >>> [e.id for e in answers_given_away([ex], names, {"w"}, [[0.195570, 0.804430]])]
    []
    >>> len(answers_given_away([ex], names, set(), [[0.19557, 0.5, 0.80443]]))  # a key added in between
    1
    >>> answers_given_away([ex], names, set(), [[0.80443, 0.19557]])  # another order is another answer
    []
    """
    vectors = [list(vector) for vector in shown]
    given: list[Exercise] = []
    for exercise in exercises:
        if exercise.kind != "numeric" or exercise.id in earned or exercise.answer not in names:
            continue
        rows = _guarded_rows(names[exercise.answer])
        if any(_in_order(row, vector, exercise) for row in rows for vector in vectors):
            given.append(exercise)
    return given


def _guarded_rows(value: Any) -> list[list[float]]:
    """The rows of an answer worth guarding: two components or more, one of them not whole."""
    if isinstance(value, bool | int | float) or not isinstance(value, Sequence):
        return []
    rows = value if value and all(isinstance(row, Sequence) for row in value) else [value]
    guarded = []
    for row in rows:
        try:
            numbers = [float(number) for number in row]
        except (TypeError, ValueError):
            continue  # words or shapes with words: nothing a widget computes
        if len(numbers) >= 2 and any(number != round(number) for number in numbers):
            guarded.append(numbers)
    return guarded


def _in_order(answer: Sequence[float], vector: Sequence[float | None], exercise: Exercise) -> bool:
    """Whether every component of ``answer`` matches a number of ``vector``, in order (earliest match
    first, which finds an ordered match whenever one exists)."""
    position = 0
    for expected in answer:
        while position < len(vector) and not _gives(vector[position], expected, exercise):
            position += 1
        if position == len(vector):
            return False
        position += 1
    return True


def _gives(shown: float | None, expected: float, exercise: Exercise) -> bool:
    if shown is None or not math.isfinite(shown):
        return False
    tolerance = SLACK * max(exercise.atol, exercise.rtol * abs(expected))
    return abs(shown - expected) <= tolerance
