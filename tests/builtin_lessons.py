"""The built-in lessons' code exercises, for the tests that grade L4.1 programs (corpora, red team, API).

L4.1's grading module lives in its lesson folder; the tests reach it the way the engine does, and its hint
sentences through the same module the engine imported.
"""

from __future__ import annotations

from qkv.lessons import load_catalog
from tests.lesson_contract import grading_module

L41_EXERCISE = load_catalog().code_exercise("L4.1/functions")
L41_SUITE = L41_EXERCISE.suite
L41_TESTS = len(L41_SUITE.table)  # the hidden tests of L4.1's code exercise
L41_GRADING = grading_module(L41_EXERCISE.lesson)  # its hint sentences, e.g. L41_GRADING.BY_COLUMNS
