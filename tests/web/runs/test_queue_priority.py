"""The grading line's priorities and reserved graders: one client's many programs yield the cores and a
grader to a client with a single one.

The grade function here stands in for the grader: it records the priority its thread was handed
(``qkv.grading.sandbox.priority.current_priority``, what the real grader sets on the sandbox; that the sandbox
then runs there is ``tests/grading/sandbox/test_priority.py``) and waits for the test to let it end.
"""

from __future__ import annotations

import threading

import pytest

from qkv.grading.sandbox.priority import SandboxPriority, current_priority
from qkv.web.runs.local_queue import GradingQueue, QueueFull
from qkv.web.settings import Settings
from tests.time_scale import scaled

pytestmark = pytest.mark.timeout(30)
NORMAL, BACKGROUND = SandboxPriority.NORMAL, SandboxPriority.BACKGROUND


class _Held:
    """A grade function that records each program's priority, then holds its grader until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self.priorities: dict[str, SandboxPriority] = {}
        self.order: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, source: str, suite: str) -> str:
        with self._lock:
            self.priorities[source] = current_priority()
            self.order.append(source)
        self.started.release()
        assert self.release.wait(scaled(10))
        return f"graded {source}"

    def wait_started(self, count: int) -> None:
        for _ in range(count):
            assert self.started.acquire(timeout=scaled(5)), f"only {self.order} started"


def test_a_client_with_programs_beside_each_other_runs_them_in_the_background() -> None:
    grade = _Held()
    queue = GradingQueue(grade, concurrency=3, capacity=10)
    first = queue.submit("a1", "s", owner="a1", client="10.0.0.1")
    grade.wait_started(1)
    second = queue.submit("a2", "s", owner="a2", client="10.0.0.1")  # beside its client's first
    other = queue.submit("b1", "s", owner="b1", client="10.0.0.2")  # a client with nothing else here
    grade.wait_started(2)
    grade.release.set()
    assert [future.result(scaled(5)) for future in (first, second, other)] == [
        "graded a1",
        "graded a2",
        "graded b1",
    ]
    assert grade.priorities == {"a1": NORMAL, "a2": BACKGROUND, "b1": NORMAL}
    # Once its programs have ended, the client's next one runs at normal priority again.
    assert queue.submit("a3", "s", owner="a1", client="10.0.0.1").result(scaled(5)) == "graded a3"
    assert grade.priorities["a3"] is NORMAL
    assert queue.close(timeout_s=scaled(5))


def test_programs_waiting_in_line_count_as_the_clients_too() -> None:
    grade = _Held()
    queue = GradingQueue(grade, concurrency=1, capacity=10)
    blocker = queue.submit("x", "s", owner="x", client="10.0.0.9")
    grade.wait_started(1)
    many = [queue.submit(f"m{n}", "s", owner=f"m{n}", client="10.0.0.66") for n in range(2)]
    lone = queue.submit("ada", "s", owner="ada", client="10.0.0.1")
    grade.release.set()
    for future in [blocker, *many, lone]:
        future.result(scaled(5))
    assert grade.order == ["x", "m0", "ada", "m1"]  # the fair line's order, as before
    # m0 was taken while m1 waited; ada and, by then alone, m1 ran at normal priority.
    assert grade.priorities == {"x": NORMAL, "m0": BACKGROUND, "ada": NORMAL, "m1": NORMAL}
    assert queue.close(timeout_s=scaled(5))


def test_a_reserved_grader_starts_a_newcomers_program_while_one_client_holds_the_others() -> None:
    grade = _Held()
    queue = GradingQueue(grade, concurrency=2, capacity=10, reserved=1)
    flood = [queue.submit(f"f{n}", "s", owner=f"f{n}", client="10.0.0.66") for n in range(3)]
    grade.wait_started(2)
    # The reserved grader is free, but not for the client that holds the others: its third program waits.
    assert not grade.started.acquire(timeout=0.3)
    assert queue.position("f2") == 0
    ada = queue.submit("ada", "s", owner="ada", client="10.0.0.1")
    grade.wait_started(1)  # at once, on the reserved grader, while both others are still held
    assert grade.order == ["f0", "f1", "ada"] and queue.position("f2") == 0
    assert grade.priorities["ada"] is NORMAL and grade.priorities["f1"] is BACKGROUND
    grade.release.set()
    assert [future.result(scaled(5)) for future in [*flood, ada]] == [
        "graded f0",
        "graded f1",
        "graded f2",
        "graded ada",
    ]
    assert queue.close(timeout_s=scaled(5))


def test_a_program_on_a_reserved_grader_takes_no_place_in_the_wait_list() -> None:
    grade = _Held()
    queue = GradingQueue(grade, concurrency=1, capacity=0, reserved=1)
    futures = [queue.submit("a", "s", owner="a", client="10.0.0.1")]
    grade.wait_started(1)
    futures.append(queue.submit("b", "s", owner="b", client="10.0.0.2"))  # the reserved grader
    grade.wait_started(1)
    with pytest.raises(QueueFull):  # both graders busy and no wait list: full, as without a reserve
        queue.submit("c", "s", owner="c", client="10.0.0.3")
    grade.release.set()
    assert [future.result(scaled(5)) for future in futures] == ["graded a", "graded b"]
    assert queue.close(timeout_s=scaled(5))


def test_a_negative_reserve_is_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match=r"reserved >= 0, not 1, 0, None and -1\."):
        GradingQueue(_Held(), concurrency=1, capacity=0, reserved=-1)
    with pytest.raises(ValueError, match=r"grading_reserved must be at least 0, but it is -1\."):
        Settings(grading_reserved=-1)
    assert Settings().grading_reserved == 1
