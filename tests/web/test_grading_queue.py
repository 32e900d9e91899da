"""The grading queue as a two-level feedback queue, with the real grader and real sandboxes.

Every program first runs within a short slice; one that outgrows it (an endless loop) is set aside and
finishes only behind every program waiting for its first slice. Bounded: the suite's time limit is 1.5 s.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from qkv.grading import Grader, GradeResult, Suite, TestCase, Whole
from qkv.web.grading_queue import GradingQueue, ProgramState

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

SUITE = Suite(
    ["volume"],
    [TestCase("a 2 by 3 by 4 box", "volume", (2, 3, 4), lambda a, b, c: a * b * c, Whole())],
    time_limit_s=1.5,
)
RIGHT = "def volume(a, b, c):\n    return a * b * c\n"
LOOP = "def volume(a, b, c):\n    while True:\n        pass\n"
SLICE_S = 0.3


@pytest.fixture
def queue() -> Iterator[GradingQueue]:
    with Grader(require_sandbox=True) as grader:

        def first_slice(source: str, suite: Suite, seed: int | None = None) -> Any:
            return grader.grade_first_slice(source, suite, seed=seed, slice_s=SLICE_S)

        queue = GradingQueue(grader.grade, concurrency=1, capacity=10, first_slice=first_slice)
        yield queue
        assert queue.close(timeout_s=30)


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(0.005)


def _record_finishing_order(futures: dict[str, concurrent.futures.Future[Any]]) -> list[str]:
    order: list[str] = []
    lock = threading.Lock()
    for name, future in futures.items():

        def done(_: concurrent.futures.Future[Any], name: str = name) -> None:
            with lock:
                order.append(name)

        future.add_done_callback(done)
    return order


def test_a_loops_second_slice_runs_only_after_the_others_first_slices(queue: GradingQueue) -> None:
    futures = {"looper": queue.submit(LOOP, SUITE, owner="looper", client="10.0.0.1")}
    _wait_for(lambda: queue.state("looper") is ProgramState.RUNNING, "the loop to start its first slice")
    # Three learners press Run while the loop is in its first slice, so they are in line behind it.
    for number in range(3):
        futures[f"honest{number}"] = queue.submit(
            RIGHT, SUITE, owner=f"honest{number}", client=f"10.0.0.{number + 2}"
        )
    order = _record_finishing_order(futures)
    seen: set[ProgramState | None] = set()
    while not futures["looper"].done():
        seen.add(queue.state("looper"))
        time.sleep(0.005)
    results = {name: future.result(timeout=30) for name, future in futures.items()}
    assert order[-1] == "looper", f"the loop finished before an honest program: {order}"
    assert ProgramState.TAKING_LONGER in seen  # what the page shows: "taking longer than most"
    assert all(isinstance(result, GradeResult) for result in results.values())
    assert all(results[f"honest{number}"].status == "pass" for number in range(3))
    looped = results["looper"]
    assert looped.status == "fail" and [test.status for test in looped.tests] == ["timeout"]
    assert queue.state("looper") is None and queue.position("looper") is None


def test_running_again_while_set_aside_replaces_the_loop_with_the_new_program(queue: GradingQueue) -> None:
    first = queue.submit(LOOP, SUITE, owner="ada", client="10.0.0.1")
    _wait_for(lambda: queue.state("ada") is ProgramState.RUNNING, "ada's loop to start")
    other = queue.submit(LOOP, SUITE, owner="bo", client="10.0.0.2")  # keeps the grader busy a while
    _wait_for(
        lambda: queue.state("ada") is ProgramState.TAKING_LONGER and queue.position("ada") is not None,
        "ada's loop to be set aside",
    )
    assert queue.position("ada") == 0  # bo's first slice is running; nothing else waits
    again = queue.submit(RIGHT, SUITE, owner="ada", client="10.0.0.1")
    assert again is first  # both requests get the newer program's verdict
    result = again.result(timeout=60)
    assert isinstance(result, GradeResult) and result.status == "pass"
    assert other.result(timeout=60).status == "fail"


def test_a_set_aside_program_can_be_cancelled(queue: GradingQueue) -> None:
    looped = queue.submit(LOOP, SUITE, owner="ada", client="10.0.0.1")
    _wait_for(lambda: queue.state("ada") is ProgramState.RUNNING, "ada's loop to start")
    queue.submit(LOOP, SUITE, owner="bo", client="10.0.0.2")
    _wait_for(
        lambda: queue.state("ada") is ProgramState.TAKING_LONGER and queue.position("ada") is not None,
        "ada's loop to be set aside",
    )
    assert queue.cancel("ada") is True
    assert looped.cancelled()
    assert queue.state("ada") is None and queue.cancel("ada") is False


def test_a_program_arriving_while_loops_run_on_waits_one_slice_not_their_limit() -> None:
    with Grader(require_sandbox=True) as grader:

        def first_slice(source: str, suite: Suite, seed: int | None = None) -> Any:
            return grader.grade_first_slice(source, suite, seed=seed, slice_s=SLICE_S)

        queue = GradingQueue(
            grader.grade, concurrency=1, capacity=10, first_slice=first_slice, later_slices=(SLICE_S,)
        )
        try:
            looped = queue.submit(LOOP, SUITE, owner="looper", client="10.0.0.1")
            _wait_for(
                lambda: (
                    queue.state("looper") is ProgramState.TAKING_LONGER and queue.position("looper") is None
                ),
                "the loop to run on after its first slice",
            )
            # The loop runs on, alone; an honest program arrives. It must not wait for the loop's
            # 1.5 s limit: the loop yields its grader after one more slice.
            honest = queue.submit(RIGHT, SUITE, owner="honest", client="10.0.0.2")
            order = _record_finishing_order({"honest": honest, "looper": looped})
            assert honest.result(timeout=60).status == "pass"
            result = looped.result(timeout=60)
            assert order == ["honest", "looper"]
            assert result.status == "fail" and [test.status for test in result.tests] == ["timeout"]
        finally:
            assert queue.close(timeout_s=30)


def test_set_aside_programs_leave_a_grader_free_for_new_ones() -> None:
    # Two graders; set-aside programs may hold only one of them. Two loops outgrow their first slices:
    # one runs on to its 1.5 s limit, the other waits, and an honest program arriving meanwhile takes
    # the grader left free instead of waiting for a loop's limit.
    with Grader(require_sandbox=True) as grader:

        def first_slice(source: str, suite: Suite, seed: int | None = None) -> Any:
            return grader.grade_first_slice(source, suite, seed=seed, slice_s=SLICE_S)

        queue = GradingQueue(grader.grade, concurrency=2, capacity=10, first_slice=first_slice)
        assert queue.later_concurrency == 1
        try:
            loops = {name: queue.submit(LOOP, SUITE, owner=name, client=name) for name in ("loop1", "loop2")}
            _wait_for(
                lambda: (
                    all(queue.state(name) is ProgramState.TAKING_LONGER for name in loops)
                    and sorted(queue.position(name) is None for name in loops) == [False, True]
                ),
                "one loop to run on and the other to wait, both set aside",
            )
            honest = queue.submit(RIGHT, SUITE, owner="honest", client="honest")
            order = _record_finishing_order({"honest": honest, **loops})
            assert honest.result(timeout=60).status == "pass"
            assert all(future.result(timeout=60).status == "fail" for future in loops.values())
            assert order[0] == "honest", f"the honest program waited for a loop: {order}"
        finally:
            assert queue.close(timeout_s=30)


SLOW_BUT_RIGHT = (
    "def volume(a, b, c):\n"
    "    total = 0\n"
    "    for step in range(3_000_000):\n"  # a few tenths of a second of CPU: more than the probe
    "        total += step\n"
    "    return a * b * c\n"
)


def test_a_program_outgrowing_a_short_first_slice_runs_on_slice_by_slice_to_its_right_verdict() -> None:
    # Slices: a 0.05 s first one (a probe), then up to 3 s more, then 0.3 s at a time. A slow but right
    # program and a loop both outgrow the first; the slow one ends within its second slice, with its
    # right verdict, and the loop runs on, slice by slice, to its limit.
    suite = Suite(SUITE.functions, SUITE.table, time_limit_s=6.0)
    with Grader(require_sandbox=True) as grader:

        def probe(source: str, suite: Suite, seed: int | None = None) -> Any:
            return grader.grade_first_slice(source, suite, seed=seed, slice_s=0.05)

        queue = GradingQueue(
            grader.grade, concurrency=1, capacity=10, first_slice=probe, later_slices=(3.0, SLICE_S)
        )
        try:
            futures = {
                "looper": queue.submit(LOOP, suite, owner="looper", client="10.0.0.1"),
                "slow": queue.submit(SLOW_BUT_RIGHT, suite, owner="slow", client="10.0.0.2"),
            }
            order = _record_finishing_order(futures)
            seen: set[ProgramState | None] = set()
            while not futures["slow"].done():
                seen.add(queue.state("slow"))
                time.sleep(0.005)
            slow = futures["slow"].result(timeout=60)
            assert ProgramState.TAKING_LONGER in seen
            assert slow.status == "pass", slow.message
            looped = futures["looper"].result(timeout=60)
            assert [test.status for test in looped.tests] == ["timeout"]
            assert order == ["slow", "looper"]
        finally:
            assert queue.close(timeout_s=30)
