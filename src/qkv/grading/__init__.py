"""Sandboxed, unforgeable grading of the lesson's code exercise.

>>> from qkv.grading import SUITES
>>> "L4.1-part2" in SUITES
True
"""

from qkv.grading.grader import Grader, SandboxUnavailable, sandbox_available
from qkv.grading.limits import Limits
from qkv.grading.results import GradeResult, TestResult
from qkv.grading.suite import SUITES

__all__ = [
    "SUITES",
    "GradeResult",
    "Grader",
    "Limits",
    "SandboxUnavailable",
    "TestResult",
    "sandbox_available",
]
