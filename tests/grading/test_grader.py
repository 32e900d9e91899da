"""The Grader API: results document, seeds, suites, threads, warm spares and the rlimits-only fallback."""

from __future__ import annotations

import ast
import json
import threading
from pathlib import Path

import numpy as np
import pytest

import qkv.grading.grader as grader_module
from qkv import param_count
from qkv.grading import RESULTS_VERSION, Grader, GradeResult, SandboxUnavailable, sandbox_available
from qkv.grading.grader import RLIMITS_ONLY
from tests.builtin_lessons import L41_SUITE, L41_TESTS

pytestmark = pytest.mark.timeout(120)
CORRECT = (Path(__file__).parent / "correct" / "reference_style.py").read_text()


def test_the_results_document_has_exactly_the_documented_fields(grader: Grader) -> None:
    document = grader.grade(CORRECT, L41_SUITE, seed=11).to_dict()
    assert set(document) == {
        "version",
        "status",
        "message",
        "tests",
        "seed",
        "duration_ms",
        "sandbox",
        "output",
        "line",
    }
    assert document["line"] is None
    assert document["version"] == RESULTS_VERSION == 3
    assert document["status"] == "pass" and document["seed"] == 11
    assert isinstance(document["duration_ms"], int)
    fields = {"name", "status", "message", "hint", "function", "call", "expected", "got", "ran"}
    assert [set(test) for test in document["tests"]] == [fields] * L41_TESTS
    cases = L41_SUITE.cases(11)
    assert [test["name"] for test in document["tests"]] == [case.name for case in cases]
    assert [test["function"] for test in document["tests"]] == [case.function for case in cases]


def test_each_test_carries_the_call_that_repeats_it(grader: Grader) -> None:
    wrong = CORRECT.replace("return d_model * (2 * d_k + d_v)", "return 3 * d_model * d_k")
    result = grader.grade(wrong, L41_SUITE, seed=8)
    failed = next(test for test in result.tests if test.status == "fail")
    assert failed.function == "param_count" and failed.call.startswith("param_count(")
    # The call is Python: evaluated with the reference, it gives the expected value the message quotes.
    args = ast.literal_eval(failed.call.removeprefix("param_count"))
    assert f"Expected {param_count(*args)}, but got {3 * args[0] * args[1]}." == failed.message
    # Expected and got also travel apart, for the page's monospace block.
    assert (failed.expected, failed.got) == (str(param_count(*args)), str(3 * args[0] * args[1]))
    assert all(test.expected is None and test.got is None for test in result.tests if test.status == "pass")
    example = next(test for test in result.tests if test.name.startswith("project_qkv reproduces"))
    assert example.call == (
        "project_qkv(np.array([[1, 2]]), np.array([[1, 0], [1, 1]]), np.array([[0, 1], [1, 0]]), "
        "np.array([[2, 0], [0, 2]]))"
    )


def test_random_array_arguments_are_written_so_that_they_rebuild_exactly() -> None:
    for case in L41_SUITE.cases(5):
        if case.function != "project_qkv":
            continue
        # our own text, not a learner's; the weights of some tests are passed by name (Wq=…)
        rebuilt = eval(case.call, {"np": np, "project_qkv": lambda *args, **named: (*args, *named.values())})
        assert all(np.array_equal(mine, theirs) for mine, theirs in zip(rebuilt, case.args, strict=True))
        assert all(mine.dtype == theirs.dtype for mine, theirs in zip(rebuilt, case.args, strict=True))


def test_non_finite_numbers_stay_valid_json(grader: Grader) -> None:
    source = CORRECT.replace("return X @ Wq, X @ Wk, X @ Wv", "return X @ Wq * np.nan, X @ Wk, X @ Wv")
    result = grader.grade(source, L41_SUITE, seed=2)
    text = json.dumps(result.to_dict(), allow_nan=False)
    assert "nan" in text
    assert result.status == "fail"


def test_a_seed_repeats_a_run_and_a_new_one_changes_the_inputs(grader: Grader) -> None:
    source = (Path(__file__).parent / "wrong" / "by_columns.py").read_text()
    first, again = grader.grade(source, L41_SUITE, seed=42), grader.grade(source, L41_SUITE, seed=42)
    assert [t.message for t in first.tests] == [t.message for t in again.tests]
    other = grader.grade(source, L41_SUITE, seed=43)
    assert [t.message for t in first.tests] != [t.message for t in other.tests]


def test_answers_hard_coded_from_one_seed_fail_on_another(grader: Grader) -> None:
    answers = {case.name: case.expected for case in L41_SUITE.cases(1) if case.function == "param_count"}
    table = {tuple(c.args): c.expected for c in L41_SUITE.cases(1) if c.function == "param_count"}
    assert answers
    source = CORRECT.replace(
        "    return d_model * (2 * d_k + d_v)", f"    return {table!r}.get((d_model, d_k, d_v), 12)"
    )
    assert grader.grade(source, L41_SUITE, seed=1).status == "pass"
    assert grader.grade(source, L41_SUITE, seed=2).status == "fail"


def test_a_missing_seed_is_drawn_and_recorded(grader: Grader) -> None:
    result = grader.grade(CORRECT, L41_SUITE)
    assert isinstance(result.seed, int) and result.seed >= 0
    assert grader.grade(CORRECT, L41_SUITE, seed=result.seed).status == "pass"


def test_a_suite_name_instead_of_a_suite_is_a_type_error_naming_it(grader: Grader) -> None:
    with pytest.raises(TypeError, match=r"^suite must be a qkv\.grading\.Suite, not the str 'L9\.9'\.$"):
        grader.grade(CORRECT, "L9.9")  # type: ignore[arg-type]


def test_a_syntax_error_is_an_error_with_its_line(grader: Grader) -> None:
    result = grader.grade(
        "import numpy as np\n\ndef project_qkv(X, Wq, Wk, Wv)\n    pass\n", L41_SUITE, seed=1
    )
    assert result.status == "error" and result.tests == []
    assert result.message == "Your file has a SyntaxError on line 3: expected ':'. Fix it and run again."
    assert result.score == (0, 0)
    assert result.line == 3 and result.to_dict()["line"] == 3  # the page marks this line in the editor


def test_a_huge_file_is_refused_without_running(grader: Grader) -> None:
    result = grader.grade("#" * (300 * 1024), L41_SUITE, seed=1)
    assert result.status == "error"
    assert result.message == "Your file is 300 KiB long; the grader accepts up to 256 KiB."


def test_several_threads_can_grade_at_once(grader: Grader) -> None:
    wrong = (Path(__file__).parent / "wrong" / "order.py").read_text()
    results: dict[int, GradeResult] = {}

    def work(index: int) -> None:
        results[index] = grader.grade(CORRECT if index % 2 else wrong, L41_SUITE, seed=index)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [results[i].status for i in range(8)] == ["fail", "pass"] * 4
    assert all(results[i].seed == i for i in range(8))


def test_a_warm_spare_is_used_once_and_replaced() -> None:
    with Grader(warm_spares=1) as grader:
        assert grader.spares is not None and grader.spares.wait_until_full(30)
        spare = grader.spares._ready[0]
        result = grader.grade(CORRECT, L41_SUITE, seed=1)
        assert result.status == "pass"
        assert not spare.alive()  # discarded after its one submission
        assert grader.spares.wait_until_full(30)
        assert grader.spares._ready[0] is not spare


def test_a_spare_pool_told_to_stop_refilling_hands_out_its_started_spare_and_starts_no_other() -> None:
    with Grader(warm_spares=1) as grader:
        pool = grader.spares
        assert pool is not None
        pool.stop_refilling(wait_s=30)  # right after the start: the spare is yet to be started
        spare = pool.take()
        assert spare is not None and spare.alive()
        result = grader.grade(CORRECT, L41_SUITE, seed=1)  # no spare left: it starts a sandbox itself
        assert result.status == "pass"
        threading.Event().wait(1.0)  # time enough to start a replacement, were one started
        assert pool.take() is None
        spare.discard()


def test_without_bubblewrap_it_grades_with_rlimits_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grader_module, "sandbox_available", lambda: False)
    with Grader() as grader:
        assert grader.sandbox == RLIMITS_ONLY
        result = grader.grade(CORRECT, L41_SUITE, seed=5)
    assert result.status == "pass" and result.sandbox == "rlimits only (no bubblewrap)"


def test_rlimits_only_still_reports_a_memory_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grader_module, "sandbox_available", lambda: False)
    with Grader() as grader:
        result = grader.grade("blob = bytearray(4 * 1024**3)\n", L41_SUITE, seed=5)
    assert result.status == "error"
    assert (result.message or "").startswith("Your code used more than 1 GiB of memory")


def test_requiring_a_sandbox_without_bubblewrap_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grader_module, "sandbox_available", lambda: False)
    monkeypatch.setattr(grader_module, "bwrap_path", lambda: None)
    with pytest.raises(SandboxUnavailable) as raised:
        Grader(require_sandbox=True)
    assert str(raised.value) == (
        "Sandboxed grading needs bubblewrap, which is not installed. Install it with 'apt-get install "
        "bubblewrap' (Debian/Ubuntu), or explicitly allow grading with rlimits only ('qkv serve "
        "--allow-unsandboxed', or Grader(require_sandbox=False)), which does not protect this machine from "
        "the submitted code."
    )


@pytest.mark.sandbox
@pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
def test_with_bubblewrap_the_sandbox_is_used(grader: Grader) -> None:
    result = grader.grade(
        CORRECT + "\nimport os\nprint(os.getuid(), sorted(os.listdir('/')))\n", L41_SUITE, seed=1
    )
    assert result.sandbox == "bubblewrap"
    uid, listing = result.output.split(" ", 1)
    assert uid == "65534"
    visible = set(ast.literal_eval(listing))
    assert {"grader", "tmp", "usr", "proc", "dev"} <= visible
    assert not visible & {"work", "etc", "home", "var", "srv", "opt"}


def test_the_suite_inputs_are_never_whole_numbers_where_truncation_matters() -> None:
    for case in L41_SUITE.cases(3)[1:5]:
        X = case.args[0]
        assert np.all(np.round(X) != X)


@pytest.mark.slow
def test_an_exercise_s_own_time_limit_stops_an_endless_loop_sooner(grader: Grader) -> None:
    assert L41_SUITE.time_limit_s == 4.0 and grader.limits.wall_s == 10.0
    looping = CORRECT.replace("    return d_model * (2 * d_k + d_v)", "    while True:\n        pass")
    result = grader.grade(looping, L41_SUITE, seed=3)
    stopped = next(test for test in result.tests if test.status == "timeout")
    assert stopped.message.startswith(
        "Your code ran past the 4 s time limit, so it was stopped. It was stopped inside "
    )
    assert 4000 <= result.duration_ms < 10_000


def test_a_suite_s_time_limit_is_checked() -> None:
    from qkv.grading import Suite

    with pytest.raises(
        ValueError, match=r"^time_limit_s must be a number of seconds above 0 and at most 60, not 0\.$"
    ):
        Suite(["f"], [], time_limit_s=0)


def test_the_calls_run_in_an_order_shuffled_by_the_seed_and_are_listed_in_the_suite_s(grader: Grader) -> None:
    # A program that counts its calls and breaks the rule only on one numbered call.
    counting = CORRECT.replace(
        "def project_qkv(X, Wq, Wk, Wv):", "CALLS = [0]\n\ndef project_qkv(X, Wq, Wk, Wv):\n    CALLS[0] += 1"
    )
    names = [case.name for case in L41_SUITE.cases(1)]
    orders = []
    for seed in (1, 2, 3):
        result = grader.grade(counting, L41_SUITE, seed=seed)
        assert [test.name for test in result.tests] == names  # listed in the suite's order
        orders.append([test.ran for test in result.tests])
        assert sorted(orders[-1]) == list(range(len(names)))
    assert orders[0] != orders[1] != orders[2]  # run in another order for every seed
