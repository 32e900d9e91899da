"""The outcome of grading one submission, and its JSON results document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from qkv.grading.timing import Phases

__all__ = ["RESULTS_VERSION", "GradeResult", "TestResult"]

RESULTS_VERSION = 3
"""The version of the results document.

1 (unversioned) had no ``function`` and ``call`` per test; 2 added them; 3 adds ``expected`` and ``got`` per
test, the document's ``line`` (where loading stopped) and the test status ``not_run`` (a test that never ran
because an earlier one stopped the program, which version 2 reported as ``error``).
"""

TestStatus = Literal["pass", "fail", "error", "timeout", "not_run"]
GradeStatus = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class TestResult:
    """One test of the suite.

    Parameters
    ----------
    name : str
        What the test checks, in words; names are the same for every seed.
    status : {"pass", "fail", "error", "timeout", "not_run"}
        ``fail``: a wrong value or a missing/wrong exception; ``error``: the function crashed or could not be
        judged; ``timeout``: it was running when the time limit struck; ``not_run``: an earlier test stopped
        the program before this one could start (neither a pass nor a failure).
    message : str or None
        What went wrong (expected vs got), None for a pass.
    hint : str or None
        The likely misconception, in one sentence, when the wrong result matches a known one.
    function : str
        The learner's function that the test calls.
    call : str
        The call as the learner would type it to repeat the test, e.g. ``volume(3, 5, 7)``.
    expected : str or None
        For a test that did not pass: the expected result as Python prints it (``12``,
        ``array([[1., 2.]])``) or the exception it should raise (``raises ValueError``); None otherwise.
    ran : int or None
        When the test was called in its run: 0 for the first. The calls run in an order shuffled by the seed
        (so code that counts its calls cannot tell which test it is in); tests are listed in the suite's
        order. None for a result made without a run.
    hint_source : str or None
        Where the hint came from: ``"lesson"`` (a rule the lesson wrote, or the grader's own for a stub or
        a missing function), ``"mutant"`` (a mutant of the reference solution gives the same results) or
        ``"relation:KIND"`` (a relation between the result and the expected value, such as
        ``relation:transposed``); None without a hint. Not part of the results document.
    got : str or None
        For a test that did not pass: what the function returned, or the exception it raised; None when it
        never returned (not run, timed out, missing function).

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
    expected: str | None = None
    got: str | None = None
    ran: int | None = None
    hint_source: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The test's entry in the results document (with ``hint_from``, where its hint came from: ``lesson``,
        ``mutant`` or ``relation``, when it has one)."""
        entry = {
            "ran": self.ran,
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "hint": self.hint,
            "function": self.function,
            "call": self.call,
            "expected": self.expected,
            "got": self.got,
        }
        if self.hint and self.hint_source:
            entry["hint_from"] = self.hint_source.split(":")[0]
        return entry


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
    line : int or None
        For ``error``: the line of the learner's file where loading stopped (a syntax error's line), when
        known; None otherwise. The page marks it in the editor.
    phases : Phases or None
        Wall-clock and CPU seconds per phase of the grading (advisory; not in the results document).
    signatures : dict of str to str
        For a failed grading, each failing function's behaviour signature (:mod:`qkv.grading.behaviour`);
        in the results document as ``signatures`` when there is one.

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
    line: int | None = None
    # Where the grading's time went (advisory, for benchmarks; not part of the results document).
    phases: Phases | None = field(default=None, compare=False, repr=False)
    signatures: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def passed(self) -> bool:
        """Whether every test passed."""
        return self.status == "pass"

    @property
    def not_run(self) -> int:
        """How many tests never ran (an earlier one stopped the program)."""
        return sum(test.status == "not_run" for test in self.tests)

    @property
    def score(self) -> tuple[int, int]:
        """``(passed tests, all tests)``."""
        return sum(test.status == "pass" for test in self.tests), len(self.tests)

    def to_dict(self) -> dict[str, Any]:
        """The results document: plain JSON types only (strings stand in for non-finite numbers)."""
        document: dict[str, Any] = {
            "version": RESULTS_VERSION,
            "status": self.status,
            "message": self.message,
            "tests": [test.to_dict() for test in self.tests],
            "seed": self.seed,
            "duration_ms": self.duration_ms,
            "sandbox": self.sandbox,
            "output": self.output,
            "line": self.line,
        }
        if self.signatures:
            document["signatures"] = dict(self.signatures)
        return document
