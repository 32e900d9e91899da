"""Code submissions through the real sandboxed grader, the bounded queue and its 503, and grading turned off."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from qkv.web.runs.local_queue import (
    AlreadyGrading,
    ClientBusy,
    GradingBusy,
    GradingClosed,
    GradingQueue,
    QueueFull,
)
from tests.time_scale import scaled
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, WRONG_SOLUTION, Browser, learner_id_of

needs_bubblewrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"
)


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_correct_solution_passes_and_is_restored(browser: Browser) -> None:
    response = browser.submit_code(CORRECT_SOLUTION)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["result"]["status"] == "pass", body["result"]
    assert body["result"]["sandbox"] == "bubblewrap"
    assert body["progress"]["exercises"]["functions"]["status"] == "correct"
    restored = browser.page_progress()["code"]["functions"]
    assert restored["source"] == CORRECT_SOLUTION
    assert restored["result"]["status"] == "pass"


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_wrong_solution_fails_with_a_hint_and_keeps_the_attempt(browser: Browser) -> None:
    body = browser.submit_code(WRONG_SOLUTION).json()
    assert body["result"]["status"] == "fail"
    failed = [test for test in body["result"]["tests"] if test["status"] != "pass"]
    assert failed and any(test["hint"] for test in failed)
    entry = body["progress"]["exercises"]["functions"]
    assert (entry["status"], entry["attempts"]) == ("attempted", 1)


def test_code_over_64_kib_is_refused_with_413(browser: Browser) -> None:
    code = "# " + "x" * (64 * 1024)
    response = browser.submit_code(code)
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"The code is {len(code):,} bytes; the grader accepts at most 65,536 bytes (64 KiB)."
    }
    assert browser.progress()["exercises"]["functions"]["attempts"] == 0


def test_answers_are_not_accepted_as_code(browser: Browser) -> None:
    response = browser.submit_code("3, 2", exercise_id="q")
    assert response.status_code == 422
    assert response.json() == {
        "detail": "The exercise 'q' takes an answer, not code; send it to /api/lessons/L4.1/answers instead."
    }


def _grade_slowly_in_background(app: FastAPI, learner: Browser) -> tuple[threading.Thread, list[Any]]:
    """Submit a program that sleeps past its time limit, and return once the queue has admitted it.

    It holds its grader for the whole limit (a sleep outgrows no CPU slice), however slow the machine is:
    the test's requests meanwhile cannot come too late.
    """
    slow = "import time\ntime.sleep(600)\n" + CORRECT_SOLUTION
    queue = app.state.qkv.queue
    admitted = threading.Event()
    submit = queue.submit

    def submit_and_tell(*args: Any, **kwargs: Any) -> Any:
        future = submit(*args, **kwargs)
        admitted.set()
        return future

    queue.submit = submit_and_tell
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(learner.submit_code(slow)))
    worker.start()
    try:
        assert admitted.wait(scaled(30)), "the slow program was never admitted to the grading queue"
    finally:
        queue.submit = submit
    return worker, results


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_full_queue_answers_503_with_retry_after(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(grading_concurrency=1, grading_queue=0)
    first, second = Browser(app).open_lesson(), Browser(app).open_lesson()
    worker, results = _grade_slowly_in_background(app, first)
    assert app.state.qkv.queue.admitted == 1

    refused = second.submit_code(CORRECT_SOLUTION)
    worker.join(scaled(60))

    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["detail"].startswith("The grader is busy: 1 program is being graded or waiting")
    assert results and results[0].status_code == 200
    assert second.progress()["exercises"]["functions"]["attempts"] == 0  # a refused submission is not saved


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_second_run_while_the_first_is_graded_answers_429(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(grading_concurrency=4, grading_queue=0)
    learner, other = Browser(app).open_lesson(), Browser(app).open_lesson()
    worker, results = _grade_slowly_in_background(app, learner)

    again = learner.submit_code(CORRECT_SOLUTION)
    meanwhile = other.submit_code(CORRECT_SOLUTION)  # other learners still get a grader
    worker.join(scaled(60))

    assert again.status_code == 429
    assert int(again.headers["retry-after"]) >= 1
    assert again.json()["detail"].startswith("Your previous program is still being graded")
    assert meanwhile.status_code == 200 and meanwhile.json()["result"]["status"] == "pass"
    assert results and results[0].status_code == 200
    assert learner.progress()["exercises"]["functions"]["attempts"] == 1  # the refused run is not saved


@pytest.mark.timeout(60)
def test_without_bubblewrap_grading_is_off_but_the_lesson_is_served(
    make_app: Callable[..., FastAPI], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from qkv.grading import sandbox_available

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on the PATH, as on a machine without it
    sandbox_available.cache_clear()
    try:
        app = make_app()
        learner = Browser(app).open_lesson()
        response = learner.submit_code(CORRECT_SOLUTION)
        assert response.status_code == 503
        assert "retry-after" not in response.headers  # not a wait: the page shows it, it does not retry
        detail = response.json()["detail"]
        assert detail.startswith("Code cannot be graded on this server.")
        assert "bubblewrap" in detail
        assert learner.answer("q", "3, 2").json()["feedback"]["correct"] is True
    finally:
        monkeypatch.undo()
        sandbox_available.cache_clear()


# -- the queue itself ------------------------------------------------------------------------------


class _Gate:
    """A grade function that blocks until released, to hold slots in the queue."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def __call__(self, source: str, suite: str) -> str:
        self.started.release()
        self.release.wait(scaled(10))
        return f"graded {source}"


@pytest.mark.timeout(30)
def test_queue_admits_concurrency_plus_capacity_then_refuses() -> None:
    gate = _Gate()
    queue = GradingQueue(gate, concurrency=2, capacity=1)
    futures = [queue.submit(str(i), "s") for i in range(3)]
    assert gate.started.acquire(timeout=scaled(5)) and gate.started.acquire(timeout=scaled(5))
    with pytest.raises(QueueFull) as full:
        queue.submit("4", "s")
    assert str(full.value).startswith("The grader is busy: 3 programs are being graded or waiting")
    assert full.value.retry_after_s >= 1
    gate.release.set()
    assert [future.result(scaled(5)) for future in futures] == ["graded 0", "graded 1", "graded 2"]
    assert queue.admitted == 0
    assert queue.submit("again", "s").result(scaled(5)) == "graded again"
    assert queue.close(timeout_s=scaled(5)) is True


def test_a_learner_may_have_one_grading_in_flight() -> None:
    gate = _Gate()
    queue = GradingQueue(gate, concurrency=4, capacity=0)
    first = queue.submit("loop", "s", owner="ada")
    assert gate.started.acquire(timeout=scaled(5))
    with pytest.raises(AlreadyGrading) as again:
        queue.submit("again", "s", owner="ada")
    assert str(again.value).startswith(
        "Your previous program is still being graded; wait for its results, then run again"
    )
    assert again.value.retry_after_s >= 1
    other = queue.submit("other", "s", owner="grace")  # another learner is not held up
    gate.release.set()
    assert (first.result(scaled(5)), other.result(scaled(5))) == ("graded loop", "graded other")
    # A learner who has the result may run again at once: the slot is free before the result is set.
    assert queue.submit("later", "s", owner="ada").result(scaled(5)) == "graded later"
    assert queue.close(timeout_s=scaled(5)) is True


@pytest.mark.timeout(30)
def test_closing_waits_for_running_gradings_then_refuses_new_ones() -> None:
    gate = _Gate()
    queue = GradingQueue(gate, concurrency=1, capacity=0)
    running = queue.submit("long", "s")
    assert gate.started.acquire(timeout=scaled(5))
    outcome: list[bool] = []
    closed = threading.Event()

    def close() -> None:
        outcome.append(queue.close(timeout_s=scaled(10)))
        closed.set()

    threading.Thread(target=close).start()
    assert not closed.wait(0.3), "close() returned while a grading was still running"
    gate.release.set()
    assert closed.wait(scaled(10))
    assert outcome == [True]
    assert running.result(0) == "graded long"
    with pytest.raises(GradingClosed):
        queue.submit("late", "s")


@pytest.mark.timeout(30)
def test_busy_refusals_share_one_type_that_carries_the_http_status() -> None:
    gate = _Gate()
    queue = GradingQueue(gate, concurrency=2, capacity=0)
    queue.submit("loop", "s", owner="ada")
    assert gate.started.acquire(timeout=scaled(5))  # running now: a second Run is refused, not queued
    with pytest.raises(GradingBusy) as again:
        queue.submit("again", "s", owner="ada")
    queue.submit("other", "s", owner="grace")
    with pytest.raises(GradingBusy) as full:
        queue.submit("third", "s", owner="hopper")
    gate.release.set()
    assert (type(again.value), again.value.status) == (AlreadyGrading, 429)
    assert (type(full.value), full.value.status) == (QueueFull, 503)
    assert queue.close(timeout_s=scaled(5)) is True


@pytest.mark.timeout(30)
def test_closing_gives_up_after_the_grace_period() -> None:
    gate = _Gate()
    queue = GradingQueue(gate, concurrency=1, capacity=0)
    queue.submit("stuck", "s")
    assert gate.started.acquire(timeout=scaled(5))
    assert queue.close(timeout_s=0.2) is False
    gate.release.set()


class _Recorder:
    """A grade function that records the order it grades in; the first call waits for the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.order: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, source: str, suite: str) -> str:
        with self.lock:
            self.order.append(source)
        self.started.set()
        self.gate.wait(scaled(10))
        return f"graded {source}"


@pytest.mark.timeout(30)
def test_the_line_is_served_fairly_across_clients() -> None:
    grade = _Recorder()
    queue = GradingQueue(grade, concurrency=1, capacity=50)
    first = queue.submit("blocker", "s", owner="x", client="10.0.0.9")
    assert grade.started.wait(scaled(5))
    # One client sends many programs under many identities; two honest clients send one each, later.
    flood = [queue.submit(f"flood{i}", "s", owner=f"minted{i}", client="10.0.0.66") for i in range(6)]
    ada = queue.submit("ada", "s", owner="ada", client="10.0.0.1")
    grace = queue.submit("grace", "s", owner="grace", client="10.0.0.2")
    assert queue.position("ada") == 1 and queue.position("grace") == 2  # one flood program, then ada
    assert queue.position("minted5") == 7 and queue.position("nobody") is None
    grade.gate.set()
    for future in [first, *flood, ada, grace]:
        future.result(scaled(5))
    assert grade.order[:4] == ["blocker", "flood0", "ada", "grace"]  # round robin over addresses
    assert queue.close(timeout_s=scaled(5)) is True


class _Stepper:
    """A grade function that records its order and runs each program only when the test lets it.

    A program whose source starts with "slow" then takes 0.3 s (a loop's slice, say); others end at once.
    """

    def __init__(self) -> None:
        self.go = threading.Semaphore(0)
        self.started = threading.Semaphore(0)
        self.order: list[str] = []

    def __call__(self, source: str, suite: str) -> str:
        self.order.append(source)
        self.started.release()
        assert self.go.acquire(timeout=scaled(10))
        if source.startswith("slow"):
            time.sleep(0.3)
        return f"graded {source}"

    def step(self) -> None:
        """Let the running program finish, and wait until the next one has started."""
        self.go.release()
        assert self.started.acquire(timeout=scaled(10))


@pytest.mark.timeout(30)
def test_the_line_is_fair_by_the_grader_time_each_client_used_not_by_turns() -> None:
    grade = _Stepper()
    queue = GradingQueue(grade, concurrency=1, capacity=10)
    slow = [queue.submit(f"slow{i}", "s", owner=f"slow{i}", client="10.0.0.66") for i in (1, 2)]
    assert grade.started.acquire(timeout=scaled(10))  # slow1 runs
    quick = [queue.submit("ada", "s", owner="ada", client="10.0.0.1")]
    grade.step()  # slow1 held the grader 0.3 s; ada goes next, as round robin would have it too
    quick.append(queue.submit("grace", "s", owner="grace", client="10.0.0.2"))
    # Round robin would serve slow2 before grace, who joined the line after it; but the slow client has
    # used 0.3 s of grader time and grace none, so grace goes first.
    assert queue.position("grace") == 0 and queue.position("slow2") == 1
    grade.step()
    grade.step()
    grade.go.release()
    assert [future.result(scaled(10)) for future in [*slow, *quick]] == [
        "graded slow1", "graded slow2", "graded ada", "graded grace"
    ]  # fmt: skip
    assert grade.order == ["slow1", "ada", "grace", "slow2"]
    assert queue.close(timeout_s=scaled(5)) is True


def test_a_later_line_gets_at_most_some_of_the_graders() -> None:
    with pytest.raises(
        ValueError, match=r"later_concurrency must be from 1 to the concurrency \(4\), not 5\."
    ):
        GradingQueue(_Stepper(), concurrency=4, capacity=0, later_concurrency=5)
    for concurrency, half in ((4, 2), (3, 1), (1, 1)):  # the default: half of them, at least one
        queue = GradingQueue(_Stepper(), concurrency=concurrency, capacity=0)
        assert queue.later_concurrency == half
        assert queue.close(timeout_s=scaled(1)) is True


@pytest.mark.timeout(30)
def test_running_again_while_waiting_replaces_the_waiting_program() -> None:
    grade = _Recorder()
    queue = GradingQueue(grade, concurrency=1, capacity=5)
    queue.submit("blocker", "s", owner="x", client="a")
    assert grade.started.wait(scaled(5))
    older = queue.submit("draft 1", "s", owner="ada", client="b")
    newer = queue.submit("draft 2", "s", owner="ada", client="b")
    assert newer is older and queue.admitted == 2
    grade.gate.set()
    assert older.result(scaled(5)) == newer.result(scaled(5)) == "graded draft 2"
    assert "draft 1" not in grade.order
    assert queue.close(timeout_s=scaled(5)) is True


def _graded_once(queue: GradingQueue, grade: _Recorder, owners: list[str], client: str) -> None:
    """Give each owner a program graded and done, so that their next one is not their first."""
    grade.gate.set()
    for owner in owners:
        queue.submit(f"{owner}'s first", "s", owner=owner, client=client).result(5)
    grade.gate.clear()
    grade.started.clear()  # so that the test waits for its own first program to start


@pytest.mark.timeout(30)
def test_one_client_may_have_only_so_many_later_programs_waiting() -> None:
    grade = _Recorder()
    queue = GradingQueue(grade, concurrency=1, capacity=10, per_client=2)
    _graded_once(queue, grade, ["m1", "m2", "m3"], "b")
    queue.submit("blocker", "s", owner="x", client="a")
    assert grade.started.wait(scaled(5))
    queue.submit("1", "s", owner="m1", client="b")
    queue.submit("2", "s", owner="m2", client="b")
    with pytest.raises(ClientBusy) as busy:
        queue.submit("3", "s", owner="m3", client="b")
    assert busy.value.status == 429 and busy.value.retry_after_s >= 1
    assert str(busy.value).startswith(
        "Your network already has 2 programs waiting to be graded, the most one address may have"
    )
    queue.submit("c", "s", owner="c", client="c")  # another address still gets in line
    grade.gate.set()
    assert queue.close(timeout_s=scaled(5)) is True


@pytest.mark.timeout(30)
def test_a_flood_from_one_address_does_not_refuse_a_classmates_first_program() -> None:
    grade = _Recorder()
    queue = GradingQueue(grade, concurrency=1, capacity=100, per_client=4)
    flooders = [f"looper{i}" for i in range(4)]
    _graded_once(queue, grade, flooders, "school")
    queue.submit("blocker", "s", owner="x", client="elsewhere")
    assert grade.started.wait(5)
    for owner in flooders:  # the classmates who flood fill the address's bound with later programs
        queue.submit("while True: pass", "s", owner=owner, client="school")
    with pytest.raises(ClientBusy):  # a program of nobody in particular counts against the address
        queue.submit("x", "s", owner=None, client="school")
    # A learner of the same address pressing Run for the first time is taken all the same.
    ada = queue.submit("ada's first", "s", owner="ada", client="school")
    assert queue.position("ada") == 4
    # However many first programs the address sends (a client minting identities is held by the new
    # learners an address may start, qkv.web.http.identity_limits), only a full line refuses them.
    minted = [queue.submit("m", "s", owner=f"minted{i}", client="school") for i in range(10)]
    with pytest.raises(ClientBusy):  # while a program that is no one's first is refused still
        queue.submit("again", "s", owner=None, client="school")
    queue.submit("grace's first", "s", owner="grace", client="another school")  # other addresses unmoved
    grade.gate.set()
    assert ada.result(5) == "graded ada's first" and all(future.result(5) for future in minted)
    assert queue.close(timeout_s=5) is True


@needs_bubblewrap
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_waiting_learner_sees_their_place_and_can_cancel(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(grading_concurrency=1)
    first, second = Browser(app).open_lesson(), Browser(app).open_lesson()
    worker, results = _grade_slowly_in_background(app, first)  # holds the only grader for its time limit
    nowhere = {"position": None, "place": None, "estimate_s": None, "state": None}
    assert second.client.get(f"{API}/code/queue").json() == nowhere
    waiting: list[Any] = []
    queue = app.state.qkv.queue
    in_line = threading.Event()
    submit = queue.submit

    def submit_and_tell(*args: Any, **kwargs: Any) -> Any:
        future = submit(*args, **kwargs)
        in_line.set()
        return future

    queue.submit = submit_and_tell
    waiter = threading.Thread(target=lambda: waiting.append(second.submit_code(CORRECT_SOLUTION)))
    waiter.start()
    assert in_line.wait(scaled(30)), "the second program never got in line"
    queue.submit = submit
    second_learner = learner_id_of(second)
    # Next in line; nothing has finished on this server yet, so there is no measured pace to estimate from.
    in_place = {"position": 0, "place": 1, "estimate_s": None, "state": "waiting"}
    assert second.client.get(f"{API}/code/queue").json() == in_place
    cancelled = second.post(f"{API}/code/cancel", {})
    assert cancelled.status_code == 200 and cancelled.json() == {"cancelled": True}
    waiter.join(scaled(30))
    assert waiting[0].status_code == 409
    assert waiting[0].json() == {"detail": "You cancelled this run before it was graded."}
    assert queue.position(second_learner) is None
    assert second.post(f"{API}/code/cancel", {}).json() == {"cancelled": False}  # nothing left to cancel
    worker.join(scaled(60))
    assert results[0].status_code == 200  # the program being graded was not touched
    assert second.progress()["exercises"]["functions"]["attempts"] == 0  # a cancelled run is not saved
