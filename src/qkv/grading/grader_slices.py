"""The first-slice machinery of the grader: one submission on its way through it (its seed, inputs, job,
marks and the time set aside) and :class:`Unfinished`, a program that outgrew its first slice, paused in
its frozen sandbox or stopped to run again, which the :class:`~qkv.grading.grader.Grader` finishes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qkv.grading.results import GradeResult, TestResult
from qkv.grading.sandbox.limits import Limits
from qkv.grading.sandbox.process import SandboxProcess
from qkv.grading.suite import Case
from qkv.grading.timing import phases_of

if TYPE_CHECKING:
    from qkv.grading.grader import Grader

__all__ = ["Unfinished"]


@dataclass
class _Prepared:
    """One submission on its way through the grader: its seed, inputs, job and marks."""

    seed: int
    started: float  # perf_counter when grading began
    sandbox: str
    marks: dict[str, float]
    order: list[int] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)  # in the suite's order
    running: list[Case] = field(default_factory=list)
    job: dict[str, Any] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    report_bytes: int | None = (
        None  # what the tests and probes can need (``report_bound``); past it nothing is read
    )
    tests_report_bytes: int | None = None  # what the tests alone can need (the bound a learner is told)
    paused_at: float | None = None
    paused_s: float = 0.0  # time spent set aside, which is not the grading's own duration
    thread_mark: float = 0.0  # the grading thread's CPU clock when it last took the program up
    thread_cpu: float = 0.0  # the grading threads' CPU for this program before that
    probes: list[Case] = field(default_factory=list)  # the behaviour signature's calls after the tests
    fixed: frozenset[str] = frozenset()  # the tests whose inputs never change (also signed)
    signatures: dict[str, str] = field(default_factory=dict)  # per failing function

    def finish(
        self,
        status: str,
        message: str | None,
        tests: list[TestResult],
        output: str = "",
        line: int | None = None,
    ) -> GradeResult:
        """The result, with the time it took (without time set aside) and its phases."""
        duration_ms = round((time.perf_counter() - self.started - self.paused_s) * 1000)
        phases = phases_of(self.marks) if "end" in self.marks else None
        return GradeResult(
            status,  # type: ignore[arg-type]
            message,
            tests,
            self.seed,
            duration_ms,
            self.sandbox,
            output,
            line,
            phases=phases,
            signatures=dict(self.signatures) if status == "fail" else {},
        )


class Unfinished:
    """A program that outgrew its first slice: paused in its frozen sandbox, or stopped to run again.

    :meth:`finish` runs it to its end (with what is left of its limits, or from the start in a fresh
    sandbox) and returns its result; :meth:`discard` drops it. Each may be called once, from any thread.
    """

    def __init__(self, grader: Grader, prepared: _Prepared, process: SandboxProcess | None) -> None:
        self._grader = grader
        self._prepared = prepared
        self._process = process
        self._lock = threading.Lock()
        self._used = False

    @property
    def paused(self) -> bool:
        """True when the program waits frozen in its sandbox; False when it will run again from the start."""
        return self._process is not None

    def finish(self) -> GradeResult:
        """Run the program to its end and return its result."""
        result = self.resume(None)
        assert isinstance(result, GradeResult)
        return result

    def resume(self, slice_s: float | None) -> GradeResult | Unfinished:
        """Run a paused program on for at most ``slice_s`` more CPU seconds (None: to its end).

        Its result, or, if it is still running then, a new :class:`Unfinished` (paused again, or stopped
        where it cannot be). A stopped program runs again from the start, to its end, whatever ``slice_s``.
        """
        self._take()
        return self._grader._resume_unfinished(self._prepared, self._process, slice_s)

    def discard(self) -> None:
        """Drop the program (its sandbox is killed); nothing is graded."""
        self._take()
        if self._process is not None:
            self._grader._release_paused(self._process)
            self._process.discard()

    def _take(self) -> None:
        with self._lock:
            if self._used:
                raise RuntimeError("This unfinished grading was already finished or discarded.")
            self._used = True
