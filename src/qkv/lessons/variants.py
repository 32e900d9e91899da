"""Variants: the numbers a lesson page shows and checks against, made by the lesson's own ``lesson.py``.

A lesson folder may hold a ``lesson.py`` with

* ``variant(seed: int | None) -> dict``: the seed page's numbers for ``None``, otherwise numbers drawn
  deterministically from ``seed``; the dict is JSON-able and holds ``"seed"`` plus every value the
  lesson's ``{{placeholders}}`` and numeric answers name;
* ``wrong_answers(data: dict) -> dict`` (optional): the results of known mistakes, by name, so that an
  exercise's ``[mistakes]`` table can name them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qkv.lessons.model import LessonError, Problem
from qkv.lessons.pyfiles import import_lesson_file, line_in

__all__ = ["MAX_SEED", "LessonHooks", "check_seed", "load_hooks"]

MAX_SEED = 2**63 - 1

VariantFunction = Callable[[int | None], dict[str, Any]]
WrongAnswersFunction = Callable[[dict[str, Any]], dict[str, Any]]


def check_seed(seed: object) -> int | None:
    """Return ``seed`` if it is None or a whole number in ``[0, 2**63)``; otherwise raise.

    Raises
    ------
    LessonError
        If the seed is a bool, not an int, or out of range; the message quotes it.

    Examples
    --------
    >>> check_seed(7), check_seed(None)
    (7, None)
    >>> check_seed("7")
    Traceback (most recent call last):
    ...
    qkv.lessons.model.LessonError: A variant seed must be a whole number ... not the str '7'.
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise LessonError(
            f"A variant seed must be a whole number from 0 to {MAX_SEED} or None, "
            f"not the {type(seed).__name__} {seed!r}."
        )
    return seed


@dataclass(frozen=True)
class LessonHooks:
    """The functions a lesson's ``lesson.py`` provides (both optional).

    Examples
    --------
    >>> LessonHooks().variant(None)
    {'seed': None}
    """

    variant_function: VariantFunction | None = None
    wrong_answers_function: WrongAnswersFunction | None = None
    source: Path = Path("lesson.py")

    def variant(self, seed: int | None) -> dict[str, Any]:
        """The variant for ``seed`` (None: the seed page's own numbers), checked to be JSON-able.

        Parameters
        ----------
        seed : int or None
            Stored with the learner; the same seed always gives the same numbers.

        Returns
        -------
        dict
            ``{"seed": seed, ...}``.

        Raises
        ------
        LessonError
            If the seed is not valid, or the lesson's function fails or returns something that is
            not a JSON object of finite numbers, strings and lists.

        Examples
        --------
        >>> LessonHooks().variant(3)
        {'seed': 3}
        """
        seed = check_seed(seed)
        if self.variant_function is None:
            return {"seed": seed}
        data = self._call(self.variant_function, seed, "variant")
        if not isinstance(data, dict):
            raise LessonError(
                f"{self.source}: variant({seed!r}) returned a {type(data).__name__}, not a dict."
            )
        _check_json(data, f"{self.source}: variant({seed!r})")
        return {**data, "seed": seed}

    def namespace(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The variant's values together with the named wrong answers, for placeholders and feedback.

        Examples
        --------
        >>> LessonHooks().namespace({"seed": None, "x": [1, 2]})
        {'seed': None, 'x': [1, 2]}
        """
        names = dict(data)
        if self.wrong_answers_function is not None:
            wrong = self._call(self.wrong_answers_function, dict(data), "wrong_answers")
            if not isinstance(wrong, dict):
                raise LessonError(
                    f"{self.source}: wrong_answers() returned a {type(wrong).__name__}, not a dict."
                )
            names.update({key: value for key, value in wrong.items() if key not in names})
        return names

    def _call(self, function: Callable[[Any], Any], argument: Any, name: str) -> Any:
        try:
            return function(argument)
        except Exception as error:
            # The problem carries the file and line once; the message alone says what failed.
            problem = Problem(
                self.source,
                line_in(error, self.source),
                f"{name}({argument!r}) failed with {type(error).__name__}: {error}",
            )
            raise LessonError(str(problem), (problem,)) from error


def load_hooks(path: Path) -> tuple[LessonHooks, list[Problem]]:
    """Import a lesson's ``lesson.py`` (if the file exists) and pick out its hook functions.

    Parameters
    ----------
    path : Path
        The ``lesson.py`` file.

    Returns
    -------
    hooks : LessonHooks
        Empty hooks when the file is missing or broken.
    problems : list of Problem
        Why the file could not be used, located as ``file:line``.

    Examples
    --------
    >>> hooks, problems = load_hooks(Path("/nonexistent/lesson.py"))
    >>> hooks.variant_function is None, problems
    (True, [])
    """
    if not path.is_file():
        return LessonHooks(source=path), []
    module, problems = import_lesson_file(path)
    if module is None:
        return LessonHooks(source=path), problems
    hooks: dict[str, Any] = {}
    for name in ("variant", "wrong_answers"):
        function = getattr(module, name, None)
        if function is not None and not callable(function):
            problems.append(
                Problem(path, 1, f"'{name}' must be a function, but it is a {type(function).__name__}.")
            )
            function = None
        hooks[name] = function
    return LessonHooks(hooks["variant"], hooks["wrong_answers"], path), problems


def _check_json(value: object, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise LessonError(f"{where} holds the number {value!r}; variants must hold finite numbers only.")
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise LessonError(f"{where} is not JSON-able: {error}.") from None
