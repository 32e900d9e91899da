"""Hints: rules that recognise a known mistake in a failed test and name it in one sentence.

A lesson's test cases carry their hints. When a test fails, the grader builds an :class:`Outcome` (the
inputs, the expected value, what came back or what was raised, and the mismatch) and shows the first hint
whose rule matches. The rules are plain data:

* :class:`Mistake` — "a learner who makes this mistake returns ``compute(*args)``": it matches when the
  returned value (or one item of it) equals what the mistake computes for the same inputs;
* :class:`Returned` — the function returned (instead of raising, or a value that ``when`` recognises);
* :class:`Raised` — the function raised this exception (optionally with these words in its message).

Only :data:`STUB` and :func:`missing_function_hint` are sentences of the grader itself: every lesson's
starter code has ``pass`` bodies and function names to keep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from qkv.grading.compare import Comparator

__all__ = [
    "STUB",
    "Hint",
    "Mistake",
    "Outcome",
    "Raised",
    "Returned",
    "first_hint",
    "missing_function_hint",
]

# Hints are plain sentences (the page shows them as text): no Markdown, so no backticks.
STUB = "Your function still returns None: replace its pass with a return statement that gives the result."

_NOTHING = object()  # "the function did not return" (it raised), as opposed to returning None


@dataclass(frozen=True)
class Outcome:
    """What one failed test saw: enough for a hint rule to recognise a mistake.

    Parameters
    ----------
    args : tuple
        The inputs of the call.
    expected : Any
        The reference's value (ignored when an exception was expected).
    compare : Comparator
        The test's comparator; rules compare with it.
    returned : Any
        What the function returned, if it returned.
    exception, message : str or None
        The type name and message of what it raised, if it raised.
    at : str or int or None
        The item of the value that differs (from the comparator's Mismatch).
    """

    args: tuple[Any, ...]
    expected: Any
    compare: Comparator
    returned: Any = _NOTHING
    exception: str | None = None
    message: str = ""
    at: str | int | None = None

    @property
    def has_returned(self) -> bool:
        """Whether the function returned a value (None included) rather than raised."""
        return self.returned is not _NOTHING


class Hint(Protocol):
    """A rule that recognises one mistake and the sentence that names it."""

    message: str

    def matches(self, outcome: Outcome) -> bool:
        """Whether the failed test shows this mistake."""


def _compute(function: Callable[..., Any], args: Sequence[Any]) -> Any:
    """What a mistake computes for these inputs, or ``_NOTHING`` when it cannot compute anything here."""
    try:
        with np.errstate(all="ignore"):
            return function(*args)
    except (ArithmeticError, LookupError, TypeError, ValueError):
        return _NOTHING


def _item(value: Any, key: int | str) -> Any:
    try:
        return value[key]
    except (LookupError, TypeError):
        return _NOTHING


@dataclass(frozen=True)
class Mistake:
    """The learner made this mistake if the result equals what ``compute(*args)`` returns.

    Parameters
    ----------
    message : str
        The sentence that names the mistake.
    compute : callable
        Takes the test's arguments and returns what the mistaken code returns (or, with ``at``, that
        item of it).
    at : str or int, optional
        Compare only this item of the result (a name of an ``Items`` comparator, an index or a dict key).

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> doubled = Mistake("You doubled it.", lambda n: 2 * n)
    >>> [doubled.matches(Outcome((3,), 9, Whole(), returned=got)) for got in (6, 7)]
    [True, False]
    """

    message: str
    compute: Callable[..., Any]
    at: str | int | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not outcome.has_returned:
            return False
        wrong = _compute(self.compute, outcome.args)
        if wrong is _NOTHING:
            return False
        comparator: Comparator | None = outcome.compare
        got, expected = outcome.returned, outcome.expected
        if self.at is not None:
            found = outcome.compare.item(self.at)
            if found is None:
                return False
            comparator, key = found
            got, expected = _item(got, key), _item(expected, key)
            if got is _NOTHING or expected is _NOTHING:
                return False
        assert comparator is not None
        # A mistake that gives the right answer for these inputs says nothing about this result.
        return comparator.mismatch(wrong, expected) is not None and comparator.mismatch(got, wrong) is None


@dataclass(frozen=True)
class Returned:
    """The function returned a value (not None) where this rule applies; ``when`` narrows it down.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> rule = Returned("Raise ValueError for a negative size.")
    >>> rule.matches(Outcome((-1,), None, Whole(), returned=0)), rule.matches(Outcome((-1,), None, Whole()))
    (True, False)
    """

    message: str
    when: Callable[..., bool] | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not outcome.has_returned or outcome.returned is None:
            return False
        return self.when is None or bool(self.when(outcome.returned, *outcome.args))


@dataclass(frozen=True)
class Raised:
    """The function raised ``exception`` (by type name), with ``contains`` in its message if given.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> rule = Raised("Shapes do not broadcast.", "ValueError", contains="broadcast")
    >>> rule.matches(Outcome((), 1, Whole(), exception="ValueError", message="could not broadcast"))
    True
    """

    message: str
    exception: str
    contains: str | None = None

    def matches(self, outcome: Outcome) -> bool:
        if outcome.exception != self.exception:
            return False
        return self.contains is None or self.contains in outcome.message


def first_hint(hints: Sequence[Hint], outcome: Outcome) -> str | None:
    """The sentence of the first rule that matches, with the stub recognised before any of them.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> first_hint([], Outcome((1,), 2, Whole(), returned=None)) == STUB
    True
    >>> first_hint([Mistake("Off by one.", lambda n: n + 2)], Outcome((1,), 2, Whole(), returned=3))
    'Off by one.'
    """
    if outcome.has_returned and outcome.returned is None and outcome.expected is not None:
        return STUB
    for hint in hints:
        if hint.matches(outcome):
            return hint.message
    return None


def missing_function_hint(functions: Sequence[str]) -> str:
    """The hint for a file that lacks one of the exercise's functions.

    Examples
    --------
    >>> missing_function_hint(["area", "volume"])
    'Keep every function of the starter code, with its name spelled exactly: area and volume.'
    """
    names = list(functions)
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"Keep every function of the starter code, with its name spelled exactly: {listed}."
