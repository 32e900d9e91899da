"""A lecture hall at once: the waiting line's bound comes from the machine, a burst beyond the old fixed
bound of 256 is all taken, and a waiting learner is told their place in line and an estimate from the line's
measured pace.

The grading line is the app's real one with a grade function that waits for the test (no timing is
asserted: the test opens the gate once the state it needs is reached).
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from qkv.grading.results import GradeResult, TestResult
from qkv.web.app import create_app
from qkv.web.runs.line_bound import (
    LEAST_BOUND,
    OTHER_OPEN_FILES,
    WAITING_PROGRAM_BYTES,
    raise_open_files_limit,
    waiting_line_bound,
)
from qkv.web.runs.local_queue import GradingQueue
from qkv.web.settings import Settings
from tests.time_scale import scaled, wait_for
from tests.web.backend_fixtures import API, SECRET, Browser
from tests.web.browser_support import serve

GIB = 1024**3
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


def _result() -> GradeResult:
    return GradeResult("pass", "All 1 tests passed.", [TestResult("t", "pass", "Yes.")], 1, 1, "test")


class _Steps:
    """A grade function that finishes one grading each time the test allows one (``allow``)."""

    def __init__(self) -> None:
        self.permits = threading.Semaphore(0)
        self.started = threading.Semaphore(0)

    def __call__(self, source: str, suite: Any, seed: int | None = None) -> GradeResult:
        self.started.release()
        assert self.permits.acquire(timeout=scaled(60)), "the test never let the grading finish"
        return _result()

    def allow(self, gradings: int = 1) -> None:
        self.permits.release(gradings)


def test_the_bound_is_what_a_share_of_the_memory_holds_at_a_waiting_programs_cost() -> None:
    share = 256 * 1024**2  # a sixteenth of 4 GiB
    assert waiting_line_bound(4 * GIB, open_files=1_000_000) == share // WAITING_PROGRAM_BYTES
    assert waiting_line_bound(8 * GIB, open_files=1_000_000) == 2 * share // WAITING_PROGRAM_BYTES
    # The cost of a program sets it: programs twice as dear, half the places.
    half = waiting_line_bound(4 * GIB, open_files=1_000_000, program_bytes=2 * WAITING_PROGRAM_BYTES)
    assert half == share // WAITING_PROGRAM_BYTES // 2
    # Each waiting program holds a connection: the open files left for them bound it too.
    assert waiting_line_bound(64 * GIB, open_files=1_024) == 1_024 - OTHER_OPEN_FILES
    # A tiny machine still takes a small class; a huge one is bounded by what --grading-queue accepts.
    assert waiting_line_bound(64 * 1024**2, open_files=1_000_000) == LEAST_BOUND
    assert waiting_line_bound(10_000 * GIB, open_files=10**9) == 100_000


def test_the_default_bound_is_this_machines_and_the_option_overrides_it() -> None:
    from qkv.cli.serve import _line_bound

    assert Settings().grading_queue == waiting_line_bound()
    assert Settings(grading_queue=12).grading_queue == 12
    assert _line_bound({"grading_queue": None}) == waiting_line_bound()  # type: ignore[typeddict-item]
    assert _line_bound({"grading_queue": 0}) == 0  # type: ignore[typeddict-item]


def test_the_line_measures_its_pace_only_once_a_run_has_finished() -> None:
    steps = _Steps()
    queue = GradingQueue(steps, concurrency=1, capacity=4)
    assert queue.finish_rate is None
    first = queue.submit("first", None, owner="a", client="x")
    steps.allow()
    first.result(scaled(30))
    wait_for(lambda: queue.finish_rate is not None, "the line's pace measured after one run")
    assert queue.finish_rate is not None and queue.finish_rate > 0
    assert queue.close(timeout_s=scaled(10)) is True


@pytest.mark.timeout(120)
def test_a_waiting_learner_is_told_their_place_and_an_estimate_that_move_with_the_line(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app()
    steps = _Steps()
    queue = GradingQueue(steps, concurrency=1, capacity=16)
    services = app.state.qkv
    original, services.queue = services.queue, queue
    try:
        learners = [Browser(app).open_lesson() for _ in range(4)]
        answers: list[Any] = []
        threads = [_send(learners[0], answers)]
        assert steps.started.acquire(timeout=scaled(30))
        steps.allow()  # one run finishes: the line has a measured pace from now on
        threads[0].join(scaled(30))
        threads.append(_send(learners[1], answers))  # holds the grader
        assert steps.started.acquire(timeout=scaled(30))
        for learner in learners[2:]:
            threads.append(_send(learner, answers))
            wait_for(lambda: queue.admitted == len(threads) - 1, "the program in line")
        last = learners[3].client.get(f"{API}/code/queue").json()
        assert (last["position"], last["place"], last["state"]) == (1, 2, "waiting")
        assert isinstance(last["estimate_s"], float) and last["estimate_s"] > 0
        rate = queue.finish_rate
        assert rate is not None and last["estimate_s"] == math.ceil(round(20 / rate, 6)) / 10  # place ÷ pace
        steps.allow()  # the program holding the grader finishes: the last learner moves up one place
        wait_for(lambda: learners[3].client.get(f"{API}/code/queue").json()["place"] == 1, "its move")
        moved = learners[3].client.get(f"{API}/code/queue").json()
        assert moved["position"] == 0 and isinstance(moved["estimate_s"], float)
        steps.allow(2)
        for thread in threads:
            thread.join(scaled(30))
        assert [answer.status_code for answer in answers] == [200] * 4
        nothing = learners[3].client.get(f"{API}/code/queue").json()
        assert nothing == {"position": None, "place": None, "estimate_s": None, "state": None}
    finally:
        steps.allow(16)
        queue.close(timeout_s=scaled(10))
        services.queue = original


def test_the_api_reference_documents_place_and_estimate(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    page = Browser(app).client.get("/docs").text
    section = page[page.index(f"<code>GET {API.replace('L4.1', '{lesson_id}')}/code/queue</code>") :]
    section = section[: section.index("</section>")]
    assert "place" in section and "estimate_s" in section and "measured" in section


def _send(learner: Browser, answers: list[Any]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(learner.submit_code("def f(): pass")))
    thread.start()
    return thread


LECTURE_HALL = 300  # learners pressing Run at once: more than the old fixed bound of 256


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_lecture_hall_from_addresses_of_their_own_is_all_taken_with_the_default_bound(
    tmp_path: Path,
) -> None:
    raise_open_files_limit()  # as qkv serve does: each waiting program holds a connection
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'hall.db'}", secret_key=SECRET, warm_spares=0)
    assert settings.grading_queue == waiting_line_bound() >= LECTURE_HALL  # the default, from this machine
    app = create_app(settings)
    held = threading.Event()

    def hold(source: str, suite: Any, seed: int | None = None) -> GradeResult:
        assert held.wait(scaled(300)), "the test never let the gradings finish"
        return _result()

    with serve(app, "lecture-hall-uvicorn") as url:
        services = app.state.qkv
        queue = GradingQueue(
            hold,
            concurrency=settings.grading_concurrency,
            reserved=settings.grading_reserved,
            capacity=settings.grading_queue,
            per_client=settings.grading_per_client,
        )
        original, services.queue = services.queue, queue
        try:
            statuses = asyncio.run(_lecture_hall(url, queue, held))
        finally:
            held.set()
            queue.close(timeout_s=scaled(30))
            services.queue = original
    assert statuses == [200] * LECTURE_HALL


async def _lecture_hall(url: str, queue: GradingQueue, held: threading.Event) -> list[int]:
    """Every learner opens a page from an address of their own, then all press Run; once every program is
    running or in line (none refused meanwhile), the gradings are let through. Their answers' statuses."""
    clients = [httpx.AsyncClient(base_url=url, timeout=scaled(300)) for _ in range(LECTURE_HALL)]
    try:
        addresses = [f"10.52.{number // 250}.{number % 250 + 1}" for number in range(LECTURE_HALL)]
        tokens = [await _token(client, address) for client, address in zip(clients, addresses, strict=True)]
        sends = [
            asyncio.create_task(
                client.post(
                    f"{API}/code",
                    json={"exercise_id": "functions", "code": "def f(): pass"},
                    headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
                )
            )
            for client, token, address in zip(clients, tokens, addresses, strict=True)
        ]
        while queue.admitted < LECTURE_HALL and not any(task.done() for task in sends):
            await asyncio.sleep(0.05)  # until every program is in (or one was answered: refused)
        held.set()
        answers = await asyncio.gather(*sends)
        return [answer.status_code for answer in answers]
    finally:
        for client in clients:
            await client.aclose()


async def _token(client: httpx.AsyncClient, address: str) -> str:
    page = await client.get("/", headers={"X-Forwarded-For": address, "accept": "text/html"})
    found = CSRF.search(page.text)
    assert page.status_code == 200 and found is not None, page.text[:300]
    return found.group(1)
