"""Judging on a line of its own: reports are judged in turn by client, the client whose reports cost the
least CPU first, so one client's heavy reports slow that client only; and a report is bounded by what its
exercise's tests need (the bound's arithmetic; the real sandbox's refusal is in test_redteam.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from qkv.grading import Grader, sandbox_available
from qkv.grading.judging import JudgeLine, current_client, judging_for
from qkv.grading.sandbox import harness as harness_module
from qkv.grading.sandbox import report_bound as bound_module
from qkv.grading.sandbox.report_bound import REPORT_BASE_BYTES, TEST_SLACK_BYTES, encoded_size, report_bound
from qkv.grading.sandbox.report_reader import MAX_REPORT_BYTES
from tests.builtin_lessons import L41_SUITE
from tests.time_scale import scaled, wait_for

CORRECT_SOLUTION = (Path(__file__).parent / "correct" / "reference_style.py").read_text()


class FakeClock:
    """A CPU clock each judgement advances by the cost it names (no timing in the test)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_client_with_heavy_reports_waits_behind_its_own_and_others_go_first() -> None:
    clock, order, gate, taken = FakeClock(), [], threading.Event(), threading.Event()
    line = JudgeLine(1, clock=clock)

    def work(name: str, cost: float, wait: threading.Event | None = None):  # type: ignore[no-untyped-def]
        def run() -> str:
            if wait is not None:
                taken.set()  # the one judging thread holds this judgement until the gate opens
                wait.wait(scaled(30))
            order.append(name)
            clock.now += cost
            return name

        return run

    threads = [threading.Thread(target=line.judge, args=("heavy", work("heavy-1", 5.0, gate)))]
    threads[0].start()
    # An event, not a look at the line: the judging thread may take the first judgement at any moment.
    assert taken.wait(scaled(30)), "the first judgement was never taken"
    for name, client in (("heavy-2", "heavy"), ("heavy-3", "heavy"), ("honest-1", "honest")):
        thread = threading.Thread(
            target=line.judge, args=(client, work(name, 5.0 if client == "heavy" else 0.01))
        )
        thread.start()
        threads.append(thread)
    wait_for(lambda: len(line._waiting) == 3, "the three later judgements to wait in line")
    gate.set()
    for thread in threads:
        thread.join(scaled(30))
    line.close()
    assert order == ["heavy-1", "honest-1", "heavy-2", "heavy-3"]


def test_a_judgement_returns_its_value_or_raises_its_error_in_the_waiting_thread() -> None:
    line = JudgeLine()
    assert line.judge("a", lambda: 42) == 42
    with pytest.raises(ZeroDivisionError):
        line.judge("a", lambda: 1 / 0)
    line.close()
    with pytest.raises(RuntimeError, match="closed"):
        line.judge("a", lambda: 1)
    with pytest.raises(ValueError, match="at least 1, not 0"):
        JudgeLine(0)


def test_the_client_is_named_by_the_grading_thread() -> None:
    seen: list[str | None] = []
    with judging_for("10.0.0.9"):
        seen.append(current_client())
        other = threading.Thread(target=lambda: seen.append(current_client()))  # another thread: nobody
        other.start()
        other.join()
    seen.append(current_client())
    assert seen == ["10.0.0.9", None, None]


@pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
def test_a_grader_with_a_judging_line_charges_each_report_to_its_client() -> None:
    with Grader(require_sandbox=True, judge_workers=1) as grader:
        assert grader.judges is not None
        with judging_for("10.0.0.1"):
            result = grader.grade(CORRECT_SOLUTION, L41_SUITE, seed=3)
        assert result.status == "pass"
        assert grader.judges.cost("10.0.0.1") > 0.0  # decoding and judging the report took its CPU
        assert grader.judges.cost("10.0.0.2") == 0.0


def test_the_bound_repeats_the_harness_limits_and_grows_with_the_expected_values() -> None:
    for name in ("MAX_ITEMS", "MAX_ELEMENTS", "MAX_TEXT"):
        assert getattr(bound_module, name) == getattr(harness_module, name), name
    small = report_bound([np.zeros((2, 2))], [(np.zeros((2, 2)),)])
    large = report_bound([np.zeros((64, 64))], [(np.zeros((2, 2)),)])
    assert REPORT_BASE_BYTES + TEST_SLACK_BYTES < small < large
    assert large - small == 4 * (encoded_size(np.zeros((64, 64))) - encoded_size(np.zeros((2, 2))))
    assert report_bound([tuple(np.zeros(4096) for _ in range(64))] * 50, [()] * 50) == MAX_REPORT_BYTES
    cases = L41_SUITE.cases(1)
    assert report_bound([c.expected for c in cases], [c.args for c in cases]) < MAX_REPORT_BYTES // 4
