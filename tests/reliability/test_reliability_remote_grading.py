"""Graders on other machines, for real: two web servers and graders on one PostgreSQL, a class pressing Run.

Every process is the real command (``qkv serve --grading remote``, ``qkv grader``) with the real sandbox,
on loopback. 100 learners, each from an address of its own, send a program (half right, half wrong)
through either server and read the verdict through the *other* one. Meanwhile grader A is killed
(SIGKILL) in the middle of a grading, and grader Z is frozen (SIGSTOP) in the middle of one and never
comes back until the end. Each learner must get exactly one verdict, the right one, and be counted once.

CPU: the programs are the sample lesson T1.1's (each grading is a sandbox start plus five tiny tests,
about 0.2 s of CPU), the graders grade one or two at a time, the learners arrive within two seconds, and
the heartbeat is 1 s with a grader counted silent after 8 s (not less: on a loaded machine a live grader's
heartbeat can lag a few seconds), so the jobs of A and Z are graded again within seconds. On a quiet
2-core machine the whole test takes about a minute.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from tests.reliability.reliability_support import REPO, Server, require_bubblewrap, wait_until
from tests.time_scale import scaled

pytestmark = [pytest.mark.sandbox, pytest.mark.postgres, pytest.mark.slow]

LEARNERS = 100
CONTENT = REPO / "tests" / "sample_lessons"
CORPUS = CONTENT / "corpora" / "T1.1" / "shapes"
RIGHT = (CORPUS / "correct" / "reference.py").read_text()
WRONG = (CORPUS / "wrong" / "perimeter_for_area.py").read_text()
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


class Grader:
    """One ``qkv grader`` child process, its output in a log file."""

    def __init__(self, database_url: str, workdir: Path, label: str, concurrency: int) -> None:
        self.label = label
        self.log_path = workdir / f"grader-{label}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "qkv",
                    "grader",
                    "--database-url",
                    database_url,
                    "--content",
                    str(CONTENT),
                    "--concurrency",
                    str(concurrency),
                    "--heartbeat",
                    "1",
                    "--stalled-after",
                    "8",
                ],
                cwd=REPO,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def wait_ready(self) -> None:
        wait_until(
            lambda: "Starting worker" in self.log() or self.process.poll() is not None,
            60,
            f"grader {self.label} to start",
        )
        assert self.process.poll() is None, self.log()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=scaled(30))
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=scaled(30))


@pytest.fixture
def graders(tmp_path: Path) -> Iterator[list[Grader]]:
    started: list[Grader] = []
    yield started
    for grader in started:
        grader.stop()


def running_job_of(engine: Engine, grader: Grader) -> str | None:
    """The job the grader is grading now, as the jobs' rows say (their ``worker`` is ``host:pid``)."""
    with engine.connect() as conn:
        return conn.execute(
            text("SELECT id FROM grading_jobs WHERE state = 'running' AND worker LIKE :me LIMIT 1"),
            {"me": f"%:{grader.pid}"},
        ).scalar()


def freeze_in_a_grading(engine: Engine, grader: Grader, within_s: float = 120) -> str:
    """SIGSTOP the grader at a moment it holds a running job; that job's id."""
    within_s = scaled(within_s)
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if running_job_of(engine, grader) is not None:
            os.kill(grader.pid, signal.SIGSTOP)
            job = running_job_of(engine, grader)  # frozen: the row cannot change under us now
            if job is not None:
                return job
            os.kill(grader.pid, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError(f"Grader {grader.label} never held a job within {within_s} s:\n{grader.log()}")


async def get(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """GET, sent once more when the connection failed (as a browser does; a GET changes nothing)."""
    try:
        return await client.get(url)
    except httpx.TransportError:
        return await client.get(url)


class Learner:
    """One learner's browser: its own cookie, the lesson opened on ``home``, the verdict read on ``other``."""

    def __init__(self, index: int, home: Server, other: Server) -> None:
        self.index, self.home, self.other = index, home, other
        self.right = index % 2 == 0  # half send the right program, half a wrong one
        # A new connection per request: a kept-alive one may be closed by the server, idle for 5 s while
        # this loaded machine runs the class, just as the next request is sent on it. Each client is made
        # before the burst: making one costs CPU (an SSL context) that would delay the burst's requests.
        self.client = httpx.AsyncClient(
            base_url=home.url,
            headers={"X-Forwarded-For": f"198.51.100.{index + 1}"},
            timeout=scaled(120),
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self.token = ""

    async def open_lesson(self) -> None:
        page = await get(self.client, "/lessons/T1.1")
        token = CSRF_META.search(page.text)
        assert page.status_code == 200 and token is not None
        self.token = token.group(1)

    async def press_run(self) -> dict[str, object]:
        """Send the program on ``home`` and follow the verdict on ``other``, as the page does."""
        await asyncio.sleep(self.index * 0.01)  # the class presses Run within a second
        reply = await self.client.post(
            "/api/lessons/T1.1/code",
            json={"exercise_id": "shapes", "code": RIGHT if self.right else WRONG},
            headers={"X-CSRF-Token": self.token},
        )
        answers = [reply.status_code]
        while reply.status_code == 202:  # the page asks again; here always the other server
            reply = await get(self.client, self.other.url + reply.json()["poll"])
            answers.append(reply.status_code)
        body = reply.json()
        again = await get(self.client, f"{self.other.url}/api/lessons/T1.1/code/jobs/{body.get('job')}")
        await self.client.aclose()
        return {"answers": answers, "body": body, "again": again.json(), "right": self.right}


async def class_presses_run(learners: list[Learner]) -> list[dict[str, object]]:
    for start in range(0, len(learners), 10):  # the lesson is opened before the burst, ten at a time
        await asyncio.gather(*(learner.open_lesson() for learner in learners[start : start + 10]))
    return await asyncio.gather(*(learner.press_run() for learner in learners))


@pytest.mark.timeout(900)  # bounded inside: 120 s to catch each grader in a grading, 480 s for the class
def test_a_class_across_two_servers_gets_one_verdict_each_while_graders_die_and_freeze(
    postgres_url: str, start_server: type[Server], graders: list[Grader], tmp_path: Path
) -> None:
    require_bubblewrap()
    options = ("--grading", "remote", "--content", str(CONTENT), "--grading-wait", "3")
    options += ("--forwarded-allow-ips", "127.0.0.1")
    servers = [start_server(postgres_url, *options).start(), start_server(postgres_url, *options).start()]
    frozen = Grader(postgres_url, tmp_path, "Z", concurrency=1)  # the grader that never returns
    killed = Grader(postgres_url, tmp_path, "A", concurrency=1)
    survivor = Grader(postgres_url, tmp_path, "B", concurrency=2)
    graders.extend([frozen, killed, survivor])
    for grader in graders:
        grader.wait_ready()
    engine = create_engine(postgres_url)
    try:
        burst: list[list[dict[str, object]]] = []

        def run_class() -> None:
            async def in_a_loop() -> list[dict[str, object]]:
                learners = [Learner(n, servers[n % 2], servers[(n + 1) % 2]) for n in range(LEARNERS)]
                return await class_presses_run(learners)

            burst.append(asyncio.run(in_a_loop()))

        learners = threading.Thread(target=run_class)
        learners.start()
        frozen_job = freeze_in_a_grading(engine, frozen)  # Z never comes back (until the end)
        killed_job = freeze_in_a_grading(engine, killed)
        os.kill(killed.pid, signal.SIGKILL)  # A dies in the middle of a grading
        killed.process.wait(timeout=scaled(30))
        learners.join(timeout=scaled(480))
        assert not learners.is_alive(), f"the class did not get its verdicts within {scaled(480):g} s"
        results = burst[0]

        # Every learner got exactly one verdict, the right one, from the other server too.
        for result in results:
            body, again = result["body"], result["again"]
            assert isinstance(body, dict) and isinstance(again, dict)
            assert result["answers"][-1] == 200, result  # type: ignore[index]
            assert body["result"]["status"] == ("pass" if result["right"] else "fail"), body
            assert again["result"] == body["result"] and again["job"] == body["job"]
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT id, state, attempts, worker FROM grading_jobs ORDER BY created_at")
            ).all()
            per_learner = conn.execute(
                text("SELECT learner_id, count(*) FROM code_submissions GROUP BY learner_id")
            ).all()
            attempts = conn.execute(text("SELECT attempts, submissions FROM exercise_totals")).all()
            left = conn.execute(
                text("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
            )
            left_in_queue = left.scalar()
        assert [row.state for row in rows] == ["done"] * LEARNERS  # nothing lost
        assert len(per_learner) == LEARNERS and {count for _, count in per_learner} == {1}  # no duplicates
        assert len(attempts) == LEARNERS and set(attempts) == {(1, 1)}
        assert left_in_queue == 0
        by_id = {row.id: row for row in rows}
        for job, gone in ((frozen_job, frozen), (killed_job, killed)):
            assert by_id[job].attempts >= 2, "the job of a silent grader was not graded again elsewhere"
            assert not by_id[job].worker.endswith(f":{gone.pid}")

        # Z comes back and finishes its grading: its verdict is dropped, nothing is counted twice.
        os.kill(frozen.pid, signal.SIGCONT)
        wait_until(
            lambda: "finished elsewhere first" in frozen.log() or "verdict was not written" in frozen.log(),
            60,
            "the frozen grader to finish its old job",
        )
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM code_submissions")).scalar() == LEARNERS
            assert conn.execute(text("SELECT sum(attempts) FROM exercise_totals")).scalar() == LEARNERS
        health = httpx.get(servers[0].url + "/healthz/grading", timeout=scaled(10)).json()
        assert (health["mode"], health["queued"], health["running"]) == ("remote", 0, 0)
        assert health["graders_alive"] >= 1
    finally:
        engine.dispose()
