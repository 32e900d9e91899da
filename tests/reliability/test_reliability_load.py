"""The load script, reduced to a handful of learners, against real ``qkv serve`` processes.

One server on a SQLite file, then two servers sharing one PostgreSQL database with the learners'
requests spread over both: every learner finishes the lesson through the real sandboxed grader,
nothing but 503s goes wrong, and every acknowledged write is read back.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from qkv.lessons import load_catalog
from tests.reliability.reliability_support import require_bubblewrap
from tests.time_scale import scaled

LEARNERS = 6


def run_class(load_script: ModuleType, urls: list[str], max_seconds: float = 150) -> Any:
    max_seconds = scaled(max_seconds)
    config = load_script.LoadConfig(
        base_urls=urls,
        learners=LEARNERS,
        max_seconds=max_seconds,
        request_timeout=scaled(60),
        think_seconds=0.05,
        ramp_seconds=1.0,
    )
    return asyncio.run(load_script.run_load(config))


def assert_nothing_lost(report: Any) -> None:
    details = report.format()
    assert report.errors == [], details
    assert report.lost_writes == [], details
    assert report.finished_learners == LEARNERS, details
    assert report.wrong_feedback == [], details
    assert report.gradings == 3 * LEARNERS, details
    # The correct program passes in the sandbox; the loop and the memory hog never do.
    assert report.grading_statuses["correct"] == {"pass": LEARNERS}, details
    for hostile in ("loop", "memory hog"):
        assert "pass" not in report.grading_statuses[hostile], details
        assert sum(report.grading_statuses[hostile].values()) == LEARNERS, details
    # Page, Part 1, widgets, code and the choices.
    assert len(report.latencies["GET page"]) == LEARNERS
    # Two answers for each of q, k and v, one for every letter and choice exercise of the lesson.
    kinds = [exercise.kind for exercise in load_catalog().lesson("L4.1").exercises.values()]
    answers = 2 * 3 + kinds.count("letter") + kinds.count("choice")
    assert len(report.latencies["POST answers"]) == answers * LEARNERS
    assert report.acknowledged_writes == (answers + 3) * LEARNERS  # and three programs


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(240)
def test_a_small_class_on_sqlite_loses_nothing(
    start_server: Any, sqlite_url: str, load_script: ModuleType
) -> None:
    require_bubblewrap()
    # No wait list: with six endless loops arriving at once, the grader must turn some away with 503,
    # which the learners retry after Retry-After (the load script counts a 503 without one as an error).
    server = start_server(sqlite_url, "--grading-queue", "0").start()
    report = run_class(load_script, [server.url])
    assert_nothing_lost(report)
    assert report.rejected_503 > 0, report.format()


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(420)
def test_a_small_class_on_sqlite_loses_nothing_beside_a_cpu_hog(
    start_server: Any, sqlite_url: str, load_script: ModuleType
) -> None:
    """The same class while one busy-looping process per core competes for the CPU (a loaded CI machine):
    slower, but every request is answered and nothing is lost; a kept-alive connection that the server
    closes just as it is reused is sent again, as a browser would."""
    require_bubblewrap()
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True:\n    pass"]) for _ in range(os.cpu_count() or 2)
    ]
    try:
        server = start_server(sqlite_url, "--grading-queue", "0").start(ready_within=120)
        report = run_class(load_script, [server.url], max_seconds=300)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert_nothing_lost(report)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.postgres
@pytest.mark.timeout(240)
def test_two_servers_on_one_postgresql_lose_nothing(
    start_server: Any, postgres_url: str, load_script: ModuleType
) -> None:
    require_bubblewrap()
    first = start_server(postgres_url).start()
    second = start_server(postgres_url).start()
    report = run_class(load_script, [first.url, second.url])
    assert_nothing_lost(report)
    # Round-robin really used both servers: the learner's cookie from one was honoured by the other.
    spread = report.requests_per_target
    assert set(spread) == {first.url, second.url}
    assert abs(spread[first.url] - spread[second.url]) <= 0.2 * sum(spread.values()), spread
