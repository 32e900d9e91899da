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

Unless the inputs are the lesson's own: when every input the widget sent (each vector and matrix) is a
value of the variant (``inputs_of_variant``), the result is the lesson's computation, and a row of whole
numbers of two components or more is guarded too (the lesson's own vector projected through its own
matrix is the lesson's answer, whole numbers or not).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from qkv.lessons.model import Exercise

__all__ = ["answers_given_away", "inputs_of_variant"]

SLACK = 10.0  # how many times the exercise's own tolerance a shown number may be off and still give it away


def answers_given_away(
    exercises: Iterable[Exercise],
    names: Mapping[str, Any],
    earned: Collection[str],
    shown: Iterable[Sequence[float | None]],
    *,
    whole_numbers: bool = False,
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
    whole_numbers : bool
        Whether rows of whole numbers are guarded too (the inputs were the lesson's own).

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
    >>> whole = Exercise(id="q", kind="numeric", part="p", prompt="", prompt_template="", answer="q")
    >>> answers_given_away([whole], {"q": [3, 2]}, set(), [[3.0, 2.0]])  # whole numbers are everywhere
    []
    >>> [e.id for e in answers_given_away([whole], {"q": [3, 2]}, set(), [[3.0, 2.0]], whole_numbers=True)]
    ['q']
    """
    vectors = [list(vector) for vector in shown]
    given: list[Exercise] = []
    for exercise in exercises:
        if exercise.kind != "numeric" or exercise.id in earned or exercise.answer not in names:
            continue
        rows = _guarded_rows(names[exercise.answer], whole_numbers)
        if any(_in_order(row, vector, exercise) for row in rows for vector in vectors):
            given.append(exercise)
    return given


def _guarded_rows(value: Any, whole_numbers: bool = False) -> list[list[float]]:
    """The rows of an answer worth guarding: two components or more, one of them not whole (unless
    ``whole_numbers``)."""
    if isinstance(value, bool | int | float) or not isinstance(value, Sequence):
        return []
    rows = value if value and all(isinstance(row, Sequence) for row in value) else [value]
    guarded = []
    for row in rows:
        try:
            numbers = [float(number) for number in row]
        except (TypeError, ValueError):
            continue  # words or shapes with words: nothing a widget computes
        if len(numbers) >= 2 and (whole_numbers or any(number != round(number) for number in numbers)):
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


INPUT_RTOL = 1e-6  # how close a sent input must be to a variant's value to be that value


def inputs_of_variant(inputs: Sequence[Any], names: Mapping[str, Any]) -> bool:
    """Whether every one of ``inputs`` (vectors and matrices) is a value of the variant ``names`` (its
    tables searched too), so that a result computed from them is the lesson's own computation.

    Examples
    --------
    >>> names = {"x": [1, 2], "Wq": [[1, 0], [1, 1]], "example": {"Wk": [[0, 1], [1, 0]]}}
    >>> inputs_of_variant([[1, 2], [[1, 0], [1, 1]], [[0, 1], [1, 0]]], names)
    True
    >>> inputs_of_variant([[1, 2], [[1, 0], [1, 2]]], names), inputs_of_variant([], names)
    (False, False)
    """
    known = [array for array in map(_as_array, _values(names)) if array is not None]
    sent = [_as_array(value) for value in inputs]
    return bool(sent) and all(one is not None and _among(one, known) for one in sent)


def _among(array: np.ndarray[Any, Any], known: Sequence[np.ndarray[Any, Any]]) -> bool:
    return any(k.shape == array.shape and np.allclose(array, k, rtol=INPUT_RTOL, atol=0) for k in known)


def _values(names: Mapping[str, Any]) -> Iterable[Any]:
    """Every value of a variant, with those of its tables (nested mappings)."""
    for value in names.values():
        if isinstance(value, Mapping):
            yield from _values(value)
        else:
            yield value


def _as_array(value: Any) -> np.ndarray[Any, Any] | None:
    """A vector or matrix of numbers as an array, or None for anything else (words, single numbers)."""
    if isinstance(value, str | bytes | bool | int | float) or not isinstance(value, Sequence):
        return None
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if array.ndim in (1, 2) and array.size > 0 and np.isfinite(array).all() else None
