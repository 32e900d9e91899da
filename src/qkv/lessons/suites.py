"""A lesson's grading module: ``grading.py`` in its folder, with one test suite per code exercise.

The module defines ``SUITES``, a dict from the id of each code exercise of the lesson to its
:class:`qkv.grading.Suite`. A lesson without code exercises needs no such file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from qkv.grading import Suite
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
    return dict(suites), []
