"""The trusted judgement: compare what the submission returned with the reference, test by test."""

from __future__ import annotations

from typing import Any

import numpy as np

from qkv.grading import hints
from qkv.grading.limits import Limits
from qkv.grading.results import TestResult
from qkv.grading.suite import Case, Raises
from qkv.grading.values import MalformedReport, Opaque, clean_text, decode_value, numeric_array

__all__ = ["judge", "limit_message"]

BLOCKING_ERRNO = 11  # EAGAIN: what fork() fails with when the process limit is reached
TOO_BIG_ERRNO = 27  # EFBIG
TOO_MANY_FILES_ERRNO = 24  # EMFILE
NO_SPACE_ERRNO = 28  # ENOSPC: the tmpfs /tmp is full
OUT_OF_MEMORY_ERRNO = 12  # ENOMEM: e.g. millions of empty files in /tmp, whose inodes the cgroup counts


def show(value: Any) -> str:
    """A value the way a learner would print it.

    Examples
    --------
    >>> show(np.array([[1.5, 2.0]]))
    'array([[1.5, 2. ]])'
    >>> show((2, 3))
    '(2, 3)'
    """
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, separator=", ", prefix="array(").join(("array(", ")"))
    if isinstance(value, Opaque):
        return f"a {value.type} object {value.repr}"
    if isinstance(value, tuple | list):
        inner = ", ".join(show(item) for item in value)
        return (
            f"({inner},)"
            if isinstance(value, tuple) and len(value) == 1
            else (f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
    return repr(value)


def limit_message(exception: str, message: str, errno: int | None, limits: Limits) -> str | None:
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


def _raised_text(function: str, event: dict[str, Any]) -> str:
    line = event.get("line")
    where = f" (line {line} of your file)" if isinstance(line, int) else ""
    message = event.get("message") or ""
    return f"{function} raised {event.get('type')}{where}: {message}".rstrip(": ")


def judge(case: Case, event: dict[str, Any], limits: Limits) -> TestResult:
    """Compare one reported outcome with the reference.

    Raises
    ------
    MalformedReport
        If the event is not exactly what the harness writes.
    """
    outcome = event.get("outcome")
    if outcome == "missing":
        return TestResult(
            case.name, "fail", f"Your file does not define {case.function}.", hints.MISSING_FUNCTION
        )
    if outcome == "not_callable":
        return TestResult(
            case.name, "fail", f"{case.function} in your file is not a function.", hints.MISSING_FUNCTION
        )
    if outcome == "raised":
        if not isinstance(event.get("type"), str) or not isinstance(event.get("message"), str):
            raise MalformedReport("an exception was reported without its type and message")
        event = {**event, "type": clean_text(event["type"], 200), "message": clean_text(event["message"])}
        errno = event.get("errno")
        limit = limit_message(
            event["type"], event["message"], errno if isinstance(errno, int) else None, limits
        )
        if isinstance(case.expected, Raises):
            if event["type"] == case.expected.exception:
                return TestResult(case.name, "pass")
            hint = hints.TYPE_ERROR if event["type"] == "TypeError" else None
            return TestResult(
                case.name,
                "fail",
                f"Expected ValueError because {case.expected.reason}, but "
                f"{_raised_text(case.function, event)}",
                hint,
            )
        text = limit or _raised_text(case.function, event)
        return TestResult(
            case.name, "error", text, hints.exception_hint(case.tags, event["type"], event["message"])
        )
    if outcome != "returned":
        raise MalformedReport(f"{outcome!r} is not an outcome the harness reports")
    got = decode_value(event.get("value"))
    if isinstance(case.expected, Raises):
        return TestResult(
            case.name,
            "fail",
            f"Expected ValueError because {case.expected.reason}, but "
            f"{case.function} returned {_short(got)}.",
            hints.returned_instead_of_raise_hint(case.tags, got),
        )
    compare = {
        "project_qkv": _projection,
        "qkv_shapes": _shapes,
        "output_shape": _output_shape,
        "param_count": _param_count,
    }[case.function]
    return compare(case, got)


def _short(value: Any) -> str:
    """``show(value)`` when it is short; otherwise what it is, not a wall of numbers.

    Examples
    --------
    >>> _short(np.zeros((40, 3)))
    'an array of shape (40, 3)'
    >>> _short((np.zeros((4, 30)), np.zeros((4, 30)), np.zeros((4, 2))))
    'a tuple of 3 arrays with shapes (4, 30), (4, 30) and (4, 2)'
    >>> _short([1, 2])
    '[1, 2]'
    """
    text = show(value)
    if len(text) <= 120:
        return text
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, tuple | list) and value and all(isinstance(item, np.ndarray) for item in value):
        shapes = [str(item.shape) for item in value]
        listed = shapes[0] if len(shapes) == 1 else ", ".join(shapes[:-1]) + " and " + shapes[-1]
        kind = "tuple" if isinstance(value, tuple) else "list"
        plural = "s" if len(value) > 1 else ""
        return f"a {kind} of {len(value)} array{plural} with shape{plural} {listed}"
    return text[:120] + "…"


def _fail(case: Case, message: str, hint: str | None) -> TestResult:
    return TestResult(case.name, "fail", message, hint)


def _projection(case: Case, got: Any) -> TestResult:
    expected = case.expected
    hint = hints.projection_hint(case.args, got, expected)
    if case.check == "tuple":
        if isinstance(got, tuple) and len(got) == 3:
            return TestResult(case.name, "pass")
        return _fail(
            case,
            f"Expected the tuple (Q, K, V), but got {_short(got)}.",
            hint if got is None else hints.NOT_A_TUPLE,
        )
    if not isinstance(got, tuple | list) or len(got) != 3:
        return _fail(case, f"Expected (Q, K, V), three matrices, but got {_short(got)}.", hint)
    for name, mine, want in zip("QKV", got, expected, strict=True):
        array = numeric_array(mine)
        if array is None:
            return _fail(case, f"Expected {name} to be an array, but got {_short(mine)}.", hint)
        if array.shape != want.shape:
            return _fail(
                case,
                f"Expected {name} with shape {want.shape}, but got shape {array.shape}: {_short(array)}.",
                hint,
            )
        if not np.allclose(array.astype(np.float64), want, rtol=1e-5, atol=1e-8):
            return _fail(case, f"Expected {name} = {show(want)}, but got {show(array)}.", hint)
    return TestResult(case.name, "pass")


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple | list) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in value
    )


def _shapes(case: Case, got: Any) -> TestResult:
    expected: dict[str, tuple[int, int]] = case.expected
    if got is None:
        return _fail(case, "Expected a dict of shapes, but got None.", hints.STUB)
    if not isinstance(got, dict):
        return _fail(case, f"Expected a dict with the keys 'Q', 'K' and 'V', but got {_short(got)}.", None)
    lowercase = set(got) == {"q", "k", "v"}
    if set(got) != set(expected):
        keys = clean_text(", ".join(show(key) for key in got), 200) or "none"  # 64 long keys: a wall of text
        return _fail(
            case,
            f"Expected the keys 'Q', 'K' and 'V', but the dict has the keys {keys}.",
            hints.LOWERCASE_KEYS if lowercase else None,
        )
    if case.check == "keys":
        return TestResult(case.name, "pass")
    if case.check == "tuple":
        lists = [key for key in expected if not isinstance(got[key], tuple)]
        if lists:
            return _fail(
                case,
                f"Expected each shape to be a tuple, but {lists[0]} is {_short(got[lists[0]])}.",
                hints.SHAPE_NOT_TUPLE,
            )
        return TestResult(case.name, "pass")
    for key, want in expected.items():
        mine = got[key]
        if not _is_shape(mine) or tuple(mine) != want:
            return _fail(
                case,
                f"Expected {key} to have the shape {want}, but got {_short(mine)}.",
                hints.shape_hint("qkv_shapes", case.args, mine, key),
            )
    return TestResult(case.name, "pass")


def _output_shape(case: Case, got: Any) -> TestResult:
    want = case.expected
    if case.check == "tuple":
        if isinstance(got, tuple):
            return TestResult(case.name, "pass")
        return _fail(
            case,
            f"Expected a tuple, but got {_short(got)}.",
            hints.STUB if got is None else hints.SHAPE_NOT_TUPLE,
        )
    if not _is_shape(got) or tuple(got) != want:
        return _fail(
            case,
            f"Expected the shape {want}, but got {_short(got)}.",
            hints.shape_hint("output_shape", case.args, got),
        )
    return TestResult(case.name, "pass")


def _param_count(case: Case, got: Any) -> TestResult:
    want = case.expected
    if isinstance(got, int) and not isinstance(got, bool) and got == want:
        return TestResult(case.name, "pass")
    if isinstance(got, float) and got == want:
        return _fail(
            case, f"Expected the whole number {want}, but got the float {got!r}; return an int.", None
        )
    return _fail(case, f"Expected {want}, but got {_short(got)}.", hints.param_count_hint(case.args, got))
