"""The outcome of grading one submission, and its JSON results document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["RESULTS_VERSION", "GradeResult", "TestResult"]

RESULTS_VERSION = 2
"""The version of the results document. 1 (unversioned) had no ``function`` and ``call`` per test."""

TestStatus = Literal["pass", "fail", "error", "timeout"]
GradeStatus = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class TestResult:
    """One test of the suite.

    Parameters
    ----------
    name : str
        What the test checks, in words; names are the same for every seed.
    status : {"pass", "fail", "error", "timeout"}
        ``fail``: a wrong value or a missing/wrong exception; ``error``: the function crashed or the test
        could not run; ``timeout``: it was running when the time limit struck.
    message : str or None
        What went wrong (expected vs got), None for a pass.
    hint : str or None
        The likely misconception, in one sentence, when the wrong result matches a known one.
    function : str
        The learner's function that the test calls.
    call : str
        The call as the learner would type it to repeat the test, e.g. ``volume(3, 5, 7)``.

    Examples
    --------
    >>> entry = TestResult("volume of a box", "pass", function="volume", call="volume(3, 5, 7)").to_dict()
    >>> entry["status"], entry["call"]
    ('pass', 'volume(3, 5, 7)')
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    status: TestStatus
    message: str | None = None
    hint: str | None = None
    function: str = ""
    call: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The test's entry in the results document."""
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "hint": self.hint,
            "function": self.function,
            "call": self.call,
        }


@dataclass(frozen=True)
class GradeResult:
    """The grade of one submission.

    Parameters
    ----------
    status : {"pass", "fail", "error"}
        ``pass``: every test passed; ``error``: no test could run (syntax error, crash or limit at import);
        ``fail``: anything else.
    message : str or None
        A summary in a learner's words (why nothing ran, for ``error``).
    tests : list of TestResult
        Every test of the suite, in the suite's stable order (empty for ``error``).
    seed : int
        The seed the random inputs came from; grading again with it repeats the run.
    duration_ms : int
        Wall-clock time of the grading.
    sandbox : str
        ``"bubblewrap"`` or ``"rlimits only (no bubblewrap)"``.
    output : str
        What the code printed on stdout and stderr, each cut off (with a marker) after the output limit.

    Examples
    --------
    >>> result = GradeResult("fail", "1 of 2 tests passed.",
    ...     [TestResult("a", "pass"), TestResult("b", "fail", "Expected 3, got 4.")], 7, 12, "bubblewrap")
    >>> result.passed, result.score
    (False, (1, 2))
    >>> result.to_dict()["tests"][1]["message"]
    'Expected 3, got 4.'
    """

    status: GradeStatus
    message: str | None
    tests: list[TestResult]
    seed: int
    duration_ms: int
    sandbox: str
    output: str = ""

    @property
    def passed(self) -> bool:
        """Whether every test passed."""
        return self.status == "pass"

    @property
    def score(self) -> tuple[int, int]:
        """``(passed tests, all tests)``."""
        return sum(test.status == "pass" for test in self.tests), len(self.tests)

    def to_dict(self) -> dict[str, Any]:
        """The results document: plain JSON types only (strings stand in for non-finite numbers)."""
        return {
            "version": RESULTS_VERSION,
            "status": self.status,
            "message": self.message,
            "tests": [test.to_dict() for test in self.tests],
            "seed": self.seed,
            "duration_ms": self.duration_ms,
            "sandbox": self.sandbox,
            "output": self.output,
        }
