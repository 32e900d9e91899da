"""The trusted judgement: compare what the submission returned with the reference, test by test."""

from __future__ import annotations

from typing import Any

from qkv.grading.display import short, show
from qkv.grading.hints import Outcome, first_hint
from qkv.grading.limits import Limits
from qkv.grading.results import TestResult, TestStatus
from qkv.grading.suite import Case, Raises
from qkv.grading.values import MalformedReport, clean_text, decode_value

__all__ = ["judge", "limit_message", "shown"]

BLOCK_LIMIT = 2000  # characters of a value shown in the expected/got block before it is described instead

BLOCKING_ERRNO = 11  # EAGAIN: what fork() fails with when the process limit is reached
TOO_BIG_ERRNO = 27  # EFBIG
TOO_MANY_FILES_ERRNO = 24  # EMFILE
NO_SPACE_ERRNO = 28  # ENOSPC: the tmpfs /tmp is full
OUT_OF_MEMORY_ERRNO = 12  # ENOMEM: e.g. millions of empty files in /tmp, whose inodes the cgroup counts


def limit_message(exception: str, errno: int | None, limits: Limits) -> str | None:
    """The sentence naming a limit, when an exception shows that the submission hit one."""
    if exception == "MemoryError" or errno == OUT_OF_MEMORY_ERRNO:
        return limits.describe_memory()
    if errno == BLOCKING_ERRNO and exception in ("BlockingIOError", "OSError"):
        return limits.describe_processes()
    if errno in (TOO_BIG_ERRNO, NO_SPACE_ERRNO):
        return limits.describe_file_size()
    if errno == TOO_MANY_FILES_ERRNO:
        return limits.describe_open_files()
    return None


def shown(value: Any) -> str:
    """A value for the expected/got block: printed in full unless it is very long.

    Examples
    --------
    >>> shown([1, 2])
    '[1, 2]'
    """
    text = show(value)
    return text if len(text) <= BLOCK_LIMIT else short(value)


def _expected(case: Case) -> str:
    if isinstance(case.expected, Raises):
        return f"raises {case.expected.exception}"
    return shown(case.expected)


def _raised(event: dict[str, Any]) -> str:
    message = event.get("message") or ""
    return f"raised {event.get('type')}: {message}".rstrip(": ")


def _raised_text(function: str, event: dict[str, Any]) -> str:
    line = event.get("line")
    where = f" (line {line} of your file)" if isinstance(line, int) else ""
    message = event.get("message") or ""
    return f"{function} raised {event.get('type')}{where}: {message}".rstrip(": ")


def judge(case: Case, event: dict[str, Any], limits: Limits) -> TestResult:
    """Compare one reported outcome with the expected one, and name the mistake when a hint knows it.

    Raises
    ------
    MalformedReport
        If the event is not exactly what the harness writes.
    """
    outcome = event.get("outcome")
    if outcome == "missing":
        return _result(case, "fail", f"Your file does not define {case.function}.", case.missing_hint)
    if outcome == "not_callable":
        return _result(case, "fail", f"{case.function} in your file is not a function.", case.missing_hint)
    if outcome == "raised":
        return _judge_raised(case, event, limits)
    if outcome != "returned":
        raise MalformedReport(f"{outcome!r} is not an outcome the harness reports")
    got = decode_value(event.get("value"))
    if isinstance(case.expected, Raises):
        hint = first_hint(case.hints, Outcome(case.args, case.expected, case.compare, returned=got))
        message = (
            f"Expected {case.expected.exception} because {case.expected.reason}, but "
            f"{case.function} returned {short(got)}."
        )
        return _result(case, "fail", message, hint, got=shown(got))
    mismatch = case.compare.mismatch(got, case.expected)
    if mismatch is None:
        return _result(case, "pass")
    seen = Outcome(case.args, case.expected, case.compare, returned=got, at=mismatch.at)
    return _result(case, "fail", mismatch.message, first_hint(case.hints, seen), got=shown(got))


def _judge_raised(case: Case, event: dict[str, Any], limits: Limits) -> TestResult:
    if not isinstance(event.get("type"), str) or not isinstance(event.get("message"), str):
        raise MalformedReport("an exception was reported without its type and message")
    kind, message = clean_text(event["type"], 200), clean_text(event["message"])
    bases = _bases(event)
    event = {**event, "type": kind, "message": message}
    # Hints and checks go by the nearest real built-in class, never by a name the learner can choose.
    seen = Outcome(case.args, case.expected, case.compare, exception=bases[0], message=message)
    if isinstance(case.expected, Raises):
        if case.expected.exception in bases:  # isinstance: a subclass of ValueError is a ValueError
            return _result(case, "pass")
        text = (
            f"Expected {case.expected.exception} because {case.expected.reason}, but "
            f"{_raised_text(case.function, event)}"
        )
        if kind == case.expected.exception:
            text += f" (a class of your own named {kind}, which is a {bases[0]}, not Python's {kind})"
        return _result(case, "fail", text, first_hint(case.hints, seen), got=_raised(event))
    errno = event.get("errno")
    limit = limit_message(kind, errno if isinstance(errno, int) else None, limits)
    text = limit or _raised_text(case.function, event)
    return _result(case, "error", text, first_hint(case.hints, seen), got=_raised(event))


def _bases(event: dict[str, Any]) -> list[str]:
    """The built-in classes of a reported exception, nearest first, checked like everything reported."""
    bases = event.get("bases")
    if (
        not isinstance(bases, list)
        or not 1 <= len(bases) <= 16
        or not all(isinstance(name, str) and name.isidentifier() and len(name) <= 64 for name in bases)
    ):
        raise MalformedReport("an exception was reported without the built-in classes it belongs to")
    return list(bases)


def _result(
    case: Case,
    status: TestStatus,
    message: str | None = None,
    hint: str | None = None,
    *,
    got: str | None = None,
) -> TestResult:
    """A test's result; a test that did not pass also carries what was expected and what came back."""
    expected = None if status == "pass" else _expected(case)
    return TestResult(
        case.name, status, message, hint, function=case.function, call=case.call, expected=expected, got=got
    )
