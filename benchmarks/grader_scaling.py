"""Verdicts per second from ``qkv grader`` on one machine, with 1, 2 and 4 gradings at once.

For each concurrency the script makes a fresh schema in the PostgreSQL database (``--database-url``,
default the test database), puts ``--jobs`` programs in the remote-grading queue the way ``qkv serve
--grading remote`` does (each from a learner and an address of its own, half of them L4.1's reference
solution and half a wrong program), starts one real ``qkv grader --concurrency N`` (bubblewrap sandbox,
warm spares), and times from the grader's first job to the last verdict written. It prints verdicts per
second and the speed-up over one grading at a time; then the same with 2 and 4 grader *processes* of
concurrency 1 each. With sandboxes forked from the zygote a grading's sandbox costs a few tens of
milliseconds, so one grader process's own Python work (judging, the queue, the database) is of the same
size and, being one interpreter, uses one core at most: several processes use several.

Usage::

    .venv/bin/python benchmarks/grader_scaling.py [--jobs 40] [--concurrency 1 2 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

from qkv.lessons import load_catalog
from qkv.remote_grading import QueueSubmitter
from qkv.store import Store
from qkv.web.runs.backend import RemoteProgram

REPO = Path(__file__).resolve().parents[1]
DEFAULT_URL = os.environ.get("QKV_TEST_POSTGRES_URL", "postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_test")
WRONG = "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n"


def enqueue(url: str, jobs: int) -> None:
    """Put ``jobs`` programs in line, as web servers would."""
    exercise = load_catalog().code_exercise("L4.1/functions")
    right = exercise.exercise.solution or ""
    store = Store(url)
    submitter = QueueSubmitter(url, capacity=jobs + 1, per_client=jobs + 1)

    async def submit_all() -> None:
        await submitter.start(store)
        try:
            for n in range(jobs):
                source = right if n % 2 == 0 else WRONG
                address = f"198.18.{n // 250}.{n % 250 + 1}"
                program = RemoteProgram(
                    str(uuid.uuid4()), "L4.1", "functions", source, address, address, True
                )
                await submitter.submit(program)
        finally:
            await submitter.stop()

    asyncio.run(submit_all())
    store.close()


def verdicts_per_second(
    admin_url: str, jobs: int, concurrency: int, processes: int = 1
) -> tuple[float, float]:
    """Grade ``jobs`` programs with ``processes`` graders of ``concurrency`` each; (verdicts/s, seconds)."""
    schema = f"qkv_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in admin_url else "?"
    url = f"{admin_url}{separator}options=-csearch_path%3D{schema}"
    engine = create_engine(url)
    graders: list[subprocess.Popen[bytes]] = []
    try:
        enqueue(url, jobs)
        command = [
            sys.executable,
            "-m",
            "qkv",
            "grader",
            "--database-url",
            url,
            "--concurrency",
            str(concurrency),
        ]
        for _ in range(processes):
            graders.append(
                subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        started = finished = None
        deadline = time.monotonic() + 60 + 10 * jobs
        while time.monotonic() < deadline:
            with engine.connect() as conn:
                running, done = conn.execute(
                    text(
                        "SELECT count(*) FILTER (WHERE state <> 'queued'), "
                        "count(*) FILTER (WHERE state = 'done') FROM grading_jobs"
                    )
                ).one()
            if started is None and running:
                started = time.monotonic()
            if done == jobs:
                finished = time.monotonic()
                break
            time.sleep(0.05)
        if started is None or finished is None:
            raise SystemExit(f"The grader did not write {jobs} verdicts in time.")
        elapsed = finished - started
        return jobs / elapsed, elapsed
    finally:
        for grader in graders:
            grader.send_signal(signal.SIGTERM)
        for grader in graders:
            grader.wait(timeout=60)
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; {args.jobs} programs per run (L4.1, half right, half wrong)")
    first: float | None = None
    for concurrency in args.concurrency:
        rate, elapsed = verdicts_per_second(args.database_url, args.jobs, concurrency)
        first = first or rate
        print(
            f"one grader, concurrency {concurrency}: {rate:.2f} verdicts/s ({args.jobs} in {elapsed:.1f} s), "
            f"{rate / first:.2f}x one at a time"
        )
    for processes in args.concurrency[1:]:
        rate, elapsed = verdicts_per_second(args.database_url, args.jobs, 1, processes)
        print(
            f"{processes} graders, concurrency 1 each: {rate:.2f} verdicts/s "
            f"({args.jobs} in {elapsed:.1f} s), "
            f"{rate / (first or rate):.2f}x one at a time"
        )


if __name__ == "__main__":
    main()
