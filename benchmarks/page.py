"""How fast the lesson page is served on loopback: prints p50/p95 latency and the page's weight.

Starts the real app on uvicorn (a temporary SQLite database) in this process, fetches the L4.1
page as a returning learner (with a cookie, so the database is read every time) and reports the
figures. The target is p50 <= 50 ms; this script prints, it does not assert.

    .venv/bin/python benchmarks/page.py [--requests 300]
"""

from __future__ import annotations

import argparse
import gzip
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from qkv.web.app import STATIC_DIR, create_app
from qkv.web.settings import Settings

# What the lesson page loads: its stylesheet, its module and every module that one imports.
ASSETS = ["/static/lesson.css", "/static/lesson.js"] + [
    f"/static/{path.relative_to(STATIC_DIR).as_posix()}" for path in sorted(STATIC_DIR.glob("*/*.js"))
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="page fetches to time (default 300)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        settings = Settings(database_url=f"sqlite:///{Path(workdir) / 'bench.sqlite3'}", warm_spares=0)
        app = create_app(settings)
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=base) as client:
                page = client.get("/lessons/L4.1")  # also sets the learner cookie
                token = page.text.split('name="csrf-token" content="')[1].split('"')[0]
                client.post(
                    "/api/lessons/L4.1/answers",
                    json={"exercise_id": "q", "answer": "3, 2"},
                    headers={"X-CSRF-Token": token},
                )
                for _ in range(20):  # warm-up
                    client.get("/lessons/L4.1")
                timings = []
                for _ in range(args.requests):
                    started = time.perf_counter()
                    response = client.get("/lessons/L4.1")
                    timings.append((time.perf_counter() - started) * 1000)
                    response.raise_for_status()
                html = response.content
                assets = {path: client.get(path).content for path in ASSETS}
        finally:
            server.should_exit = True
            thread.join(10)

    print(f"GET /lessons/L4.1 on loopback, {args.requests} requests as a returning learner:")
    print(
        f"  p50 {statistics.median(timings):.1f} ms   p95 {_percentile(timings, 0.95):.1f} ms   "
        f"max {max(timings):.1f} ms   (target p50 <= 50 ms)"
    )
    total_raw = len(html) + sum(len(body) for body in assets.values())
    total_gz = len(gzip.compress(html)) + sum(len(gzip.compress(body)) for body in assets.values())
    print("Page weight (raw / gzipped; the server gzips responses over 1 KiB):")
    print(f"  {'HTML':34} {len(html) / 1024:7.1f} KiB / {len(gzip.compress(html)) / 1024:6.1f} KiB")
    for path, body in assets.items():
        print(f"  {path:34} {len(body) / 1024:7.1f} KiB / {len(gzip.compress(body)) / 1024:6.1f} KiB")
    print(f"  {'total (these files)':34} {total_raw / 1024:7.1f} KiB / {total_gz / 1024:6.1f} KiB")


if __name__ == "__main__":
    main()
