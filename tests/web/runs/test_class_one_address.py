"""A class behind one address: a classmate's flood does not refuse another learner's first program.

Every learner here comes from the same address (the TestClient's). The grading queue is the real one with
a grade function that waits for the test, so the line can be filled and read without timing: the address's
bound on waiting programs counts only programs of learners who had one in line before, and signed-in
learners are clients of their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from qkv.grading.results import GradeResult, TestResult
from qkv.web.runs.local_queue import GradingQueue
from tests.web.backend_fixtures import Browser, learner_id_of


class _Held:
    """A grade function that holds every grading until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, source: str, suite: Any, seed: int | None = None) -> GradeResult:
        assert self.gate.wait(30), "the test never let the grading finish"
        return GradeResult("fail", "Not graded in this test.", [TestResult("t", "fail", "No.")], 1, 1, "test")


@pytest.fixture
def held_line(make_app: Callable[..., FastAPI]) -> Iterator[tuple[FastAPI, GradingQueue, _Held]]:
    app = make_app()
    held = _Held()
    queue = GradingQueue(held, concurrency=1, capacity=50, per_client=2)
    services = app.state.qkv
    original, services.queue = services.queue, queue
    yield app, queue, held
    held.gate.set()
    queue.close(timeout_s=10)
    services.queue = original


def _in_background(learner: Browser, code: str, answers: list[Any]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(learner.submit_code(code)))
    thread.start()
    return thread


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll the queue's own state (no timing is asserted; 30 s only bounds a test that would hang)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"waited 30 s for {what}"
        time.sleep(0.05)


def test_a_flood_from_one_address_does_not_refuse_another_learners_first_program(
    held_line: tuple[FastAPI, GradingQueue, _Held],
) -> None:
    app, queue, held = held_line
    classmates = [Browser(app).open_lesson() for _ in range(4)]
    for mate in classmates:  # each has had a program graded: their next ones count against the address
        assert mate.submit_code("x = 1").status_code == 200
    held.gate.clear()
    answers: list[Any] = []
    threads = [_in_background(mate, "while True: pass", answers) for mate in classmates[:3]]
    _wait_until(lambda: queue.admitted == 3, "the classmates' programs in line")  # one graded, two waiting
    refused = classmates[3].submit_code("while True: pass")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert refused.json()["detail"].startswith("Your network already has 2 programs waiting to be graded")
    newcomer = Browser(app).open_lesson()
    threads.append(_in_background(newcomer, "def f(): pass", answers))
    newcomer_id = learner_id_of(newcomer)
    _wait_until(lambda: queue.position(newcomer_id) is not None, "the newcomer's first program in line")
    held.gate.set()
    for thread in threads:
        thread.join(30)
    assert [answer.status_code for answer in answers] == [200] * 4  # the newcomer's verdict came too


def test_a_signed_in_learner_is_a_client_of_their_own(held_line: tuple[FastAPI, GradingQueue, _Held]) -> None:
    app, queue, held = held_line
    accounts = app.state.qkv.store.accounts
    learner = accounts.find_or_create(None, "s-1", "Ada")
    ada = Browser(app)
    assert ada.client.post("/sign-in", data={"token": accounts.new_sign_in_token(learner)}).status_code == 200
    ada.open_lesson()
    assert ada.submit_code("x = 1").status_code == 200  # her first program
    classmates = [Browser(app).open_lesson() for _ in range(3)]
    for mate in classmates:
        assert mate.submit_code("x = 1").status_code == 200
    held.gate.clear()
    answers: list[Any] = []
    threads = [_in_background(mate, "while True: pass", answers) for mate in classmates]
    _wait_until(lambda: queue.admitted == 3, "the classmates' programs in line")
    # The address's share is full, but Ada's later program counts against nobody's share but her own.
    threads.append(_in_background(ada, "x = 2", answers))
    _wait_until(lambda: queue.position(learner) is not None, "Ada's program in line")
    held.gate.set()
    for thread in threads:
        thread.join(30)
    assert [answer.status_code for answer in answers] == [200] * 4
