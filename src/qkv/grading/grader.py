"""The grader: runs a submission in a sandbox and judges its raw results against the reference."""

from __future__ import annotations

import dataclasses
import functools
import logging
import secrets
import subprocess
import time
import weakref
from types import TracebackType
from typing import Any

import numpy as np

from qkv.grading.cgroups import HOST, CgroupHost
from qkv.grading.cgroups import remove_stale as remove_stale_cgroups
from qkv.grading.limits import Limits
from qkv.grading.pool import SparePool
from qkv.grading.results import GradeResult, TestResult, TestStatus
from qkv.grading.runtime import bwrap_path
from qkv.grading.sandbox import RawRun, SandboxProcess, SandboxStartError
from qkv.grading.suite import Case, Raises, Suite
from qkv.grading.values import MalformedReport, clean_text
from qkv.grading.verdict import judge, limit_message, shown

__all__ = ["BUBBLEWRAP", "RLIMITS_ONLY", "Grader", "SandboxUnavailable", "sandbox_available"]

BUBBLEWRAP = "bubblewrap"
RLIMITS_ONLY = "rlimits only (no bubblewrap)"
MAX_SOURCE_BYTES = 256 * 1024
SIGKILL, SIGXCPU, SIGXFSZ = 9, 24, 25

_log = logging.getLogger(__name__)


class SandboxUnavailable(RuntimeError):
    """Sandboxed grading was required, but bubblewrap is missing or cannot start here."""


@functools.cache
def sandbox_available() -> bool:
    """Whether bubblewrap is installed and can start a sandbox on this machine.

    Examples
    --------
    >>> isinstance(sandbox_available(), bool)
    True
    """
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    probe = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


class Grader:
    """Grades submissions of a code exercise, in a sandbox when one is available.

    Parameters
    ----------
    require_sandbox : bool
        Refuse to work without bubblewrap (the web server's default).
    warm_spares : int
        How many started sandboxes to keep waiting, so that a submission does not wait for Python and NumPy
        to start. Each spare grades exactly one submission and is then thrown away.
    limits : Limits, optional
        The resource limits (the defaults are those the learner is told about).
    cgroup_host : CgroupHost, optional
        Where the cgroup files are (this machine's by default); see :func:`qkv.grading.cgroups.choose`.

    Raises
    ------
    SandboxUnavailable
        If ``require_sandbox`` is true and bubblewrap is missing or cannot start.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> from qkv.grading.suite import TestCase
    >>> box = TestCase("a 2 by 3 by 4 box", "volume", (2, 3, 4), lambda a, b, c: a * b * c, Whole())
    >>> suite = Suite(["volume"], [box])
    >>> with Grader() as grader:
    ...     result = grader.grade("def volume(a, b, c):\\n    return a * b\\n", suite, seed=1)
    >>> result.status, result.score, result.tests[0].call
    ('fail', (0, 1), 'volume(2, 3, 4)')
    """

    def __init__(
        self,
        require_sandbox: bool = False,
        warm_spares: int = 0,
        *,
        limits: Limits | None = None,
        cgroup_host: CgroupHost = HOST,
    ) -> None:
        self.limits = limits or Limits()
        self._use_bwrap = sandbox_available()
        self._cgroup_host = cgroup_host
        remove_stale_cgroups(cgroup_host)
        if require_sandbox and not self._use_bwrap:
            reason = (
                "is not installed" if bwrap_path() is None else "is installed but cannot start a sandbox here"
            )
            raise SandboxUnavailable(
                f"Sandboxed grading needs bubblewrap, which {reason}. Install it with "
                "'apt-get install bubblewrap' (Debian/Ubuntu), or explicitly allow grading with rlimits only "
                "('qkv serve --allow-unsandboxed', or Grader(require_sandbox=False)), which does not protect "
                "this machine from the submitted code."
            )
        if warm_spares < 0:
            raise ValueError(f"warm_spares must be zero or more, but it is {warm_spares}.")
        self._pool = SparePool(warm_spares, self._new_process) if warm_spares else None
        # Spares are killed even if close() is never called (their cgroups are removed with them).
        self._finalizer = weakref.finalize(self, SparePool.close, self._pool) if self._pool else None

    @property
    def sandbox(self) -> str:
        """``"bubblewrap"``, or ``"rlimits only (no bubblewrap)"`` where it is not available."""
        return BUBBLEWRAP if self._use_bwrap else RLIMITS_ONLY

    @property
    def spares(self) -> SparePool | None:
        """The pool of warm spares, if there is one."""
        return self._pool

    def _new_process(self) -> SandboxProcess:
        return SandboxProcess(self.limits, use_bwrap=self._use_bwrap, cgroup_host=self._cgroup_host)

    def grade(self, source: str, suite: Suite, *, seed: int | None = None) -> GradeResult:
        """Grade one submission. Safe to call from several threads at once.

        Parameters
        ----------
        source : str
            The learner's file. Nothing in it makes this method raise.
        suite : Suite
            The exercise's hidden tests (from the lesson's grading module).
        seed : int, optional
            The seed of the random inputs; a new one is drawn (and recorded in the result) when omitted.

        Returns
        -------
        GradeResult

        Raises
        ------
        TypeError
            If ``suite`` is not a Suite or ``source`` is not a str.
        ValueError
            If ``seed`` is negative.
        """
        if not isinstance(suite, Suite):
            raise TypeError(f"suite must be a qkv.grading.Suite, not the {type(suite).__name__} {suite!r}.")
        if not isinstance(source, str):
            raise TypeError(f"source must be a str, not {type(source).__name__}.")
        if seed is None:
            seed = secrets.randbelow(2**31)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a whole number of zero or more, but it is {seed!r}.")
        started = time.perf_counter()
        cases = suite.cases(seed)

        def finish(
            status: str,
            message: str | None,
            tests: list[TestResult],
            output: str = "",
            line: int | None = None,
        ) -> GradeResult:
            duration_ms = round((time.perf_counter() - started) * 1000)
            return GradeResult(status, message, tests, seed, duration_ms, self.sandbox, output, line)  # type: ignore[arg-type]

        size = len(source.encode("utf-8", errors="replace"))
        if size > MAX_SOURCE_BYTES:
            return finish(
                "error",
                f"Your file is {size // 1024} KiB long; the grader accepts up to "
                f"{MAX_SOURCE_BYTES // 1024} KiB.",
                [],
            )
        # The calls run in an order shuffled by the seed, so code that counts its calls cannot know which
        # test it is in; the results are reported in the suite's own order.
        order = run_order(len(cases), seed)
        running = [cases[index] for index in order]
        job = {
            "source": source,
            "calls": [
                {
                    "id": index,
                    "function": case.function,
                    "args": [_encode_arg(arg) for arg in case.args],
                    "inputs": case.check_inputs,
                    "warnings": case.refuse_warnings,
                }
                for index, case in enumerate(running)
            ],
        }
        try:
            process = self._pool.take() if self._pool else None
            if process is None:
                process = self._new_process()
                process.wait_ready()
        except SandboxStartError as error:
            return finish(
                "error", f"The grader could not start its sandbox, so your code was not run ({error})", []
            )
        limits = self.limits
        if suite.time_limit_s is not None and suite.time_limit_s < limits.wall_s:
            limits = dataclasses.replace(limits, wall_s=suite.time_limit_s)  # the exercise's own, shorter
        raw = process.run(job, wall_s=limits.wall_s)
        status, message, ran = interpret(raw, running, limits)
        # Back to the suite's order, each result saying when it ran.
        tests = [
            dataclasses.replace(ran[order.index(index)], ran=order.index(index)) for index in range(len(ran))
        ]
        return finish(status, message, tests, _output(raw), error_line(raw) if status == "error" else None)

    def close(self) -> None:
        """Stop the warm spares."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> Grader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def run_order(count: int, seed: int) -> list[int]:
    """The order the tests of one run are called in: a permutation drawn from the run's seed.

    Examples
    --------
    >>> run_order(5, 1) == run_order(5, 1), sorted(run_order(5, 1))
    (True, [0, 1, 2, 3, 4])
    >>> run_order(10, 1) != run_order(10, 2)
    True
    """
    return [int(index) for index in np.random.default_rng([seed, 0x0D3E]).permutation(count)]


def _encode_arg(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, dict):  # a dict of arguments (a layer's parameters by name), arrays inside
        return {"dict": {str(key): _encode_arg(item) for key, item in value.items()}}
    if isinstance(value, list | tuple) and _holds_array(value):  # a list of arrays (the heads, say)
        return [_encode_arg(item) for item in value]
    return value


def _holds_array(value: Any) -> bool:
    if isinstance(value, np.ndarray | dict):
        return True
    return isinstance(value, list | tuple) and any(_holds_array(item) for item in value)


def _output(raw: RawRun) -> str:
    if raw.stdout and raw.stderr:
        return raw.stdout.rstrip("\n") + "\n" + raw.stderr
    return raw.stdout or raw.stderr


TAMPERED = "Your code interfered with the grader's report ({}), so nothing could be checked."


def interpret(raw: RawRun, cases: list[Case], limits: Limits) -> tuple[str, str | None, list[TestResult]]:
    """Turn a raw run into ``(status, message, tests)``; a malformed report is an error, never a pass."""
    if raw.malformed:
        return "error", TAMPERED.format(raw.malformed), []
    tests: list[TestResult] = []
    finished = imported = False
    try:
        for event in raw.events:
            kind = event.get("event")
            if finished:
                raise MalformedReport("something was reported after the end")
            if kind == "import_error" and not imported:
                return "error", _import_error(event, raw, limits), []
            if kind == "imported" and not imported:
                imported = True
            elif kind == "result" and imported:
                if event.get("id") != len(tests) or len(tests) >= len(cases):
                    raise MalformedReport("a result came for a test that was not expected next")
                tests.append(_judge_safely(cases[len(tests)], event, limits))
            elif kind == "done" and imported:
                if len(tests) != len(cases):
                    raise MalformedReport("the report ended before every test had a result")
                finished = True
            else:
                raise MalformedReport(f"an unexpected event {kind!r} was reported")
    except MalformedReport as error:
        return "error", TAMPERED.format(error), []
    if not finished:
        cause = _stop_cause(raw, limits)
        if not imported:
            return (
                "error",
                f"{cause} This happened while your file was being loaded, so no test could run.",
                [],
            )
        status: TestStatus = "timeout" if raw.timed_out else "error"
        stopped = cases[len(tests)]  # the call that was running when the program was stopped
        tests.append(_unfinished(stopped, status, f"{cause} It was stopped inside {stopped.function}."))
        tests += [
            _unfinished(
                case, "not_run", f"Not run: your program was stopped earlier, inside {stopped.function}."
            )
            for case in cases[len(tests) :]
        ]
        not_run = sum(test.status == "not_run" for test in tests)
        passed = sum(test.status == "pass" for test in tests)
        return "fail", summary(passed, len(tests), not_run, stopped_in=stopped.function), tests
    passed = sum(test.status == "pass" for test in tests)
    if passed == len(tests):
        return "pass", f"All {len(tests)} tests passed.", tests
    return "fail", summary(passed, len(tests)), tests


def summary(passed: int, total: int, not_run: int = 0, *, stopped_in: str | None = None) -> str:
    """The one-line score of a run; tests that never ran are counted apart, not as failures.

    Examples
    --------
    >>> summary(3, 4)
    '3 of 4 tests passed.'
    >>> summary(0, 4, 3, stopped_in="volume")
    '0 of 1 test that ran passed; your program was stopped inside volume, so the other 3 did not run.'
    """
    if not not_run:
        return f"{passed} of {total} tests passed."
    ran = total - not_run
    tests = "test that ran" if ran == 1 else "tests that ran"
    where = f"your program was stopped inside {stopped_in}" if stopped_in else "your program was stopped"
    return f"{passed} of {ran} {tests} passed; {where}, so the other {not_run} did not run."


def error_line(raw: RawRun) -> int | None:
    """The line of the learner's file where loading stopped (a syntax error's), when the report names one."""
    if raw.malformed:
        return None
    for event in raw.events:
        if event.get("event") == "import_error":
            line = event.get("line")
            return line if isinstance(line, int) and not isinstance(line, bool) and 0 < line < 10**6 else None
    return None


def _judge_safely(case: Case, event: dict[str, Any], limits: Limits) -> TestResult:
    """``judge``, except that a value it cannot handle fails the test instead of crashing the grader.

    The values come from the learner's code, so a comparison or hint that trips over an odd one is a bug
    to log, but never a reason for ``grade`` to raise (a 500 from the server, a traceback from the CLI).
    """
    try:
        return judge(case, event, limits)
    except MalformedReport:
        raise
    except Exception:
        _log.exception("The grader could not judge a result for the test %r", case.name)
        return _unfinished(
            case,
            "fail",
            f"The grader could not compare what {case.function} returned with the expected result, "
            "so this test counts as failed.",
        )


def _unfinished(case: Case, status: TestStatus, message: str) -> TestResult:
    """The result of a test that the report does not judge (it never ran, or its judging failed)."""
    raises = isinstance(case.expected, Raises)
    expected = f"raises {case.expected.exception}" if raises else shown(case.expected)
    return TestResult(
        case.name, status, message, None, function=case.function, call=case.call, expected=expected
    )


def _stop_cause(raw: RawRun, limits: Limits) -> str:
    """Why the program ended before the report did, as a sentence."""
    if raw.timed_out:
        return limits.describe_wall()
    if raw.memory_limit_hit:
        return limits.describe_memory()
    if raw.signal == SIGXCPU:
        return limits.describe_cpu()
    if raw.signal == SIGXFSZ:
        return limits.describe_file_size()
    if raw.processes_limit_hit and raw.signal is not None:
        return limits.describe_processes()
    if raw.signal == SIGKILL:
        return "Your program was killed (signal 9), most likely for using too much memory or CPU time."
    if raw.signal is not None:
        return f"Your program crashed (it was ended by signal {raw.signal})."
    return (
        f"Your code ended the program early (exit status {raw.exit_status}): remove calls to sys.exit(), "
        "exit() or os._exit()."
    )


def _import_error(event: dict[str, Any], raw: RawRun, limits: Limits) -> str:
    kind, message, line = event.get("type"), event.get("message"), event.get("line")
    if not isinstance(kind, str) or not isinstance(message, str):
        raise MalformedReport("an import error was reported without its type and message")
    kind, message = clean_text(kind, 200), clean_text(message)
    errno = event.get("errno")
    limit = limit_message(kind, errno if isinstance(errno, int) else None, limits)
    if limit is None and raw.processes_limit_hit and kind in ("BlockingIOError", "OSError", "RuntimeError"):
        limit = limits.describe_processes()
    at = f" on line {line}" if isinstance(line, int) else ""
    if limit:
        return f"{limit} This happened while your file was being loaded, so no test could run."
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        return f"Your file has a {kind}{at}: {message}. Fix it and run again."
    if kind == "SystemExit":
        return (
            "Your file called sys.exit() or exit() while it was being loaded, so no test could run. "
            "Remove that call."
        )
    if kind in ("ModuleNotFoundError", "ImportError"):
        return (
            f"Your file could not import a module{at} ({message}): only NumPy and Python's standard library "
            "are available."
        )
    return f"Your file raised {kind}{at} while it was being loaded, so no test could run: {message}"
