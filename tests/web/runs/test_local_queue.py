"""The grading queue as a two-level feedback queue, with the real grader and real sandboxes.

Every program first runs within a short slice; one that outgrows it (an endless loop) is set aside and
finishes only behind every program waiting for its first slice.

Nothing here hangs on a quiet machine's timing: programs are submitted together, so the fair line alone
decides who runs first; a right program gets a first slice and a time limit it cannot outgrow on a loaded
machine (only loops, which outgrow any slice, get short ones); a state the test waits for persists (a loop
with a long time limit holds its grader while the test looks), and a loop the test no longer needs is
cancelled rather than waited for. The remaining deadlines are scaled by ``tests.time_scale``.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from qkv.grading import Grader, GradeResult, Suite, TestCase, Whole
from qkv.web.runs.local_queue import GradingQueue, ProgramState
from tests.time_scale import scaled, wait_for

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

CASES = [TestCase("a 2 by 3 by 4 box", "volume", (2, 3, 4), lambda a, b, c: a * b * c, Whole())]
# A loop's suite. A slice is CPU time but the limit is wall-clock time: on a loaded machine a short limit
# runs out before the loop has used its first slice, and the loop is never set aside. The limit also holds
# the states the tests look at while they look (it is each loop's cost to the test).
LONG_SUITE = Suite(["volume"], CASES, time_limit_s=min(60.0, scaled(8.0)))
RIGHT_SUITE = Suite(["volume"], CASES, time_limit_s=min(60.0, scaled(20.0)))
RIGHT = "def volume(a, b, c):\n    return a * b * c\n"
LOOP = "def volume(a, b, c):\n    while True:\n        pass\n"
SLICE_S = 0.3  # a loop's first slice
RIGHT_SLICE_S = scaled(20.0)  # a right program's: it cannot outgrow it, however busy the machine


def _first_slice(grader: Grader) -> Any:
    """The queue's first slice: short for loops, long enough for a right program to end within."""

    def first_slice(source: str, suite: Suite, seed: int | None = None) -> Any:
        slice_s = RIGHT_SLICE_S if suite is RIGHT_SUITE else SLICE_S
        return grader.grade_first_slice(source, suite, seed=seed, slice_s=slice_s)

    return first_slice


@pytest.fixture
def queue() -> Iterator[GradingQueue]:
    with Grader(require_sandbox=True) as grader:
        queue = GradingQueue(grader.grade, concurrency=1, capacity=10, first_slice=_first_slice(grader))
        yield queue
        assert queue.close(timeout_s=scaled(30))


@pytest.fixture
def two_graders() -> Iterator[GradingQueue]:
    """Two graders, of which set-aside programs may hold one (``later_concurrency``)."""
    with Grader(require_sandbox=True) as grader:
        queue = GradingQueue(grader.grade, concurrency=2, capacity=10, first_slice=_first_slice(grader))
        assert queue.later_concurrency == 1
        yield queue
        assert queue.close(timeout_s=scaled(60))


def _set_aside_and_waiting(queue: GradingQueue, owner: str) -> bool:
    return queue.state(owner) is ProgramState.TAKING_LONGER and queue.position(owner) is not None


def _running_on(queue: GradingQueue, owner: str) -> bool:
    return queue.state(owner) is ProgramState.TAKING_LONGER and queue.position(owner) is None


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
    # The loop and three learners press Run together; the line takes the loop first (it joined first),
    # so the three wait behind its first slice.
    futures = {"looper": queue.submit(LOOP, LONG_SUITE, owner="looper", client="10.0.0.1")}
    for number in range(3):
        futures[f"honest{number}"] = queue.submit(
            RIGHT, RIGHT_SUITE, owner=f"honest{number}", client=f"10.0.0.{number + 2}"
        )
    order = _record_finishing_order(futures)
    seen: set[ProgramState | None] = set()
    while not futures["looper"].done():  # set aside, it stays so to its end: a poll cannot miss it
        seen.add(queue.state("looper"))
        time.sleep(0.005)
    results = {name: future.result(timeout=scaled(30)) for name, future in futures.items()}
    assert order[-1] == "looper", f"the loop finished before an honest program: {order}"
    assert ProgramState.TAKING_LONGER in seen  # what the page shows: "taking longer than most"
    assert all(isinstance(result, GradeResult) for result in results.values())
    assert all(results[f"honest{number}"].status == "pass" for number in range(3))
    looped = results["looper"]
    assert looped.status == "fail" and [test.status for test in looped.tests] == ["timeout"]
    assert queue.state("looper") is None and queue.position("looper") is None


def _a_loop_set_aside_behind_a_long_one(queue: GradingQueue) -> concurrent.futures.Future[Any]:
    """bo's long loop runs on, holding the one grader set-aside programs may use; ada's loop, set aside
    after its first slice, waits behind it (for as long as bo's time limit: a state that persists)."""
    queue.submit(LOOP, LONG_SUITE, owner="bo", client="10.0.0.2")
    wait_for(lambda: _running_on(queue, "bo"), "bo's loop to run on after its first slice")
    looped = queue.submit(LOOP, LONG_SUITE, owner="ada", client="10.0.0.1")
    wait_for(lambda: _set_aside_and_waiting(queue, "ada"), "ada's loop to be set aside")
    return looped


def test_running_again_while_set_aside_replaces_the_loop_with_the_new_program(
    two_graders: GradingQueue,
) -> None:
    first = _a_loop_set_aside_behind_a_long_one(two_graders)
    assert two_graders.position("ada") == 0  # nothing else waits
    again = two_graders.submit(RIGHT, RIGHT_SUITE, owner="ada", client="10.0.0.1")
    assert again is first  # both requests get the newer program's verdict
    result = again.result(timeout=scaled(60))
    assert isinstance(result, GradeResult) and result.status == "pass"


def test_a_set_aside_program_can_be_cancelled(two_graders: GradingQueue) -> None:
    looped = _a_loop_set_aside_behind_a_long_one(two_graders)
    assert two_graders.cancel("ada") is True
    assert looped.cancelled()
    assert two_graders.state("ada") is None and two_graders.cancel("ada") is False


def test_a_program_arriving_while_loops_run_on_waits_one_slice_not_their_limit() -> None:
    # The loop's time limit is long; had it kept its grader to the limit, the honest program would finish
    # after it. Once the honest verdict is in, the loop (between slices, its verdict still open) is cancelled.
    endless = Suite(["volume"], CASES, time_limit_s=60.0)
    with Grader(require_sandbox=True) as grader:
        queue = GradingQueue(
            grader.grade,
            concurrency=1,
            capacity=10,
            first_slice=_first_slice(grader),
            later_slices=(SLICE_S,),
        )
        try:
            looped = queue.submit(LOOP, endless, owner="looper", client="10.0.0.1")
            wait_for(lambda: _running_on(queue, "looper"), "the loop to run on after its first slice")
            honest = queue.submit(RIGHT, RIGHT_SUITE, owner="honest", client="10.0.0.2")
            assert honest.result(timeout=scaled(50)).status == "pass"
            assert not looped.done(), "the honest program waited for the loop's time limit"
            assert looped.cancel()
        finally:
            assert queue.close(timeout_s=scaled(30))


def test_set_aside_programs_leave_a_grader_free_for_new_ones(two_graders: GradingQueue) -> None:
    # Two loops outgrow their first slices: one runs on to its long time limit, the other waits (for as
    # long), and an honest program arriving meanwhile takes the grader left free instead of waiting.
    loops = {
        name: two_graders.submit(LOOP, LONG_SUITE, owner=name, client=name) for name in ("loop1", "loop2")
    }
    wait_for(
        lambda: (
            sorted(_running_on(two_graders, name) for name in loops) == [False, True]
            and any(_set_aside_and_waiting(two_graders, name) for name in loops)
        ),
        "one loop to run on and the other to wait, both set aside",
    )
    honest = two_graders.submit(RIGHT, RIGHT_SUITE, owner="honest", client="honest")
    order = _record_finishing_order({"honest": honest, **loops})
    assert honest.result(timeout=scaled(60)).status == "pass"
    assert order[0] == "honest", f"the honest program waited for a loop: {order}"
    for name in loops:  # the waiting loop is not needed any more; the fixture waits for the running one
        two_graders.cancel(name)


SLOW_BUT_RIGHT = (
    "def volume(a, b, c):\n"
    "    total = 0\n"
    # About a second of CPU here: well past the probe's 0.05 s even on the fastest machine, within the
    # 3 s slice that follows on any.
    "    for step in range(20_000_000):\n"
    "        total += step\n"
    "    return a * b * c\n"
)


def test_a_program_outgrowing_a_short_first_slice_runs_on_slice_by_slice_to_its_right_verdict() -> None:
    # Slices: a 0.05 s first one (a probe), then up to 3 s more, then 0.3 s at a time. A slow but right
    # program and a loop both outgrow the first; the slow one (in line first) ends within its second
    # slice, or, on a machine so busy that it does not, in the short ones that follow, turn about with
    # the loop's; either way with its right verdict, long before the loop reaches its limit.
    slow_suite = Suite(["volume"], CASES, time_limit_s=min(60.0, scaled(20.0)))
    loop_suite = Suite(["volume"], CASES, time_limit_s=min(60.0, scaled(6.0)))
    with Grader(require_sandbox=True) as grader:

        def probe(source: str, suite: Suite, seed: int | None = None) -> Any:
            return grader.grade_first_slice(source, suite, seed=seed, slice_s=0.05)

        queue = GradingQueue(
            grader.grade, concurrency=1, capacity=10, first_slice=probe, later_slices=(3.0, SLICE_S)
        )
        try:
            futures = {
                "slow": queue.submit(SLOW_BUT_RIGHT, slow_suite, owner="slow", client="10.0.0.2"),
                "looper": queue.submit(LOOP, loop_suite, owner="looper", client="10.0.0.1"),
            }
            order = _record_finishing_order(futures)
            seen: set[ProgramState | None] = set()
            while not futures["slow"].done():  # set aside after the probe, to its end
                seen.add(queue.state("slow"))
                time.sleep(0.005)
            slow = futures["slow"].result(timeout=scaled(60))
            assert ProgramState.TAKING_LONGER in seen
            assert slow.status == "pass", slow.message
            looped = futures["looper"].result(timeout=scaled(60))
            assert [test.status for test in looped.tests] == ["timeout"]
            assert order == ["slow", "looper"]
        finally:
            assert queue.close(timeout_s=scaled(30))
