"""The trusted side: a report is judged strictly, and anything malformed is an error, never a pass."""

from __future__ import annotations

from typing import Any

import pytest

from qkv.grading import Limits
from qkv.grading.grader_report import interpret
from qkv.grading.sandbox.process import RawRun
from qkv.grading.values import MalformedReport, Opaque, decode_value
from tests.builtin_lessons import L41_SUITE, L41_TESTS

CASES = L41_SUITE.cases(1)
IMPORTED = {"event": "imported"}


def none_results(count: int) -> list[dict[str, Any]]:
    return [{"event": "result", "id": i, "outcome": "returned", "value": {"t": "none"}} for i in range(count)]


def test_a_complete_report_is_judged() -> None:
    status, message, tests = interpret(
        RawRun(events=[IMPORTED, *none_results(L41_TESTS), {"event": "done"}]), CASES, Limits()
    )
    assert status == "fail" and message == f"0 of {L41_TESTS} tests passed." and len(tests) == L41_TESTS


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        (
            [IMPORTED, *none_results(L41_TESTS), *none_results(1), {"event": "done"}],
            "a result came for a test that was not expected next",
        ),
        (
            [IMPORTED, *none_results(3)[::-1], {"event": "done"}],
            "a result came for a test that was not expected next",
        ),
        (
            [IMPORTED, *none_results(L41_TESTS - 1), {"event": "done"}],
            "the report ended before every test had a result",
        ),
        (
            [IMPORTED, *none_results(L41_TESTS), {"event": "done"}, {"event": "done"}],
            "something was reported after the end",
        ),
        ([IMPORTED, {"event": "pass"}], "an unexpected event 'pass' was reported"),
        (
            [IMPORTED, {"event": "result", "id": 0, "outcome": "passed"}],
            "'passed' is not an outcome the harness reports",
        ),
        (
            [IMPORTED, {"event": "result", "id": 0, "outcome": "returned", "value": {"t": "int", "v": 1.5}}],
            "1.5 is not a whole number",
        ),
        ([*none_results(L41_TESTS), {"event": "done"}], "an unexpected event 'result' was reported"),
        ([IMPORTED, IMPORTED], "an unexpected event 'imported' was reported"),
    ],
)
def test_a_malformed_report_is_an_error(events: list[dict[str, Any]], reason: str) -> None:
    status, message, tests = interpret(RawRun(events=events), CASES, Limits())
    assert (status, tests) == ("error", [])
    assert (
        message == f"Your code interfered with the grader's report ({reason}), so nothing could be checked."
    )


def test_a_report_that_is_not_json_is_an_error() -> None:
    status, message, _ = interpret(
        RawRun(malformed="a line of the report was not valid JSON"), CASES, Limits()
    )
    assert status == "error"
    assert message == (
        "Your code interfered with the grader's report (a line of the report was not valid JSON), "
        "so nothing could be checked."
    )


def test_a_silent_end_after_import_blames_the_running_test() -> None:
    raw = RawRun(events=[IMPORTED, *none_results(2)], signal=24)
    status, message, tests = interpret(raw, CASES, Limits(cpu_s=3))
    running = CASES[2].function  # the call that was running when the limit struck is named
    assert status == "fail" and message == (
        f"0 of 3 tests that ran passed; your program was stopped inside {running}, so the other "
        f"{L41_TESTS - 3} did not run."
    )
    assert tests[2].status == "error"
    assert tests[2].message == (
        f"Your code used more than 3 s of CPU time, so it was stopped. It was stopped inside {running}."
    )
    assert tests[3].message == f"Not run: your program was stopped earlier, inside {running}."
    # The tests after it never ran: "not_run", neither a pass nor a failure, each still with its call.
    assert {test.status for test in tests[3:]} == {"not_run"}
    assert all(test.call and test.expected and test.got is None for test in tests[3:])


def test_an_empty_report_after_a_clean_exit_is_an_error_not_a_pass() -> None:
    status, message, tests = interpret(RawRun(exit_status=0), CASES, Limits())
    assert status == "error" and tests == []
    assert message is not None and message.startswith("Your code ended the program early (exit status 0)")


@pytest.mark.parametrize(
    "raw",
    [
        {"t": "ndarray", "dtype": "object", "shape": [1], "data": [1]},
        {"t": "ndarray", "dtype": "float64", "shape": [2, 2], "data": [1.0, 2.0]},
        {"t": "ndarray", "dtype": "int64", "shape": [1], "data": [1.5]},
        {"t": "float", "v": "NaN!"},
        {"t": "bool", "v": 1},
        {"t": "tuple", "n": 1, "items": [{"t": "none"}, {"t": "none"}]},
        {"t": "dict", "n": 1, "items": [[{"t": "str", "v": "Q"}]]},
        {"t": "code", "v": "import os"},
        ["not", "a", "value"],
    ],
)
def test_values_outside_the_protocol_are_rejected(raw: Any) -> None:
    with pytest.raises(MalformedReport):
        decode_value(raw)


def test_values_inside_the_protocol_are_decoded() -> None:
    assert decode_value(
        {"t": "dict", "n": 1, "items": [[{"t": "str", "v": "Q"}, {"t": "list", "n": 0, "items": []}]]}
    ) == {"Q": []}
    assert decode_value({"t": "object", "type": "Fake", "repr": "Fake()", "shape": [2]}) == Opaque(
        "Fake", "Fake()", (2,)
    )
    assert decode_value({"t": "list", "n": 100, "items": []}) == Opaque("list", "a list of 100 items")
