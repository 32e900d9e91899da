"""Heavy reports beside an honest learner: does one client's judging slow anyone else's verdicts?

The scenario of issue 39 ("Judging a report is on the event loop"): four learners behind one address send,
as fast as their verdicts come back, a program whose every function returns 64 arrays of 4,096 floats
(``tests/grading/hostile/heavy_report.py``: a well-formed report of about 6 MB per call, which once cost
the server about half a second of CPU to decode and judge). Meanwhile an honest learner from another
address runs a correct L4.1 solution one run after another.

The script starts its own ``qkv serve`` on a temporary SQLite database with the server's defaults (trusting
``X-Forwarded-For`` from loopback, so that the simulated clients have their own addresses), measures the
honest learner's time from Run to verdict alone (``--runs`` runs, after two to warm up), then again beside
the four heavy clients, and prints both medians, their ratio, the heavy clients' verdicts and the server's
CPU. With ``--strict`` it exits 1 when the ratio is over ``--ratio-target`` (2). Timing targets live here,
never in the tests; on a machine shared with other work the figures are noisy (the load is printed).

Usage::

    .venv/bin/python benchmarks/heavy_reports.py [--runs 30] [--heavy 4] [--strict]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import httpx
from serving import start_server

ROOT = Path(__file__).resolve().parents[1]
CORRECT = (ROOT / "tests" / "grading" / "correct" / "reference_style.py").read_text()
HEAVY = (ROOT / "tests" / "grading" / "hostile" / "heavy_report.py").read_text()
LESSON = "/lessons/L4.1"
API = "/api/lessons/L4.1"
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
HONEST_ADDRESS, HEAVY_ADDRESS = "10.7.0.1", "10.9.0.1"


class Learner:
    """One browser: its own cookies, the lesson opened once, then Run as often as asked."""

    def __init__(self, url: str, address: str) -> None:
        self.client = httpx.AsyncClient(base_url=url, timeout=120)
        self.address = address
        self.token = ""

    async def open(self) -> Learner:
        page = await self.client.get(LESSON, headers={"X-Forwarded-For": self.address})
        found = CSRF.search(page.text)
        if page.status_code != 200 or not found:
            raise RuntimeError(f"the lesson page answered {page.status_code}")
        self.token = found.group(1)
        return self

    async def run(self, program: str) -> tuple[float, int, str]:
        """Press Run: (seconds to the verdict, HTTP status, the verdict's status)."""
        pressed = time.monotonic()
        response = await self.client.post(
            f"{API}/code",
            json={"exercise_id": "functions", "code": program},
            headers={"X-CSRF-Token": self.token, "X-Forwarded-For": self.address},
        )
        status = response.json()["result"]["status"] if response.status_code == 200 else ""
        return time.monotonic() - pressed, response.status_code, str(status)

    async def close(self) -> None:
        await self.client.aclose()


async def honest_runs(url: str, runs: int) -> list[float]:
    """An honest learner's times from Run to verdict, one run after another (two warm-up runs first)."""
    learner = await Learner(url, HONEST_ADDRESS).open()
    try:
        times = []
        for number in range(runs + 2):
            seconds, code, status = await learner.run(CORRECT)
            if code != 200 or status != "pass":
                raise RuntimeError(f"the honest learner's run answered {code} {status!r}")
            if number >= 2:
                times.append(seconds)
        return times
    finally:
        await learner.close()


async def heavy_client(url: str, program: str, stop: asyncio.Event, verdicts: Counter[str]) -> None:
    """One learner of the heavy address: Run with its program again as soon as each answer comes."""
    learner = await Learner(url, HEAVY_ADDRESS).open()
    try:
        while not stop.is_set():
            _, code, status = await learner.run(program)
            verdicts[f"{code} {status}".strip()] += 1
            if code != 200:
                await asyncio.sleep(0.2)
    finally:
        await learner.close()


async def beside_heavy(url: str, runs: int, heavy: int, program: str) -> tuple[list[float], Counter[str]]:
    stop, verdicts = asyncio.Event(), Counter[str]()
    clients = [asyncio.create_task(heavy_client(url, program, stop, verdicts)) for _ in range(heavy)]
    await asyncio.sleep(1.0)  # the heavy clients are under way
    try:
        return await honest_runs(url, runs), verdicts
    finally:
        stop.set()
        await asyncio.gather(*clients)


def server_cpu(pid: int) -> float:
    """The server process's CPU seconds so far (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_model() -> str:
    """The processor's name, as /proc/cpuinfo gives it ("unknown" elsewhere)."""
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=30, help="honest runs measured in each phase (30)")
    parser.add_argument("--heavy", type=int, default=4, help="heavy-report clients behind one address (4)")
    parser.add_argument("--ratio-target", type=float, default=2.0, help="most the medians' ratio may be (2)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the ratio is over its target")
    parser.add_argument(
        "--busy-correct",
        action="store_true",
        help="for comparison: the four clients send a correct program instead (busy, but light reports)",
    )
    parser.add_argument(
        "--serve",
        action="append",
        default=[],
        metavar="OPTION",
        help="an option for the server, repeatable (--serve=--grading-reserved=0, say, to compare)",
    )
    options = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}; CPU: {cpu_model()}")
    if options.serve:
        print(f"server options: {' '.join(options.serve)}")
    with tempfile.TemporaryDirectory() as folder:
        server, url = start_server(Path(folder) / "bench.sqlite3", options.serve)
        try:
            cpu_start = server_cpu(server.pid)
            quiet = asyncio.run(honest_runs(url, options.runs))
            cpu_quiet = server_cpu(server.pid)
            program = CORRECT if options.busy_correct else HEAVY
            busy, verdicts = asyncio.run(beside_heavy(url, options.runs, options.heavy, program))
            cpu_busy = server_cpu(server.pid)
        finally:
            server.terminate()
            server.wait(30)
    quiet_median, busy_median = statistics.median(quiet), statistics.median(busy)
    ratio = busy_median / quiet_median
    print(f"honest verdict, quiet: median {quiet_median * 1000:.0f} ms, max {max(quiet) * 1000:.0f} ms")
    kind = "correct-program" if options.busy_correct else "heavy-report"
    print(
        f"honest verdict beside {options.heavy} {kind} clients: median {busy_median * 1000:.0f} ms, "
        f"max {max(busy) * 1000:.0f} ms"
    )
    print(f"ratio of the medians: {ratio:.2f} (target ≤ {options.ratio_target:g})")
    print(f"heavy clients' answers: {dict(verdicts)}")
    quiet_cpu, busy_cpu = cpu_quiet - cpu_start, cpu_busy - cpu_quiet
    print(f"server CPU: {quiet_cpu:.1f} s quiet, {busy_cpu:.1f} s beside the heavy clients")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if options.strict and not ratio <= options.ratio_target:
        print(f"missed: the ratio {ratio:.2f} is over {options.ratio_target:g}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
