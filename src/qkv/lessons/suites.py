"""A lesson's grading module: ``grading.py`` in its folder, with one test suite per code exercise.

The module defines ``SUITES``, a dict from the id of each code exercise of the lesson to its
:class:`qkv.grading.Suite`. A lesson without code exercises needs no such file.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from qkv.grading import Suite, TestCase
from qkv.grading.feedback.hints import Returned
from qkv.lessons.model import Problem
from qkv.lessons.pyfiles import import_lesson_file

__all__ = ["GRADING_FILE", "load_suites"]

GRADING_FILE = "grading.py"


def load_suites(folder: Path) -> tuple[Mapping[str, Suite], list[Problem]]:
    """The suites of the lesson in ``folder``, by exercise id (empty when it has no ``grading.py``).

    Returns
    -------
    suites : mapping of str to Suite
    problems : list of Problem
        Why the grading module could not be used, located as ``file:line``.

    Examples
    --------
    >>> load_suites(Path("/nonexistent"))
    ({}, [])
    """
    path = folder / GRADING_FILE
    if not path.is_file():
        return {}, []
    module, problems = import_lesson_file(path)
    if module is None:
        return {}, problems
    suites = getattr(module, "SUITES", None)
    if not isinstance(suites, dict):
        found = "nothing" if suites is None else f"a {type(suites).__name__}"
        return {}, [
            Problem(
                path, 1, f"A grading module defines SUITES, a dict of exercise ids to Suites, not {found}."
            )
        ]
    wrong = [key for key, suite in suites.items() if not isinstance(key, str) or not isinstance(suite, Suite)]
    if wrong:
        value = suites[wrong[0]]
        return {}, [
            Problem(
                path,
                1,
                f"SUITES[{wrong[0]!r}] must be a qkv.grading.Suite keyed by an exercise id, "
                f"not the {type(value).__name__} {value!r}."[:300],
            )
        ]
    return dict(suites), check_predicates(path, suites)


# A hint's predicates and what the grader calls each with: ``when`` of a Returned gets the value returned
# and then the test's arguments; every other ``when`` and ``requires`` gets the test's arguments.
PREDICATES = ("when", "requires")


def check_predicates(path: Path, suites: Mapping[str, Suite]) -> list[Problem]:
    """The ``when=`` and ``requires=`` callables of every hint that cannot take what the grader passes them.

    Each is tried on the arguments of each test row it serves (their number only: nothing is called), so
    that a predicate with the wrong parameters is refused when the lesson loads, not counted as false at
    every grading. A predicate whose signature Python cannot read (a built-in) is not checked.

    Examples
    --------
    >>> from qkv.grading.feedback.hints import Returned
    >>> def area(w, h):
    ...     return w * h
    >>> def bad(got, w):
    ...     return got == w
    >>> row = TestCase("area", "area", (2, 3), area, hints=[Returned("Half.", when=bad)])
    >>> (problem,) = check_predicates(Path("L9.1-areas/grading.py"), {"area": Suite(["area"], [row])})
    >>> problem.message.split(", which")[0]
    "In the lesson folder L9.1-areas, the when= of Returned('Half.') is bad(got, w)"
    >>> problem.message.split(": ")[-1]
    "the value returned, then the test's arguments (got, w, h)."
    """
    problems: dict[tuple[int, str], Problem] = {}
    for suite in suites.values():
        for row in suite.table:
            parameters = _parameters(row)
            if parameters is None:
                continue
            for hint, attribute, predicate in _predicates(row):
                returned = attribute == "when" and isinstance(hint, Returned)
                passed = ["got", *parameters] if returned else parameters
                if (id(predicate), attribute) in problems or _takes(predicate, len(passed)):
                    continue
                problems[(id(predicate), attribute)] = _problem(
                    path, hint, attribute, predicate, returned, passed
                )
    return list(problems.values())


def _predicates(row: TestCase) -> Iterator[tuple[Any, str, Callable[..., Any]]]:
    for hint in row.hints:
        for attribute in PREDICATES:
            predicate = getattr(hint, attribute, None)
            if callable(predicate):
                yield hint, attribute, predicate


def _parameters(row: TestCase) -> list[str] | None:
    """The names of the arguments a row passes (the reference's, else a1, a2, ...); None if not known."""
    try:
        count = len(row.draw_args(np.random.default_rng(0)))
    except Exception:  # a drawing that fails is reported when the exercise is graded
        return None
    try:
        names = list(inspect.signature(row.expect).parameters) if callable(row.expect) else []
    except (TypeError, ValueError):
        names = []
    return names if len(names) == count else [f"a{number}" for number in range(1, count + 1)]


def _takes(predicate: Callable[..., Any], count: int) -> bool:
    """Whether ``predicate`` can be called with ``count`` positional arguments (True when unknown)."""
    try:
        inspect.signature(predicate).bind(*range(count))
    except ValueError:
        return True
    except TypeError:
        return False
    return True


def _problem(
    path: Path,
    hint: Any,
    attribute: str,
    predicate: Callable[..., Any],
    returned: bool,
    passed: list[str],
) -> Problem:
    code = getattr(predicate, "__code__", None)
    here = code is not None and Path(code.co_filename).resolve() == path.resolve()
    line = code.co_firstlineno if code is not None and here else 1
    name, parameters = getattr(predicate, "__name__", repr(predicate)), _parameter_list(predicate)
    described = f"{name}({parameters})"
    if name == "<lambda>":
        described = f"the lambda ({parameters})" + (f" at line {line}" if here else "")
    what = "the value returned, then the test's arguments" if returned else "the test's arguments"
    message = (
        f"In the lesson folder {path.parent.name}, the {attribute}= of {type(hint).__name__}"
        f"({str(hint.message)[:60]!r}) is {described}, which cannot take what the "
        f"grader passes it: {what} ({', '.join(passed)})."
    )
    return Problem(path, line, message)


def _parameter_list(predicate: Callable[..., Any]) -> str:
    """The parameters as written, without their annotations: ``got, *args``."""
    parameters = inspect.signature(predicate).parameters.values()
    return ", ".join(str(parameter.replace(annotation=parameter.empty)) for parameter in parameters)
