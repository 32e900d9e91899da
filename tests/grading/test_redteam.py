"""Red-team findings: each test here failed before its fix (see the hostile corpus files it names).

- odd returned values (ragged lists, None or text in a matrix, unhashable shapes, a lone surrogate in a
  message) crashed the trusted side of the grader instead of failing the test;
- /dev, /dev/shm and the empty tmpfs that hides site-packages were writable tmpfs of no fixed size, so a
  submission could fill the machine's memory past the 16 MiB /tmp;
- a report of endless short lines was parsed in full, and a report trickled byte by byte woke the grader
  (and re-scanned its whole buffer) for every byte until the 4 MiB cap.

Tests of attacks that already failed safely are marked as regression tests where they appear.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qkv.grading.grader_report as grader_report
from qkv.grading import Grader, GradeResult, Limits, SandboxStart, sandbox_available
from qkv.grading.grader_report import interpret
from qkv.grading.sandbox.cgroups import CgroupHost, CgroupKind, cgroups_available, choose
from qkv.grading.sandbox.process import RawRun
from qkv.grading.sandbox.report_bound import report_bound
from qkv.grading.verdict import shown
from tests.builtin_lessons import L41_SUITE, L41_TESTS

HOSTILE = Path(__file__).parent / "hostile"
CASES = L41_SUITE.cases(5)
needs_bubblewrap = pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)


@pytest.fixture(scope="module", params=list(SandboxStart), ids=lambda start: start.name.lower())
def strict_grader(request: pytest.FixtureRequest) -> Iterator[Grader]:
    """Every attack runs in both kinds of sandbox: forked from the zygote, and a fresh interpreter."""
    forked = request.param is SandboxStart.FORKED
    with Grader(require_sandbox=True, limits=Limits(wall_s=5.0), zygote=forked) as grader:
        assert grader.start_mode is request.param
        yield grader


def grade_hostile(grader: Grader, name: str) -> GradeResult:
    result = grader.grade((HOSTILE / name).read_text(), L41_SUITE, seed=5)
    assert result.status != "pass", f"{name} passed: {result.message}"
    # The results document must survive any UTF-8 encoder: the web response, the store, a terminal.
    json.dumps(result.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    return result


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_odd_returned_values_fail_their_tests_without_crashing_the_grader(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "odd_return_values.py")
    by_name = {test.name: test for test in result.tests}
    assert result.status == "fail"
    lesson = by_name["project_qkv reproduces the lesson's example x = [1, 2]"]
    assert (lesson.status, lesson.message) == (
        "fail",
        "Expected Q to be an array, but got [[1.0], [2.0, 3.0]].",
    )
    shapes = by_name["output_shape with one query (n_q = 1)"]
    assert shapes.status == "fail" and shapes.message is not None
    assert shapes.message.endswith("but got ([1], [8]).") or shapes.message.startswith(
        "Expected the shape (1,"
    )
    count = by_name["param_count for the lesson's sizes (2, 2, 2)"]
    assert count.status == "error"
    assert count.message == "param_count raised ValueError (line 22 of your file): no count for \\ud800 today"
    assert not any("could not compare" in (test.message or "") for test in result.tests)


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_only_tmp_is_writable_not_dev_shm_or_the_hidden_site_packages(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "fill_dev_and_hidden_tmpfs.py")
    assert result.status == "error"
    assert result.message == (
        "Your file called sys.exit() or exit() while it was being loaded, so no test could run. "
        "Remove that call."
    )
    assert "outside /tmp" not in result.output


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_a_report_of_endless_lines_is_refused(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "many_report_lines.py")
    assert (result.status, result.tests) == ("error", [])
    assert result.message == (
        "Your code interfered with the grader's report (the report had more lines than the grader "
        "accepts), so nothing could be checked."
    )


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_a_report_heavier_than_the_exercise_needs_is_stopped_with_a_sentence(strict_grader: Grader) -> None:
    # Each call returns 64 arrays of 4,096 floats, well-formed, about 6 MB: the grader stops reading at
    # the bound the exercise's expected values give (a few hundred KB here), long before 4 MiB.
    cases = L41_SUITE.cases(5)
    bound = report_bound([case.expected for case in cases], [case.args for case in cases])
    assert bound < 1024 * 1024
    result = grade_hostile(strict_grader, "heavy_report.py")
    assert (result.status, result.tests) == ("error", [])
    assert result.message == (
        f"Your functions reported more than this exercise's {len(cases)} tests can need (over "
        f"{round(bound / 1024)} KiB), so the grader stopped reading and nothing could be checked. Return "
        "only what each function is asked for: one value of the expected shape, not many large arrays."
    )


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_a_report_trickled_byte_by_byte_is_cut_off_at_once(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "trickle_report.py")
    assert (result.status, result.tests) == ("error", [])
    # Which check refuses it depends on how the machine schedules the two processes: on a quiet machine the
    # grader wakes for nearly every byte and stops at the piece count; on a loaded one the bytes pile up
    # between reads and the report ends as a line that is not the harness's JSON. Either way: refused.
    reasons = (
        "the report came in more pieces than the harness ever writes",
        "a line of the report was not valid JSON",
    )
    assert result.message in {
        f"Your code interfered with the grader's report ({reason}), so nothing could be checked."
        for reason in reasons
    }


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_an_exception_type_with_a_huge_name_is_cut_short(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "long_names.py")
    count = result.tests[-1]
    assert count.status == "error"
    assert count.message == f"param_count raised {'E' * 200}… (line 8 of your file): too long to read"


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_without_a_pids_cgroup_the_process_limit_still_holds(tmp_path: Path) -> None:
    # On a machine where no cgroup can be made (neither v1 nor v2 usable), a root grader used to set no
    # process limit at all: RLIMIT_NPROC was skipped for root, although the sandbox runs as an
    # unprivileged uid for which it holds.
    nowhere = str(tmp_path / "absent")
    host = CgroupHost(v1_pids=nowhere, v1_memory=nowhere, mountinfo=nowhere)
    assert choose(host).kind is CgroupKind.NONE
    with Grader(require_sandbox=True, limits=Limits(wall_s=5.0), cgroup_host=host) as grader:
        result = grade_hostile(grader, "fork_flood.py")  # the file itself stops after 200 forks
    assert result.status == "error"
    assert result.message == (
        "Your code started too many processes (the limit is 16), so the next one could not start. "
        "This happened while your file was being loaded, so no test could run."
    )
    assert _processes_named("qkvfloodchild") == []


def _processes_named(name: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        comm, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
        if comm == name and state != "Z":  # a zombie is already dead, only not yet reaped
            found.append(int(pid))
    return found


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
def test_a_daemon_in_its_own_session_does_not_outlive_the_grading(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "daemon_escape.py")  # held already; kept as a regression test
    param_count_tests = sum(row.function == "param_count" for row in L41_SUITE.table)  # all it defines
    assert result.status == "fail" and result.score == (param_count_tests, L41_TESTS)
    assert _processes_named("qkvdaemonchild") == []


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(60)
@pytest.mark.skipif(not cgroups_available(), reason="no pids cgroup (v1, or v2 with pids) can be made here")
def test_a_thread_flood_hits_the_process_limit_by_name(strict_grader: Grader) -> None:
    result = grade_hostile(strict_grader, "thread_flood.py")  # held already; kept as a regression test
    assert result.message == (
        "Your code started too many processes (the limit is 16), so the next one could not start. "
        "This happened while your file was being loaded, so no test could run."
    )


def test_a_comparison_that_trips_is_a_failed_test_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_judge(*args: object) -> object:
        raise RuntimeError("a bug in a comparison")

    monkeypatch.setattr(grader_report, "judge", broken_judge)
    events: list[dict[str, Any]] = [
        {"event": "imported"},
        {"event": "result", "id": 0, "outcome": "returned", "value": {"t": "none"}},
    ]
    status, _, tests = interpret(RawRun(events=events), CASES, Limits())
    assert status == "fail"
    assert tests[0].to_dict() == {
        "name": CASES[0].name,
        "status": "fail",
        "message": "The grader could not compare what project_qkv returned with the expected result, "
        "so this test counts as failed.",
        "hint": None,
        "function": "project_qkv",
        "call": CASES[0].call,
        "ran": None,
        "expected": shown(CASES[0].expected),
        "got": None,
    }


def test_a_lone_surrogate_in_an_import_error_is_written_out() -> None:
    event = {"event": "import_error", "type": "ValueError", "message": "bad \ud800", "line": 1, "errno": None}
    status, message, _ = interpret(RawRun(events=[event]), CASES, Limits())
    assert status == "error"
    assert message == (
        "Your file raised ValueError on line 1 while it was being loaded, so no test could run: bad \\ud800"
    )


def test_a_forged_array_shape_no_numpy_array_can_have_is_tampering() -> None:
    forged = {"t": "ndarray", "dtype": "float64", "shape": [0, 2**63], "data": []}
    events: list[dict[str, Any]] = [
        {"event": "imported"},
        {
            "event": "result",
            "id": 0,
            "outcome": "returned",
            "value": {"t": "tuple", "n": 3, "items": [forged] * 3},
        },
    ]
    status, message, tests = interpret(RawRun(events=events), CASES, Limits())
    assert (status, tests) == ("error", [])
    assert message == (
        "Your code interfered with the grader's report (an array has the shape [0, 9223372036854775808], "
        "which no array can have), so nothing could be checked."
    )


def test_out_of_memory_from_the_kernel_is_named_as_the_memory_limit() -> None:
    # Empty files cost no tmpfs space but kernel memory, which the sandbox's cgroup counts: a loop making
    # directories in /tmp ends with ENOMEM (seen: ~1.1 KiB each, 415 MiB after 2 s), not with ENOSPC.
    event = {
        "event": "import_error",
        "type": "OSError",
        "message": "[Errno 12] Cannot allocate memory: '/tmp/d1'",
    }
    status, message, _ = interpret(RawRun(events=[{**event, "line": 4, "errno": 12}]), CASES, Limits())
    assert status == "error"
    assert message == (
        "Your code used more than 1 GiB of memory, so it was stopped. "
        "This happened while your file was being loaded, so no test could run."
    )


def test_a_dict_with_many_long_keys_gives_a_short_message() -> None:
    keys = [[{"t": "str", "v": f"{index}" + "k" * 999}, {"t": "none"}] for index in range(64)]
    shapes = {"t": "dict", "n": 64, "items": keys}
    events: list[dict[str, Any]] = [
        {"event": "imported"},
        *({"event": "result", "id": i, "outcome": "returned", "value": shapes} for i in range(len(CASES))),
        {"event": "done"},
    ]
    _, _, tests = interpret(RawRun(events=events), CASES, Limits())
    message = next(test.message for test in tests if test.name.startswith("qkv_shapes")) or ""
    assert message.startswith("Expected the keys 'Q', 'K' and 'V', but the dict has the keys '0kkk")
    assert len(message) < 300


# Values shaped like the harness's reports, including ones only a forged report or odd code produces.
_TEXT = st.sampled_from(["Q", "K", "V", "q", "a", "\ud800", "\x00", "matmul", "broadcast"])
_ARRAY = st.tuples(
    st.sampled_from(["float64", "int64", "bool"]), st.lists(st.integers(0, 4), max_size=3)
).flatmap(
    lambda spec: st.lists(
        st.booleans() if spec[0] == "bool" else st.integers(-5, 5),
        min_size=math.prod(spec[1]),
        max_size=math.prod(spec[1]),
    ).map(lambda data: {"t": "ndarray", "dtype": spec[0], "shape": spec[1], "data": data})
)
_LEAF = st.one_of(
    st.just({"t": "none"}),
    st.booleans().map(lambda v: {"t": "bool", "v": v}),
    st.integers(-(10**15) + 1, 10**15 - 1).map(lambda v: {"t": "int", "v": v}),
    st.sampled_from([1, 2, 3, 12, 84]).map(lambda v: {"t": "int", "v": v}),
    st.sampled_from([0.5, "nan", "inf", "-inf", 1e308]).map(lambda v: {"t": "float", "v": v}),
    _TEXT.map(lambda v: {"t": "str", "v": v}),
    _ARRAY,
    st.just({"t": "object", "type": "Thing", "repr": "\ud800", "shape": [2, 3]}),
)


def _containers(children: Any) -> Any:
    return st.one_of(
        st.tuples(st.sampled_from(["tuple", "list"]), st.lists(children, max_size=4)).map(
            lambda p: {"t": p[0], "n": len(p[1]), "items": p[1]}
        ),
        st.lists(st.tuples(children, children), max_size=3).map(
            lambda pairs: {"t": "dict", "n": len(pairs), "items": [list(p) for p in pairs]}
        ),
        st.lists(children, min_size=3, max_size=3).map(
            lambda values: {
                "t": "dict",
                "n": 3,
                "items": [[{"t": "str", "v": k}, v] for k, v in zip("QKV", values, strict=True)],
            }
        ),
    )


_OUTCOME = st.one_of(
    st.recursive(_LEAF, _containers, max_leaves=10).map(lambda v: {"outcome": "returned", "value": v}),
    # The same, with the facts a test that checks its inputs gets: an argument changed into any value.
    st.tuples(
        st.recursive(_LEAF, _containers, max_leaves=6), _LEAF, st.sampled_from([None, ["X", "Wq"]])
    ).map(
        lambda t: {
            "outcome": "returned",
            "value": t[0],
            "changed": [{"arg": 0, "value": t[1]}],
            "params": t[2],
        }
    ),
    st.tuples(
        st.sampled_from(["ValueError", "TypeError", "OSError"]), _TEXT, st.sampled_from([None, 11, 24])
    ).map(
        lambda t: {
            "outcome": "raised",
            "type": t[0],
            "bases": [t[0], "Exception", "BaseException"],
            "message": t[1],
            "line": None,
            "errno": t[2],
        }
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_OUTCOME, min_size=len(CASES), max_size=len(CASES)))
def test_any_well_formed_report_is_judged_into_an_encodable_document(outcomes: list[dict[str, Any]]) -> None:
    events = [
        {"event": "imported"},
        *({"event": "result", "id": i, **outcome} for i, outcome in enumerate(outcomes)),
        {"event": "done"},
    ]
    status, message, tests = interpret(RawRun(events=events), CASES, Limits())
    assert status in ("pass", "fail")
    assert len(tests) == len(CASES)
    json.dumps([message, [test.to_dict() for test in tests]], ensure_ascii=False).encode("utf-8")
    assert not any("could not compare" in (test.message or "") for test in tests)
