"""A sandbox's raw run turned into a verdict: the report read (:func:`interpret`), each test judged (a
fault in judging fails that test, never the grader), and a stopped run named by its cause (CPU time,
output size, memory, an import that failed); :func:`summary` and :func:`error_line` say a result in one
line. The :class:`~qkv.grading.grader.Grader` calls these after each run.
"""

from __future__ import annotations

import logging
from typing import Any

from qkv.grading.feedback.hints import Outcome
from qkv.grading.results import TestResult, TestStatus
from qkv.grading.sandbox.limits import Limits
from qkv.grading.sandbox.process import RawRun
from qkv.grading.suite import Case, Raises
from qkv.grading.values import MalformedReport, clean_text
from qkv.grading.verdict import judge, limit_message, shown

SIGKILL, SIGXCPU, SIGXFSZ = 9, 24, 25
__all__ = ["REPORT_TOO_LARGE", "TAMPERED", "error_line", "interpret", "summary"]

_log = logging.getLogger(__name__)

TAMPERED = "Your code interfered with the grader's report ({}), so nothing could be checked."


REPORT_TOO_LARGE = (
    "Your functions reported more than this exercise's {tests} tests can need (over {bound}), so the grader "
    "stopped reading and nothing could be checked. Return only what each function is asked for: one value "
    "of the expected shape, not many large arrays."
)


def interpret(
    raw: RawRun,
    cases: list[Case],
    limits: Limits,
    seen: dict[str, Outcome] | None = None,
    source: str | None = None,
) -> tuple[str, str | None, list[TestResult]]:
    """Turn a raw run into ``(status, message, tests)``; a malformed report is an error, never a pass.

    ``seen`` receives each judged test's outcome by name (for
    :func:`qkv.grading.feedback.explain.explain`)."""
    if raw.report_over is not None:
        bound = f"{max(1, round(raw.report_over / 1024))} KiB"
        return "error", REPORT_TOO_LARGE.format(tests=len(cases), bound=bound), []
    if raw.malformed:
        return "error", TAMPERED.format(raw.malformed), []
    tests: list[TestResult] = []
    finished = imported = False
    try:
        for event in raw.events:
            if event.get("event") == "timing":
                continue  # advisory timestamps (see qkv.grading.timing): no part of the verdict
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
                tests.append(_judge_safely(cases[len(tests)], event, limits, seen, source))
            elif kind == "done" and imported:
                if len(tests) != len(cases):
                    raise MalformedReport("the report ended before every test had a result")
                finished = True
            else:
                raise MalformedReport(f"an unexpected event {kind!r} was reported")
    except MalformedReport as error:
        return "error", TAMPERED.format(error), []
    if not finished:
        return _stopped_run(raw, cases, tests, limits, imported)
    passed = sum(test.status == "pass" for test in tests)
    if passed == len(tests):
        return "pass", f"All {len(tests)} tests passed.", tests
    return "fail", summary(passed, len(tests)), tests


def _stopped_run(
    raw: RawRun, cases: list[Case], tests: list[TestResult], limits: Limits, imported: bool
) -> tuple[str, str | None, list[TestResult]]:
    """A run whose report ended before its end: stopped while loading, or inside one call."""
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
        _unfinished(case, "not_run", f"Not run: your program was stopped earlier, inside {stopped.function}.")
        for case in cases[len(tests) :]
    ]
    not_run = sum(test.status == "not_run" for test in tests)
    passed = sum(test.status == "pass" for test in tests)
    return "fail", summary(passed, len(tests), not_run, stopped_in=stopped.function), tests


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


def _judge_safely(
    case: Case,
    event: dict[str, Any],
    limits: Limits,
    seen: dict[str, Outcome] | None = None,
    source: str | None = None,
) -> TestResult:
    """``judge``, except that a value it cannot handle fails the test instead of crashing the grader.

    The values come from the learner's code, so a comparison or hint that trips over an odd one is a bug
    to log, but never a reason for ``grade`` to raise (a 500 from the server, a traceback from the CLI).
    """
    try:
        return judge(case, event, limits, seen, source)
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
