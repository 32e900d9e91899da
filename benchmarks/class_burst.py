"""A class presses Run at once: does every honest learner get a verdict, and how long do they wait?

The scenario of issue "A class presses Run at once": ``--learners`` learners (default 50), each from an
address of their own, press Run within one second; ``--loops`` of them (default 5) send an endless loop,
the others a correct L4.1 solution. Meanwhile one client, from one address, mints a new identity for
every program it sends (an endless loop each time), as fast as the server answers. The script starts its
own ``qkv serve`` on a temporary SQLite database with the server's defaults, trusting ``X-Forwarded-For``
from loopback only so that each simulated client can have its own address.

It prints, for the honest learners: refusals (any answer but 200), time from pressing Run to the verdict
(p50/p99/max), and whether every one got a verdict; and how many programs the minting client got graded.
It also prints the honest limit: what the honest learners' programs cost on this machine at best,
(honest gradings' CPU + one first slice per looping program) ÷ cores, with the CPU of one honest grading
measured here first (the median of a few, new sandbox each) and the slice the server's default
(``grading_slice_s``); and the ratio of the honest p99 to it (target ≤ 1.3 with the defaults). The
minting client's loops are left out of the limit: the fair line gives that one address no more grader
time than any other client's. Since one grading costs only a few tens of milliseconds, the
server's own work per run (the request, the database, the JSON) is of the same size, so a second limit is
printed that counts whole runs: the machine's CPU per honest run, measured through the server one run at
a time before the burst (meaningful on a quiet machine only); and, where the server probes
(``--probe``, its ``--grading-probe``), a third that counts whole runs and only a probe per loop.

Every learner's page is opened (and a session made) before the burst, and every client shares one TLS
context (building one costs tens of milliseconds of CPU), so the burst is only the presses of Run, all
within 0.2 s, and the figures are the server's rather than this script's.

With ``--one-address`` every client (the learners, the looping ones and the minting client) comes from one
address, as a class behind a school's NAT does, and each learner does what the page does with a 429: waits
its ``Retry-After`` and sends the program again, by itself (for up to ``--give-up`` seconds). It then also
prints how many honest learners had to wait so and how often; every honest learner must still get a
verdict.

With ``--remote`` the class is served by a cluster instead (``remote_cluster.py``): two ``qkv serve
--grading remote`` on one PostgreSQL database (``--database-url``; by default ``qkv_bench`` on the local
test cluster, made if missing, a fresh schema each run, dropped after) and ``qkv grader`` processes of
``--grader-concurrency`` each, a run for each number in ``--graders`` (1 and 2 by default). Each learner
opens the page on one server, presses Run, waits out a 429 or a 503 with ``Retry-After`` as the page does,
and asks for the verdict where the 202 says on the other server, as a load balancer would send it; the
minting client sends to each server in turn. It prints the same figures for the honest learners (the
verdicts, the refusals, the waits, p50/p99), then the cluster's jobs per second with trivial programs
(``--trivial`` learners send ``pass`` within a second: what the queue and the database cost per program,
with next to no grading) and the database's commits per job meanwhile. No honest limit is printed there:
the graders share this machine's cores with the servers and the database.

With ``--strict`` it exits 1 when a target is missed: every honest learner gets a verdict, 0 honest
refusals, honest p99 at most ``--p99-target`` seconds (10 by default), and the ratio to the honest limit at
most ``--ratio-target`` (1.3). Timing targets live here, never in the tests. On a machine shared with other
work the figures are noisy (the load average is printed before and after).

Usage::

    .venv/bin/python benchmarks/class_burst.py [--learners 50] [--loops 5] [--one-address] [--strict]
    .venv/bin/python benchmarks/class_burst.py --remote --learners 1000 --loops 10 [--graders 1 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import ssl
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from serving import start_server

from qkv.grading import Grader
from qkv.lessons import load_catalog
from qkv.web.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CORRECT = (ROOT / "tests" / "grading" / "correct" / "reference_style.py").read_text()
ENDLESS = "def project_qkv(X, Wq, Wk, Wv):\n    while True:\n        pass\n"
LESSON = "/lessons/L4.1"
API = "/api/lessons/L4.1"
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
# Every simulated browser is an httpx client of its own (its own cookies and connections), but they share
# one TLS context: building one loads the system's certificates, about 25 ms of CPU, which the minting
# client would otherwise spend ten times a second on the machine it measures (the server is plain HTTP).
TLS = ssl.create_default_context()


@dataclass
class Figures:
    """What the run measured."""

    honest_seconds: list[float] = field(default_factory=list)  # press Run -> verdict, per honest learner
    honest_refusals: dict[int, int] = field(default_factory=dict)  # HTTP status -> count
    honest_retries: dict[int, int] = field(
        default_factory=dict
    )  # 429s waited out and sent again: status -> n
    honest_waited: int = 0  # honest learners who waited out at least one 429
    honest_without_verdict: int = 0
    minted_sent: int = 0
    minted_graded: int = 0
    minted_refused: int = 0
    minted_why: dict[str, int] = field(default_factory=dict)  # the refusals' first words -> count
    verdict_at: list[float] = field(default_factory=list)  # remote mode: when each verdict came (monotonic)
    busy_at_start: float = 0.0  # the machine's busy CPU seconds when the burst started
    busy_at_last: float = 0.0  # ... and when the last honest verdict came

    def percentile(self, p: float) -> float:
        ordered = sorted(self.honest_seconds)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    def report(self) -> str:
        refused = sum(self.honest_refusals.values())
        lines = [
            f"honest learners with a verdict: {len(self.honest_seconds)} "
            f"(without one: {self.honest_without_verdict})",
            f"honest refusals: {refused} {dict(self.honest_refusals) or ''}".rstrip(),
            f"honest learners who waited out a 429 and sent again (as the page does): {self.honest_waited} "
            f"({sum(self.honest_retries.values())} times)",
            f"honest time to verdict: p50 {self.percentile(50):.2f} s, p99 {self.percentile(99):.2f} s, "
            f"max {max(self.honest_seconds, default=float('nan')):.2f} s",
            f"minting client: {self.minted_sent} programs sent, {self.minted_graded} graded, "
            f"{self.minted_refused} refused {dict(self.minted_why) or ''}".rstrip(),
        ]
        return "\n".join(lines)

    def misses(self, p99_target: float, ratio: float | None = None, ratio_target: float = 1.3) -> list[str]:
        found = []
        if ratio is not None and not ratio <= ratio_target:
            found.append(f"honest p99 is {ratio:.2f} times the honest limit, over {ratio_target:g}")
        if self.honest_without_verdict:
            found.append(f"{self.honest_without_verdict} honest learners got no verdict")
        if self.honest_refusals:
            found.append(f"{sum(self.honest_refusals.values())} honest refusals")
        if not self.percentile(99) <= p99_target:
            found.append(f"honest p99 {self.percentile(99):.2f} s is over {p99_target:g} s")
        return found


async def _open(client: httpx.AsyncClient, address: str) -> str:
    """Open the lesson as a new visitor from ``address``; the CSRF token of the identity it was given."""
    page = await client.get(LESSON, headers={"X-Forwarded-For": address})
    found = CSRF.search(page.text)
    if page.status_code != 200 or not found:
        raise RuntimeError(f"the lesson page answered {page.status_code}")
    return found.group(1)


class Burst:
    """The moment the class presses Run: once every learner has the lesson open, so that opening the
    pages (a rendered lesson each) is not part of what is measured."""

    def __init__(self, learners: int) -> None:
        self._opened = asyncio.Barrier(learners)
        self._start: float | None = None
        self.busy_at_start = 0.0  # the machine's busy CPU seconds then

    async def start(self) -> float:
        """Once every learner has called it (once each): the moment they press Run from."""
        await self._opened.wait()
        if self._start is None:
            self._start = time.monotonic() + 0.2
            self.busy_at_start = machine_busy_seconds()
        return self._start

    @property
    def started_at(self) -> float:
        """The moment of the burst, once it has started."""
        assert self._start is not None, "the burst has not started"
        return self._start


@dataclass(frozen=True)
class Where:
    """Where the simulated clients come from: an address each, or all from one (``--one-address``)."""

    one_address: str | None = None
    give_up_s: float = 300.0
    network: str = "10.1"  # the first two numbers of every learner's own address

    def learner(self, number: int) -> str:
        return self.one_address or f"{self.network}.{number // 250}.{number % 250 + 1}"

    def minter(self) -> str:
        return self.one_address or "10.66.0.1"


async def honest_learner(
    url: str, number: int, program: str, burst: Burst, figures: Figures, where: Where = Where()
) -> None:
    address = where.learner(number)
    async with httpx.AsyncClient(base_url=url, timeout=120, verify=TLS) as client:
        token = await _open(client, address)
        start = await burst.start()
        await asyncio.sleep(max(0.0, start + random.random() - time.monotonic()))  # within one second
        pressed = time.monotonic()
        waited = False
        while True:
            try:
                response = await client.post(
                    f"{API}/code",
                    json={"exercise_id": "functions", "code": program},
                    headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
                )
            except httpx.TimeoutException:  # no answer in 120 s: counted as no verdict (status 0)
                figures.honest_refusals[0] = figures.honest_refusals.get(0, 0) + 1
                figures.honest_without_verdict += 1
                return
            retry = response.headers.get("retry-after", "")
            patient = where.one_address is not None and response.status_code == 429 and retry.isdigit()
            if not patient or time.monotonic() + int(retry) > pressed + where.give_up_s:
                break
            figures.honest_retries[response.status_code] = (
                figures.honest_retries.get(response.status_code, 0) + 1
            )
            waited = True
            await asyncio.sleep(int(retry))  # what the page does: wait its Retry-After, send again
        figures.honest_waited += waited
        if response.status_code != 200:
            figures.honest_refusals[response.status_code] = (
                figures.honest_refusals.get(response.status_code, 0) + 1
            )
            figures.honest_without_verdict += 1
            return
        figures.honest_seconds.append(time.monotonic() - pressed)
        figures.busy_at_last = machine_busy_seconds()


async def minting_client(
    url: str | Sequence[str], stop: asyncio.Event, figures: Figures, where: Where = Where()
) -> None:
    """One address, a fresh identity per program, endless loops, as fast as answers come (to each server
    in turn, given several); a program put in line (202, with remote graders) counts as taken."""
    address = where.minter()
    servers = [url] if isinstance(url, str) else list(url)

    async def one() -> None:
        server = servers[figures.minted_sent % len(servers)]
        async with httpx.AsyncClient(base_url=server, timeout=120, verify=TLS) as client:
            token = await _open(client, address)
            figures.minted_sent += 1
            response = await client.post(
                f"{API}/code",
                json={"exercise_id": "functions", "code": ENDLESS},
                headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
            )
            if response.status_code in (200, 202):
                figures.minted_graded += 1
            else:
                figures.minted_refused += 1
                detail = response.json().get("detail", "") if response.content.startswith(b"{") else ""
                why = f"{response.status_code} {' '.join(str(detail).split()[:6])}"
                figures.minted_why[why] = figures.minted_why.get(why, 0) + 1

    running: set[asyncio.Task[None]] = set()
    while not stop.is_set():
        task = asyncio.create_task(one())
        running.add(task)
        task.add_done_callback(running.discard)
        await asyncio.sleep(0.1)
    for task in running:
        task.cancel()


async def run_class(url: str, learners: int, loops: int, where: Where = Where()) -> Figures:
    figures = Figures()
    stop = asyncio.Event()
    burst = Burst(learners)
    programs = [ENDLESS if number < loops else CORRECT for number in range(learners)]
    minter = asyncio.create_task(minting_client(url, stop, figures, where))
    honest = [
        honest_learner(url, number, program, burst, figures, where)
        for number, program in enumerate(programs)
        if program is CORRECT
    ]
    looping = [honest_learner(url, n, ENDLESS, burst, Figures(), where) for n in range(loops)]
    await asyncio.gather(*honest, *looping)
    figures.busy_at_start = burst.busy_at_start
    stop.set()
    await minter
    return figures


async def remote_learner(
    servers: Sequence[str], number: int, program: str, burst: Burst, figures: Figures, where: Where = Where()
) -> None:
    """A learner of the remote cluster: opens the page on one server, presses Run, waits out a 429 or 503
    as the page does, and asks for the verdict where the 202 says, on the other server (as a load
    balancer would send it)."""
    address = where.learner(number)
    home, other = servers[number % len(servers)], servers[(number + 1) % len(servers)]
    async with httpx.AsyncClient(base_url=home, timeout=120, verify=TLS) as client:
        token = await _open(client, address)
        start = await burst.start()
        await asyncio.sleep(max(0.0, start + random.random() - time.monotonic()))  # within one second
        pressed = time.monotonic()
        try:
            response = await _send_patiently(client, program, token, address, pressed, where, figures)
            while response.status_code == 202:  # the page asks where it says, until the verdict comes
                response = await client.get(
                    other + response.json()["poll"], headers={"X-Forwarded-For": address}
                )
        except httpx.TimeoutException:  # no answer in 120 s: counted as no verdict (status 0)
            figures.honest_refusals[0] = figures.honest_refusals.get(0, 0) + 1
            figures.honest_without_verdict += 1
            return
        if response.status_code != 200:
            figures.honest_refusals[response.status_code] = (
                figures.honest_refusals.get(response.status_code, 0) + 1
            )
            figures.honest_without_verdict += 1
            return
        figures.honest_seconds.append(time.monotonic() - pressed)
        figures.verdict_at.append(time.monotonic())


async def _send_patiently(
    client: httpx.AsyncClient,
    program: str,
    token: str,
    address: str,
    pressed: float,
    where: Where,
    figures: Figures,
) -> httpx.Response:
    """POST the program; a 429 or a 503 with Retry-After is waited out and sent again, as the page does."""
    waited = False
    while True:
        response = await client.post(
            f"{API}/code",
            json={"exercise_id": "functions", "code": program},
            headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
        )
        retry = response.headers.get("retry-after", "")
        patient = response.status_code in (429, 503) and retry.isdigit()
        if not patient or time.monotonic() + int(retry) > pressed + where.give_up_s:
            figures.honest_waited += waited
            return response
        figures.honest_retries[response.status_code] = figures.honest_retries.get(response.status_code, 0) + 1
        waited = True
        await asyncio.sleep(int(retry))


async def run_remote_class(servers: Sequence[str], learners: int, loops: int) -> Figures:
    """The class burst on the remote cluster: every learner, the looping ones and the minting client."""
    figures = Figures()
    stop = asyncio.Event()
    burst = Burst(learners)
    minter = asyncio.create_task(minting_client(servers, stop, figures))
    honest = [remote_learner(servers, n, CORRECT, burst, figures) for n in range(loops, learners)]
    looping = [remote_learner(servers, n, ENDLESS, burst, Figures()) for n in range(loops)]
    await asyncio.gather(*honest, *looping)
    figures.busy_at_start = burst.busy_at_start
    stop.set()
    await minter
    return figures


async def trivial_throughput(servers: Sequence[str], jobs: int) -> tuple[float, float, int]:
    """``jobs`` learners send a trivial program (``pass``) within a second through the cluster; (jobs per
    second from the burst's start to the last verdict, those seconds, verdicts)."""
    figures = Figures()
    burst = Burst(jobs)
    where = Where(network="10.2")  # addresses apart from the class's
    await asyncio.gather(*(remote_learner(servers, n, "pass\n", burst, figures, where) for n in range(jobs)))
    if not figures.verdict_at:
        return 0.0, float("nan"), 0
    elapsed = max(figures.verdict_at) - burst.started_at
    return len(figures.verdict_at) / elapsed, elapsed, len(figures.verdict_at)


def honest_cpu_per_grading(rounds: int) -> float | None:
    """The median CPU seconds of one honest grading here (the grader's and its sandbox's), or None."""
    suite = load_catalog().code_exercise("L4.1/functions").suite
    assert suite is not None
    totals = []
    with Grader() as grader:
        for seed in range(rounds):
            phases = grader.grade(CORRECT, suite, seed=seed).phases
            if phases is not None and phases.total_cpu is not None:
                totals.append(phases.total_cpu)
    return statistics.median(totals) if totals else None


def machine_busy_seconds() -> float:
    """CPU seconds this machine has spent busy since boot, on all cores (``/proc/stat``)."""
    with open("/proc/stat") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def whole_run_cpu(url: str, runs: int) -> float:
    """The machine's CPU seconds per honest run through the server (the request's handling, the grader's
    thread, the sandbox), one run at a time before the burst; this script's own CPU left out. Anything
    else running on the machine counts too, so it is only meaningful on a quiet machine."""

    async def calibrate() -> float:
        async with httpx.AsyncClient(base_url=url, timeout=120, verify=TLS) as client:
            tokens = [await _open_fresh(url, f"10.77.0.{number + 1}") for number in range(runs)]
            busy, ours = machine_busy_seconds(), sum(os.times()[:2])
            for address, cookies, token in tokens:
                client.cookies.clear()
                client.cookies.update(cookies)
                await client.post(
                    f"{API}/code",
                    json={"exercise_id": "functions", "code": CORRECT},
                    headers={"X-CSRF-Token": token, "X-Forwarded-For": address},
                )
            return (machine_busy_seconds() - busy - (sum(os.times()[:2]) - ours)) / runs

    return asyncio.run(calibrate())


async def _open_fresh(url: str, address: str) -> tuple[str, dict[str, str], str]:
    async with httpx.AsyncClient(base_url=url, timeout=120, verify=TLS) as client:
        token = await _open(client, address)
        return address, dict(client.cookies), token


def honest_limit(honest: int, loops: int, cpu_per_grading: float, slice_s: float, cores: int) -> float:
    """(honest gradings' CPU + one slice per looping program) ÷ cores, in seconds.

    >>> honest_limit(45, 5, 0.2, 0.5, 2)
    5.75
    """
    return (honest * cpu_per_grading + loops * slice_s) / cores


def _remote_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--remote",
        action="store_true",
        help="two qkv serve --grading remote on one PostgreSQL with qkv grader processes, not one server",
    )
    parser.add_argument(
        "--graders",
        type=int,
        nargs="+",
        default=[1, 2],
        help="with --remote: how many qkv grader processes, a run for each in turn (1 2)",
    )
    parser.add_argument(
        "--grader-concurrency", type=int, default=2, help="with --remote: each grader's --concurrency (2)"
    )
    parser.add_argument(
        "--trivial",
        type=int,
        default=200,
        help="with --remote: trivial programs sent for jobs per second (200)",
    )
    parser.add_argument(
        "--database-url",
        default=None,
        help="with --remote: the PostgreSQL database (default: qkv_bench on 127.0.0.1, made if missing; "
        "a fresh schema each run)",
    )


def run_remote(args: argparse.Namespace) -> int:
    """The class burst, then the trivial programs, on a cluster of two servers and each number of graders."""
    from remote_cluster import BENCH_URL, cluster, commits

    from qkv.web.runs.line_bound import raise_open_files_limit

    raise_open_files_limit()  # a connection per learner waiting
    url = args.database_url or BENCH_URL
    missed: list[str] = []
    for graders in args.graders:
        load_before = os.getloadavg()[0]
        with cluster(
            url, graders=graders, grader_concurrency=args.grader_concurrency, serve_options=args.serve,
            log=args.server_log,
        ) as running:  # fmt: skip
            started = time.monotonic()
            figures = asyncio.run(run_remote_class(running.servers, args.learners, args.loops))
            elapsed = time.monotonic() - started
            before = commits(running.database_url)
            rate, seconds, verdicts = asyncio.run(trivial_throughput(running.servers, args.trivial))
            time.sleep(1.5)  # PostgreSQL's statistics are flushed within a second
            per_job = (commits(running.database_url) - before) / max(1, verdicts)
        print(
            f"remote class burst: 2 servers, {graders} grader(s) of concurrency {args.grader_concurrency}, "
            f"{args.learners} learners ({args.loops} endless loops, each from an address of its own) + one "
            f"minting client, {os.cpu_count()} CPUs, {elapsed:.1f} s"
        )
        print(figures.report())
        print(
            f"trivial programs: {verdicts} of {args.trivial} verdicts in {seconds:.2f} s, {rate:.1f} jobs/s; "
            f"{per_job:.1f} database commits per job (the cluster's meanwhile, polls and heartbeats too)"
        )
        print(f"load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
        misses = figures.misses(args.p99_target)
        missed += [f"{graders} grader(s): {miss}" for miss in misses]
        print("targets: " + ("all met" if not misses else "missed: " + "; ".join(misses)))
    return 1 if args.strict and missed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--learners", type=int, default=50, help="learners pressing Run at once (default 50)")
    parser.add_argument("--loops", type=int, default=5, help="of them, how many send an endless loop (5)")
    parser.add_argument("--p99-target", type=float, default=10.0, help="honest p99 target in seconds (10)")
    parser.add_argument(
        "--slice",
        type=float,
        default=Settings().grading_slice_s,
        help="the server's --grading-slice (default: its default; 0 grades each program whole, in turn)",
    )
    parser.add_argument(
        "--probe",
        type=float,
        default=Settings().grading_probe_s,
        help="the server's --grading-probe (default: its default; 0: no probe)",
    )
    parser.add_argument("--server-log", type=Path, help="append the server's output to this file")
    parser.add_argument("--ratio-target", type=float, default=1.3, help="honest p99 ÷ honest limit (1.3)")
    parser.add_argument(
        "--one-address",
        action="store_true",
        help="every client from one address (a class behind a NAT); learners wait out a 429 as the page does",
    )
    parser.add_argument(
        "--give-up",
        type=float,
        default=300.0,
        help="with --one-address: seconds a learner keeps trying (300)",
    )
    parser.add_argument(
        "--serve",
        action="append",
        default=[],
        metavar="OPTION",
        help="one more option for the server, repeatable (--serve=--grading-reserved=0, say, to compare)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    _remote_arguments(parser)
    args = parser.parse_args(argv)
    if not 0 <= args.loops < args.learners:
        parser.error(f"--loops must be from 0 to {args.learners - 1}, not {args.loops}.")
    if args.remote:
        return run_remote(args)
    load_before = os.getloadavg()[0]
    cpu_per_grading = honest_cpu_per_grading(5)
    with tempfile.TemporaryDirectory() as folder:
        options = ["--grading-slice", str(args.slice), "--grading-probe", str(args.probe), *args.serve]
        server, url = start_server(Path(folder) / "burst.sqlite3", options, log=args.server_log)
        try:
            cpu_per_run = whole_run_cpu(url, 10)
            started = time.monotonic()
            where = Where("10.9.0.1" if args.one_address else None, args.give_up)
            figures = asyncio.run(run_class(url, args.learners, args.loops, where))
            elapsed = time.monotonic() - started
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    print(f"class burst: {args.learners} learners ({args.loops} endless loops) + one minting client"
          f"{', all from one address' if args.one_address else ', each from an address of its own'}, "
          f"{os.cpu_count()} CPUs, first slice {args.slice:g} s (probe {args.probe:g} s), "
          f"{elapsed:.1f} s")  # fmt: skip
    print(figures.report())
    cores, slice_s = os.cpu_count() or 1, args.slice
    ratio = None
    if cpu_per_grading is None:
        print("honest limit: unknown (no cgroup counts the sandbox's CPU here)")
    else:
        honest = args.learners - args.loops
        limit = honest_limit(honest, args.loops, cpu_per_grading, slice_s, cores)
        ratio = figures.percentile(99) / limit
        print(
            f"honest limit: ({honest} × {cpu_per_grading:.3f} s + {args.loops} × {slice_s:g} s slice) ÷ "
            f"{cores} cores = {limit:.2f} s; honest p99 ÷ limit = {ratio:.2f} "
            f"(target ≤ {args.ratio_target:g})"
        )
        whole = honest_limit(honest, args.loops, cpu_per_run, slice_s, cores)
        print(
            f"counting whole runs ({cpu_per_run:.3f} s of machine CPU per honest run, the server's request "
            f"handling included): limit {whole:.2f} s, honest p99 ÷ it = {figures.percentile(99) / whole:.2f}"
        )
        if 0 < args.probe < slice_s:
            probed = honest_limit(honest, args.loops, cpu_per_run, args.probe, cores)
            print(
                f"counting whole runs and only a probe per loop ({args.probe:g} s): limit {probed:.2f} s, "
                f"honest p99 ÷ it = {figures.percentile(99) / probed:.2f}"
            )
    if figures.busy_at_last > figures.busy_at_start > 0:
        busy = figures.busy_at_last - figures.busy_at_start
        print(
            f"machine CPU from the burst to the last honest verdict: {busy:.2f} s, "
            f"{busy / max(1, len(figures.honest_seconds)) * 1000:.0f} ms per honest verdict "
            f"(everything: the loops, the minting client, this script)"
        )
    print(f"load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    misses = figures.misses(args.p99_target, ratio, args.ratio_target)
    print("targets: " + ("all met" if not misses else "missed: " + "; ".join(misses)))
    median = statistics.median(figures.honest_seconds) if figures.honest_seconds else float("nan")
    print(f"(median honest wait {median:.2f} s)")
    return 1 if args.strict and misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
