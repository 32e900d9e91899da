"""The trusted judgement: compare what the submission returned with the reference, test by test."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from qkv.grading.display import short, show
from qkv.grading.feedback.crashes import Place, crash_sentence
from qkv.grading.feedback.diagnosis import (
    UNCHANGED,
    argument_name,
    call_shapes,
    crash_diagnosis,
    describe_change,
    describe_warnings,
)
from qkv.grading.feedback.hints import Emitted, Hint, Mutated, Outcome, Warned, first_hint
from qkv.grading.feedback.support import parsed
from qkv.grading.results import TestResult, TestStatus
from qkv.grading.sandbox.limits import Limits
from qkv.grading.suite import Case, Raises
from qkv.grading.values import MalformedReport, clean_text, decode_value

__all__ = ["judge", "limit_message", "ran_its_tests", "shown"]

BLOCK_LIMIT = 2000  # characters of a value shown in the expected/got block before it is described instead

BLOCKING_ERRNO = 11  # EAGAIN: what fork() fails with when the process limit is reached
TOO_BIG_ERRNO = 27  # EFBIG
TOO_MANY_FILES_ERRNO = 24  # EMFILE
NO_SPACE_ERRNO = 28  # ENOSPC: the tmpfs /tmp is full
OUT_OF_MEMORY_ERRNO = 12  # ENOMEM: e.g. millions of empty files in /tmp, whose inodes the cgroup counts
MAX_WARNINGS = 8  # warnings of one call in a report (the harness sends no more)
MAX_PARAMS = 32

COPY_ADVICE = (
    "Work on a new array instead: {name} = {name} - m or {name} = {name} / s makes one, while {name} -= m, "
    "{name} /= s or {name}[...] = v write into the array the caller passed."
)
NUMPY_WARNING_ADVICE = (
    " NumPy warns when an operation has no finite answer, such as 0/0 or the exponential of a very large "
    "number: handle that case before the operation instead."
)


MISSING = "Your file does not define {}."
NOT_A_FUNCTION = "{} in your file is not a function."


def ran_its_tests(document: Mapping[str, Any]) -> bool:
    """Whether a results document shows a real try: the file loaded, defined every function the tests
    call, and its tests ran (a file of junk such as ``x = 1`` is no try, however often it changes).

    Examples
    --------
    >>> ran_its_tests({"status": "fail", "tests": [{"status": "fail", "message": "Expected 3, got 4."}]})
    True
    >>> missing = {"status": "fail", "function": "f", "message": MISSING.format("f")}
    >>> ran_its_tests({"status": "fail", "tests": [missing]})
    False
    >>> ran_its_tests({"status": "error", "tests": []})
    False
    """
    tests = document.get("tests")
    if document.get("status") == "error" or not isinstance(tests, list) or not tests:
        return False
    functions = {test.get("function") for test in tests if isinstance(test, Mapping)}
    absent = {MISSING.format(name) for name in functions} | {
        NOT_A_FUNCTION.format(name) for name in functions
    }
    return not any(isinstance(test, Mapping) and test.get("message") in absent for test in tests)


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


def judge(
    case: Case,
    event: dict[str, Any],
    limits: Limits,
    seen: dict[str, Outcome] | None = None,
    source: str | None = None,
) -> TestResult:
    """Compare one reported outcome with the expected one, and name the mistake when a hint knows it.

    ``seen``, when given, receives the test's :class:`Outcome` under its name (what it returned, for a
    test whose value was judged), for the explanation pass that looks at every test of a function together
    (:mod:`qkv.grading.feedback.explain`).

    Raises
    ------
    MalformedReport
        If the event is not exactly what the harness writes.
    """
    outcome = event.get("outcome")
    if outcome == "missing":
        return _result(case, "fail", MISSING.format(case.function), case.missing_hint)
    if outcome == "not_callable":
        return _result(case, "fail", NOT_A_FUNCTION.format(case.function), case.missing_hint)
    if outcome == "raised":
        return _judge_raised(case, event, limits, seen, source)
    if outcome != "returned":
        raise MalformedReport(f"{outcome!r} is not an outcome the harness reports")
    return _judge_returned(case, event, seen, parsed(source))


def _judge_returned(
    case: Case, event: dict[str, Any], seen: dict[str, Outcome] | None, code: Any = None
) -> TestResult:
    """A call that returned: its value, then what it did besides (arguments changed, warnings)."""
    got = decode_value(event.get("value"))
    changed = _changed(case, event)
    warnings = _warnings(case, event)
    params = _argument_names(case, _params(event))
    if isinstance(case.expected, Raises):
        returned = Outcome(case.args, case.expected, case.compare, returned=got, code=code)
        if seen is not None:
            seen[case.name] = returned
        hint = first_hint(case.hints, returned)
        message = (
            f"Expected {case.expected.exception} because {case.expected.reason}, but "
            f"{case.function} returned {short(got)}."
        )
        return _result(case, "fail", message, hint, got=shown(got))
    mismatch = case.compare.mismatch(got, case.expected)
    if mismatch is None and not changed and not warnings:
        if seen is not None:
            seen[case.name] = Outcome(case.args, case.expected, case.compare, returned=got)
        return _result(case, "pass")
    outcome = Outcome(
        case.args,
        case.expected,
        case.compare,
        returned=got,
        at=mismatch.at if mismatch else None,
        changed=tuple(index for index, _ in changed),
        warnings=tuple(warnings),
        code=code,
    )
    if seen is not None:
        seen[case.name] = outcome
    if mismatch is not None:
        also = []
        if changed:
            names = [argument_name(index, params) for index, _ in changed]
            also.append(f"It also changed its {_and(names)} in place.")
        if warnings:
            also.append(f"It also emitted {warnings[0].category}: {warnings[0].message.rstrip('. ')}.")
        message = " ".join([mismatch.message, *also])
        return _result(case, "fail", message, first_hint(case.hints, outcome), got=shown(got))
    # The value is right: what fails is what the call did besides returning it.
    side_hints: list[Hint] = [hint for hint in case.hints if isinstance(hint, Mutated | Warned)]
    message = _side_effect_message(case, changed, warnings, params)
    return _result(case, "fail", message, first_hint(side_hints, outcome), got=shown(got))


def _side_effect_message(
    case: Case, changed: list[tuple[int, Any]], warnings: list[Emitted], params: list[str] | None
) -> str:
    """Why a right value fails: an argument changed in place (the first), or a warning emitted."""
    if changed:
        index, after = changed[0]
        name = params[index] if params is not None and index < len(params) else "x"
        message = (
            f"The result is right, but {case.function} changed its {argument_name(index, params)} in place: "
            f"{_change(case.args[index], after)}. {COPY_ADVICE.format(name=name)}"
        )
        if warnings:
            message += f" It also emitted {warnings[0].category}: {warnings[0].message.rstrip('. ')}."
        return message
    message = (
        f"The result is right, but {describe_warnings(case.function, warnings)}, and this test expects "
        "no warning."
    )
    if warnings[0].category == "RuntimeWarning" and "encountered in" in warnings[0].message:
        message += NUMPY_WARNING_ADVICE
    return message


def _change(before: Any, after: Any) -> str:
    described = describe_change(before, after)
    # Equal values where the harness saw a change: written with the same values, or too long to report.
    return "it was written to" if described == UNCHANGED else described


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _changed(case: Case, event: dict[str, Any]) -> list[tuple[int, Any]]:
    """The arguments the call changed in place, each with its value after the call, as reported."""
    if "changed" not in event:
        return []
    if not case.check_inputs:
        raise MalformedReport("changed arguments were reported for a test that does not check them")
    reported = event["changed"]
    if not isinstance(reported, list) or len(reported) > len(case.args):
        raise MalformedReport("the changed arguments are not a list of at most one entry per argument")
    changed: list[tuple[int, Any]] = []
    for entry in reported:
        index = entry.get("arg") if isinstance(entry, dict) else None
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(case.args)
            or (changed and index <= changed[-1][0])
            or set(entry) != {"arg", "value"}
        ):
            raise MalformedReport("a changed argument is not named by its position, in order")
        changed.append((index, decode_value(entry["value"])))
    return changed


def _warnings(case: Case, event: dict[str, Any]) -> list[Emitted]:
    """The warnings the call emitted, as reported, for a test that refuses them."""
    if "warnings" not in event:
        return []
    if not case.refuse_warnings:
        raise MalformedReport("warnings were reported for a test that does not record them")
    reported = event["warnings"]
    if not isinstance(reported, list) or len(reported) > MAX_WARNINGS:
        raise MalformedReport("the warnings are not a list of at most 8 entries")
    emitted = []
    for entry in reported:
        if not isinstance(entry, dict) or set(entry) != {"category", "bases", "message", "line"}:
            raise MalformedReport("a warning is not described the way the harness describes one")
        category, bases, message, line = entry["category"], entry["bases"], entry["message"], entry["line"]
        if not isinstance(category, str) or not isinstance(message, str) or not _names(bases, 16):
            raise MalformedReport("a warning is reported without its category, classes and message")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool) or not 0 < line < 10**6):
            raise MalformedReport(f"{line!r} is not a line of a file")
        emitted.append(Emitted(clean_text(category, 200), tuple(bases), clean_text(message), line))
    return emitted


def _names(value: Any, most: int) -> bool:
    return (
        isinstance(value, list)
        and 1 <= len(value) <= most
        and all(isinstance(name, str) and name.isidentifier() and len(name) <= 64 for name in value)
    )


def _argument_names(case: Case, params: list[str] | None) -> list[str] | None:
    """The names of the call's arguments: the learner's parameters for those passed by position, the
    test's keywords for those passed by name (None where the learner's names are not known)."""
    if not case.keywords:
        return params
    split = len(case.args) - len(case.keywords)
    if params is None or len(params) < split:
        return None
    return [*params[:split], *case.keywords]


def _params(event: dict[str, Any]) -> list[str] | None:
    """The parameter names of the learner's function, when the report carries them."""
    params = event.get("params")
    if params is None:
        return None
    if params == []:
        return None
    if not _names(params, MAX_PARAMS):
        raise MalformedReport("the parameter names are not a list of names")
    return list(params)


def _judge_raised(
    case: Case,
    event: dict[str, Any],
    limits: Limits,
    seen_by_name: dict[str, Outcome] | None = None,
    source: str | None = None,
) -> TestResult:
    if not isinstance(event.get("type"), str) or not isinstance(event.get("message"), str):
        raise MalformedReport("an exception was reported without its type and message")
    kind, message = clean_text(event["type"], 200), clean_text(event["message"])
    bases = _bases(event)
    event = {**event, "type": kind, "message": message}
    # Hints and checks go by the nearest real built-in class, never by a name the learner can choose.
    seen = Outcome(
        case.args,
        case.expected,
        case.compare,
        exception=bases[0],
        message=message,
        raised_type=kind,
        bases=tuple(bases),
        own_raise=_own_raise(event),
    )
    if seen_by_name is not None:  # what it raised, for the mutants that raise alike
        # (qkv.grading.feedback.explain)
        seen_by_name[case.name] = seen
    if isinstance(case.expected, Raises):
        if case.expected.exception in bases:  # isinstance: a subclass of ValueError is a ValueError
            if not case.expected.checked or _own_raise(event):
                return _result(case, "pass")
            return _result(
                case, "fail", _unchecked_text(case, event), first_hint(case.hints, seen), got=_raised(event)
            )
        text = (
            f"Expected {case.expected.exception} because {case.expected.reason}, but "
            f"{_raised_text(case.function, event)}"
        )
        if kind == case.expected.exception:
            text += f" (a class of your own named {kind}, which is a {bases[0]}, not Python's {kind})"
        return _result(case, "fail", text, first_hint(case.hints, seen), got=_raised(event))
    errno = event.get("errno")
    limit = limit_message(kind, errno if isinstance(errno, int) else None, limits)
    text = limit or _crash_text(case, event)
    hint = first_hint(case.hints, seen)
    crash = None if hint is not None or limit or source is None else _crash_hint(source, event, bases[0])
    if hint is None and not limit and bases[0] == "TypeError" and event.get("line") is None:
        crash = call_form_hint(case, message) or crash  # the call itself did not fit the function
    if crash is not None:  # the failing line's operation, named (qkv.grading.feedback.crashes)
        return replace(_result(case, "error", text, crash, got=_raised(event)), hint_source="crash")
    return _result(case, "error", text, hint, got=_raised(event))


def call_form_hint(case: Case, message: str) -> str | None:
    """Why a call the statement allows did not reach the learner's code: a parameter passed by name that
    their function names otherwise, or one left out that their function gives no default; None for
    any other TypeError.

    Examples
    --------
    >>> from qkv.grading.compare import Close
    >>> from qkv.grading.suite import Case
    >>> case = Case("t", "f", (1, True), 1, Close(), keywords=("causal",))
    >>> call_form_hint(case, "f() got an unexpected keyword argument 'causal'")[:72]
    "This test passes causal by name, f(…, causal=…), as the statement's sign"
    >>> bare = Case("t", "f", (1,), 1, Close())
    >>> call_form_hint(bare, "f() missing 1 required positional argument: 'causal'")[:64]
    'This test leaves out causal, which has a default in the statemen'
    """
    keyword = re.search(r"unexpected keyword argument '(\w+)'|multiple values for argument '(\w+)'", message)
    if keyword is not None and case.keywords:
        name = keyword.group(1) or keyword.group(2)
        what = "has no parameter called" if keyword.group(1) else "takes by position the argument"
        return (
            f"This test passes {name} by name, {case.function}(…, {name}=…), as the statement's signature "
            f"names it, but your {case.function} {what} {name}: name and order {case.function}'s "
            "parameters as the statement does."
        )
    missing = re.search(r"missing \d+ required positional arguments?: '(\w+)'", message)
    if missing is not None:
        return (
            f"This test leaves out {missing.group(1)}, which has a default in the statement's signature, "
            f"but your {case.function} requires it: give {missing.group(1)} the statement's default value."
        )
    return None


def _crash_hint(source: str, event: dict[str, Any], exception: str) -> str | None:
    """The sentence naming the failing line's operation, from the place the report gives (checked)."""
    place = _place(event)
    return None if place is None else crash_sentence(source, place, exception, event["message"])


def _place(event: dict[str, Any]) -> Place | None:
    """Where the exception arose and the frame's names, as reported: None where the report has none;
    anything not of the harness's making is a malformed report."""
    span, names = event.get("span"), event.get("names")
    if span is None:
        return None
    if (
        not isinstance(span, list)
        or len(span) != 3
        or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 10**6 for n in span)
        or not isinstance(names, dict)
        or len(names) > 64
    ):
        raise MalformedReport("the place of an exception is not a line, two columns and the frame's names")
    held = {name: _held(name, value) for name, value in names.items()}
    return Place(span[0], span[1], span[2], {name: value for name, value in held.items() if value})


def _held(name: Any, value: Any) -> dict[str, Any]:
    """One name of the failing frame: an array's shape and dtype, or a type's name; empty where the
    report describes it otherwise (the sentence then says nothing of it)."""
    plain = isinstance(name, str) and name.isidentifier() and len(name) <= 64 and isinstance(value, dict)
    if plain and set(value) == {"shape", "dtype"}:
        shape, dtype = value["shape"], value["dtype"]
        sizes = isinstance(shape, list) and len(shape) <= 8
        sizes = sizes and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
        if sizes and isinstance(dtype, str) and len(dtype) <= 32:
            return {"shape": list(shape), "dtype": clean_text(dtype, 32)}
    if plain and set(value) == {"type"} and isinstance(value["type"], str) and len(value["type"]) <= 64:
        return {"type": clean_text(value["type"], 64)}
    return {}  # not described as the harness describes a name: left out of the sentence


def _own_raise(event: dict[str, Any]) -> bool:
    """Whether a ``raise`` statement of the learner's file raised the reported exception."""
    own = event.get("own_raise", False)
    if not isinstance(own, bool):
        raise MalformedReport(f"{own!r} does not say whether the learner's code raised the exception")
    return own


def _unchecked_text(case: Case, event: dict[str, Any]) -> str:
    """The expected exception, raised by the computation instead of the learner's own check (what it said
    is under "Got")."""
    assert isinstance(case.expected, Raises)
    expected, function = case.expected.exception, case.function
    line = event.get("line")
    where = f" on line {line} of your file" if isinstance(line, int) else ""
    return (
        f"Expected {expected} because {case.expected.reason}, raised by a check of your own; this "
        f"{event.get('type')} came from the computation{where}, not from a raise statement. {function} "
        f"must check its inputs before computing and raise {expected} itself, with a message that says "
        "what is wrong."
    )


def _crash_text(case: Case, event: dict[str, Any]) -> str:
    """The crash as a learner reads it: their line and NumPy's words, the call's shapes, and for NumPy's
    shape, index and casting errors what those words mean."""
    text = _raised_text(case.function, event).rstrip()
    diagnosis = crash_diagnosis(event["message"])
    shapes = call_shapes(case.args, _argument_names(case, _params(event)))
    if not diagnosis and not shapes:
        return text
    if text[-1:] not in ".!?":
        text += "."
    return " ".join(part for part in (text, shapes, diagnosis) if part)


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
