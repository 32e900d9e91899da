"""Sandboxed, unforgeable grading of code exercises, for any lesson.

The grader knows no lesson. A lesson's grading module describes each code exercise as a :class:`Suite`:
a table of :class:`TestCase` rows (function, arguments or an argument generator, the reference that makes
the expected value, a comparator, hints). The :class:`Grader` runs the learner's file in a sandbox, calls
the functions there, and judges the raw report here, where the submission cannot reach.

>>> from qkv.grading import Suite, TestCase, Whole, Mistake
>>> doubling = Suite(["double"], [
...     TestCase("double of 3", "double", (3,), lambda n: 2 * n, Whole(),
...              hints=[Mistake("That squares the number.", lambda n: n * n)]),
... ])
>>> doubling.cases(seed=0)[0].expected, doubling.cases(seed=0)[0].call
(6, 'double(3)')
"""

from qkv.grading.compare import Close, Comparator, Exact, Items, Keys, Mismatch, Shape, Whole
from qkv.grading.feedback.hints import (
    STUB,
    Emitted,
    Hint,
    Mistake,
    Mutated,
    Outcome,
    Raised,
    Returned,
    Warned,
    missing_function_hint,
)
from qkv.grading.feedback.preconditions import (
    exp_overflows,
    fully_masked_row,
    is_float32,
    row_far_below_max,
    writes_number,
)
from qkv.grading.grader import Grader, SandboxStart, SandboxUnavailable, Unfinished, sandbox_available
from qkv.grading.results import RESULTS_VERSION, GradeResult, TestResult
from qkv.grading.sandbox.limits import Limits
from qkv.grading.suite import (
    Case,
    Raises,
    Suite,
    TestCase,
    by_keyword,
    called_again,
    check_raises,
    in_dtype,
)

__all__ = [
    "RESULTS_VERSION",
    "STUB",
    "Case",
    "Close",
    "Comparator",
    "Emitted",
    "Exact",
    "GradeResult",
    "Grader",
    "Hint",
    "Items",
    "Keys",
    "Limits",
    "Mismatch",
    "Mistake",
    "Mutated",
    "Outcome",
    "Raised",
    "Raises",
    "Returned",
    "SandboxStart",
    "SandboxUnavailable",
    "Shape",
    "Suite",
    "TestCase",
    "TestResult",
    "Unfinished",
    "Warned",
    "Whole",
    "by_keyword",
    "called_again",
    "check_raises",
    "exp_overflows",
    "fully_masked_row",
    "in_dtype",
    "is_float32",
    "missing_function_hint",
    "row_far_below_max",
    "sandbox_available",
    "writes_number",
]
