"""What a program waiting for a grader costs the server's memory (behind ``--grading-queue``'s default).

The script starts the real app on uvicorn in a process of its own (a temporary SQLite database), whose one
grader is held by a program that never ends, so every program sent afterwards waits in line with its
request held open, as in a class burst. ``--learners`` learners (default 200), each with a cookie of their
own and an address of their own (``X-Forwarded-For`` from loopback), then send a program of ``--bytes``
bytes each (default: the largest the server takes, 64 KiB; ``--bytes 700`` is a lesson's solution). Once
every one is in line (``/healthz/grading``'s ``admitted``), the server's resident memory is read again:
the difference, divided by the learners, is what one waiting program costs, its source, the line's
bookkeeping and the open request together. It prints that figure, in KiB.

Usage::

    .venv/bin/python benchmarks/waiting_program_memory.py [--learners 200] [--bytes 65536]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
from serving import free_port

LESSON = "/lessons/L4.1"
API = "/api/lessons/L4.1"
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


def serve_held(folder: Path, port: int) -> None:
    """The real app on ``port``, its one grader held for ever: every program sent waits in line."""
    import uvicorn

    from qkv.web.app import create_app
    from qkv.web.runs.local_queue import GradingQueue
    from qkv.web.settings import Settings

    settings = Settings(
        database_url=f"sqlite:///{folder / 'memory.sqlite3'}",
        grading_concurrency=1,
        grading_reserved=0,
        grading_queue=100_000,
        identities_per_address=1_000_000,
        warm_spares=0,
    )
    app = create_app(settings)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", forwarded_allow_ips="*")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    held = threading.Event()
    services = app.state.qkv
    services.queue = GradingQueue(
        lambda source, suite, seed=None: held.wait(), concurrency=1, capacity=100_000
    )
    services.queue.submit("the program that holds the grader", None, owner=None, client="holder")
    print("ready", flush=True)
    thread.join()


def resident_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` (``VmRSS``), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"process {pid} has no VmRSS")


async def measure(url: str, pid: int, learners: int, size: int) -> float:
    """Bytes of the server's memory per waiting program."""
    body = "def project_qkv(X, Wq, Wk, Wv):\n    return X\n"
    program = ("# " + "x" * 78 + "\n") * max(0, (size - len(body)) // 81) + body  # at most ``size`` bytes
    limits = httpx.Limits(max_connections=learners + 10)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as opener:
        sessions = [await _open(opener, number) for number in range(learners)]
        await _admitted(opener, 1)  # the holder alone
        before = resident_bytes(pid)
        clients = [
            httpx.AsyncClient(base_url=url, timeout=600, cookies=cookies) for cookies, _t, _a in sessions
        ]
        sends = [
            asyncio.create_task(
                client.post(
                    f"{API}/code",
                    json={"exercise_id": "functions", "code": program},
                    headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
                )
            )
            for client, (_c, token, address) in zip(clients, sessions, strict=True)
        ]
        await _admitted(opener, learners + 1, sends)
        await asyncio.sleep(1.0)  # let the server's allocations settle
        after = resident_bytes(pid)
        for task in sends:
            task.cancel()
        for client in clients:
            await client.aclose()
    return (after - before) / learners


async def _open(client: httpx.AsyncClient, number: int) -> tuple[dict[str, str], str, str]:
    address = f"10.3.{number // 250}.{number % 250 + 1}"
    client.cookies.clear()
    page = await client.get(LESSON, headers={"X-Forwarded-For": address})
    found = CSRF.search(page.text)
    if page.status_code != 200 or found is None:
        raise RuntimeError(f"the lesson page answered {page.status_code}")
    return dict(client.cookies), found.group(1), address


async def _admitted(
    client: httpx.AsyncClient, count: int, sends: Sequence[asyncio.Task[httpx.Response]] = ()
) -> None:
    """Wait until ``count`` programs are running or in line; a send answered meanwhile was refused."""
    while (await client.get("/healthz/grading")).json().get("admitted", 0) < count:
        for task in sends:
            if task.done():
                answer = task.result()
                raise RuntimeError(
                    f"a program was answered {answer.status_code} instead of waiting: {answer.text}"
                )
        await asyncio.sleep(0.2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--learners", type=int, default=200, help="programs sent to wait (200)")
    parser.add_argument("--bytes", type=int, default=64 * 1024, help="each program's size (64 KiB)")
    parser.add_argument("--held-server", type=Path, help=argparse.SUPPRESS)  # the server process itself
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.held_server is not None:
        serve_held(args.held_server, args.port)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        command = [sys.executable, __file__, "--held-server", folder, "--port", str(port)]
        server = subprocess.Popen(command, stdout=subprocess.PIPE)
        try:
            assert server.stdout is not None
            if server.stdout.readline().strip() != b"ready":
                raise RuntimeError("the held server did not start")
            cost = asyncio.run(measure(f"http://127.0.0.1:{port}", server.pid, args.learners, args.bytes))
        finally:
            server.kill()
            server.wait()
    print(
        f"{args.learners} programs of {args.bytes} bytes waiting in line: "
        f"{cost / 1024:.0f} KiB of the server's resident memory each (source, bookkeeping, open request)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
