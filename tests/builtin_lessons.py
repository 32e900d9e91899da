"""The built-in lessons' code exercises, for the tests that grade L4.1 programs (corpora, red team, API).

L4.1's grading module lives in its lesson folder; the tests reach it the way the engine does, and its hint
sentences through the same module the engine imported.
"""

from __future__ import annotations

from types import ModuleType

from qkv.lessons import BUILTIN_CONTENT, load_catalog
from qkv.lessons.pyfiles import import_lesson_file

L41_FOLDER = BUILTIN_CONTENT / "L4" / "L4.1-queries-keys-values"
L41_EXERCISE = load_catalog().code_exercise("L4.1/functions")
L41_SUITE = L41_EXERCISE.suite
L41_TESTS = len(L41_SUITE.table)  # the hidden tests of L4.1's code exercise


def _grading_module() -> ModuleType:
    module, problems = import_lesson_file(L41_FOLDER / "grading.py")
    assert module is not None, problems
    return module


L41_GRADING = _grading_module()  # its hint sentences, e.g. L41_GRADING.BY_COLUMNS
