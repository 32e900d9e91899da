"""Hints: rules that recognise a known mistake in a failed test and name it in one sentence.

A lesson's test cases carry their hints. When a test fails, the grader builds an :class:`Outcome` (the
inputs, the expected value, what came back or what was raised, and the mismatch) and shows the first hint
whose rule matches. The rules are plain data:

* :class:`Mistake` — "a learner who makes this mistake returns ``compute(*args)``": it matches when the
  returned value (or one item of it) equals what the mistake computes for the same inputs;
* :class:`Returned` — the function returned (instead of raising, or a value that ``when`` recognises);
* :class:`Raised` — the function raised this exception (optionally with these words in its message, a
  message matching a regular expression, and arguments that a predicate recognises, such as shapes that
  tell ``A.T @ V`` from ``V @ A``);
* :class:`Mutated` — the function changed one of its arguments in place (a suite checks this by default);
* :class:`Warned` — the function emitted a warning where its test refuses them.

Every rule takes ``requires``: a precondition on the test's inputs, called with the test's arguments (the
grader's copies), that says whether those inputs can produce the rule's cause at all (a fully-masked row
exists, a row lies far below the matrix's maximum, an input is float32: see
:mod:`qkv.grading.feedback.preconditions`). Where it is false (or raises), the rule does not match and the
next explanation speaks: a sentence that names a cause the inputs cannot have would mislead.

Only :data:`STUB` and :func:`missing_function_hint` are sentences of the grader itself: every lesson's
starter code has ``pass`` bodies and function names to keep.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from qkv.grading.compare import Comparator, agrees

__all__ = [
    "STUB",
    "Emitted",
    "Hint",
    "Mistake",
    "Mutated",
    "Outcome",
    "Raised",
    "Returned",
    "Warned",
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
        The nearest built-in class and the message of what it raised, if it raised.
    at : str or int or None
        The item of the value that differs (from the comparator's Mismatch).
    raised_type : str
        The name of the raised exception's own class (``"AxisError"``), which may not be a built-in one.
    bases : tuple of str
        Every built-in class the raised exception is an instance of, nearest first.
    changed : tuple of int
        The positions of the arguments the call changed in place (when the test checks its inputs).
    warnings : tuple of Emitted
        The warnings the call emitted (when the test refuses warnings).
    own_raise : bool
        Whether a ``raise`` statement of the learner's file raised the exception.
    code : ast.Module or None
        The learner's file, parsed, for rules whose cause must show in the code (``shows=``).
    """

    args: tuple[Any, ...]
    expected: Any
    compare: Comparator
    returned: Any = _NOTHING
    exception: str | None = None
    message: str = ""
    at: str | int | None = None
    raised_type: str = ""
    bases: tuple[str, ...] = ()
    changed: tuple[int, ...] = ()
    warnings: tuple[Emitted, ...] = ()
    own_raise: bool = False  # a raise statement of the learner's file raised it (not NumPy, not an operator)
    code: Any = field(default=None, compare=False, repr=False)  # the learner's file, parsed (or None)

    @property
    def has_returned(self) -> bool:
        """Whether the function returned a value (None included) rather than raised."""
        return self.returned is not _NOTHING


@dataclass(frozen=True)
class Emitted:
    """A warning the learner's call emitted.

    Parameters
    ----------
    category : str
        The name of its class, such as ``"RuntimeWarning"``.
    bases : tuple of str
        The built-in warning classes it is an instance of, nearest first.
    message : str
        Its text, such as ``"invalid value encountered in divide"``.
    line : int or None
        The line of the learner's file that emitted it, when it was there.
    """

    category: str
    bases: tuple[str, ...]
    message: str
    line: int | None = None


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
    requires : callable, optional
        A precondition on the test's arguments: the rule matches only where it returns true.
    shows : callable, optional
        A precondition on the learner's code (its syntax tree, :mod:`ast`): the rule matches only where
        it returns true (two mistakes that give the same numbers: the one the code writes). Without the
        code, it holds.

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
    requires: Callable[..., bool] | None = None
    shows: Callable[[Any], bool] | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not outcome.has_returned or not _required(self.requires, outcome.args):
            return False
        if self.shows is not None and outcome.code is not None and not _holds(self.shows, (outcome.code,)):
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
        return not agrees(comparator, wrong, expected) and agrees(comparator, got, wrong)


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
    requires: Callable[..., bool] | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not outcome.has_returned or outcome.returned is None:
            return False
        if not _required(self.requires, outcome.args):
            return False
        return self.when is None or bool(self.when(outcome.returned, *outcome.args))


@dataclass(frozen=True)
class Raised:
    r"""The function raised ``exception``, with a message and arguments that fit, if those are given.

    Parameters
    ----------
    message : str
        The sentence that names the mistake.
    exception : str
        A built-in class the exception is an instance of (``"ValueError"`` matches NumPy's ``AxisError``,
        a subclass) or the name of its own class (``"AxisError"``).
    contains : str, optional
        Words its message must contain.
    pattern : str, optional
        A regular expression its message must match somewhere (``re.search``), such as
        ``r"shapes \(\d+,\d+\) \(\d+,\)"`` for a row reduction without ``keepdims``.
    when : callable, optional
        Called with the test's arguments (the grader's own copies); the rule matches only when it returns
        true, e.g. ``lambda A, V: A.shape[0] != A.shape[1]`` to tell ``A.T @ V`` apart where it cannot run.
        A predicate that raises counts as false.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> rule = Raised("Shapes do not broadcast.", "ValueError", contains="broadcast")
    >>> rule.matches(Outcome((), 1, Whole(), exception="ValueError", message="could not broadcast"))
    True
    >>> transposed = Raised("A.T @ V: the weights are not transposed.", "ValueError", pattern=r"^matmul:",
    ...                     when=lambda A, V: A.shape[0] != A.shape[1])
    >>> seen = Outcome((np.ones((2, 3)), np.ones((3, 4))), 1, Whole(), exception="ValueError",
    ...                message="matmul: Input operand 1 has a mismatch in its core dimension 0")
    >>> transposed.matches(seen)
    True
    >>> Raised("Axis.", "IndexError").matches(Outcome((), 1, Whole(), exception="ValueError",
    ...     raised_type="AxisError", bases=("ValueError", "IndexError", "LookupError", "Exception")))
    True
    """

    message: str
    exception: str
    contains: str | None = None
    pattern: str | None = None
    when: Callable[..., bool] | None = None
    requires: Callable[..., bool] | None = None

    def __post_init__(self) -> None:
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as error:
                raise ValueError(
                    f"The pattern {self.pattern!r} of a Raised hint is not valid: {error}."
                ) from None

    def matches(self, outcome: Outcome) -> bool:
        if outcome.exception is None:
            return False
        if self.exception not in (outcome.exception, outcome.raised_type, *outcome.bases):
            return False
        if self.contains is not None and self.contains not in outcome.message:
            return False
        if self.pattern is not None and re.search(self.pattern, outcome.message) is None:
            return False
        if not _required(self.requires, outcome.args):
            return False
        return self.when is None or _holds(self.when, outcome.args)


def _required(requires: Callable[..., bool] | None, args: Sequence[Any]) -> bool:
    """Whether the test's inputs can produce the rule's cause (a rule without a precondition: always)."""
    return requires is None or _holds(requires, args)


def _holds(predicate: Callable[..., bool], args: Sequence[Any]) -> bool:
    """``predicate(*args)``, with an exception counted as false (the inputs may not fit it)."""
    try:
        return bool(predicate(*args))
    except Exception:
        return False


@dataclass(frozen=True)
class Mutated:
    """The function changed an argument in place (the one at ``argument``, counted from 0, if given).

    Examples
    --------
    >>> from qkv.grading.compare import Close
    >>> rule = Mutated("S -= S.max(...) shifts the caller's scores too.", argument=0)
    >>> rule.matches(Outcome((1,), 1.0, Close(), returned=1.0, changed=(0,)))
    True
    >>> rule.matches(Outcome((1, 2), 1.0, Close(), returned=1.0, changed=(1,)))
    False
    """

    message: str
    argument: int | None = None
    requires: Callable[..., bool] | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not _required(self.requires, outcome.args):
            return False
        if self.argument is None:
            return bool(outcome.changed)
        return self.argument in outcome.changed


@dataclass(frozen=True)
class Warned:
    """The function emitted a warning (of ``category``, with ``contains`` in its message, if given).

    Examples
    --------
    >>> from qkv.grading.compare import Close
    >>> rule = Warned("A fully masked row divides 0 by 0.", "RuntimeWarning", contains="invalid value")
    >>> emitted = Emitted("RuntimeWarning", ("RuntimeWarning",), "invalid value encountered in divide")
    >>> rule.matches(Outcome((), 1.0, Close(), returned=1.0, warnings=(emitted,)))
    True
    """

    message: str
    category: str | None = None
    contains: str | None = None
    requires: Callable[..., bool] | None = None

    def matches(self, outcome: Outcome) -> bool:
        if not _required(self.requires, outcome.args):
            return False
        return any(
            (self.category is None or self.category in (warning.category, *warning.bases))
            and (self.contains is None or self.contains in warning.message)
            for warning in outcome.warnings
        )


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
