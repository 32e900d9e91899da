"""How many bytes one client can make the server store in an hour, at full speed (issue 23, item 3).

The script starts its own ``qkv serve`` with the server's defaults (a temporary SQLite file unless
``--database-url`` names another database) and plays one hostile client from one address (loopback): as
fast as answers come, ``--workers`` loops each mint learner identities (a new one every
``--programs-per-identity`` programs, or one minted before while the address may mint no more), put
64 KiB drafts that alternate with tiny ones (so that every other draft grows by 64 KiB), send 64 KiB
programs, each different, that print 64 KiB on stdout and on stderr, to every code exercise, and
1000-character answers. Grading is the real sandboxed grader.

Every ``--sample`` seconds it measures what the database holds: the bytes of every stored text (the
payload) and the database's used size (SQLite: pages in use; PostgreSQL: the tables' total size). At the
end it prints the bytes stored, the rate per hour over the run, and the hour projected from the run: the
most stored at any sample plus the rate of the run's last third for the rest of the hour (the budget makes the
rate fall once it is spent, so a straight line from a short run would overstate the hour). The target:
at most 200 MB an hour from one client with the defaults; ``--strict`` exits 1 when it is missed.

Usage::

    .venv/bin/python benchmarks/storage_rate.py                 # 10 minutes
    .venv/bin/python benchmarks/storage_rate.py --minutes 2     # a short run, projected to the hour
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import Engine, create_engine, text

ROOT = Path(__file__).resolve().parents[1]
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
LESSONS = ("L4.1", "L4.2", "L4.3", "L4.4", "L4.5", "L4.6")
CODE_EXERCISE = "functions"
MAX_CODE = 64 * 1024
TARGET_BYTES_PER_HOUR = 200_000_000
# Every text column of the store (table, column): the payload the client's writes put there.
TEXT_COLUMNS = (
    ("answers", "answer"),
    ("answers", "message"),
    ("code_submissions", "source"),
    ("code_submissions", "result_json"),
    ("code_sources", "source"),
    ("code_drafts", "source"),
)


def program(nonce: str) -> str:
    """A 64 KiB program, different for each ``nonce``, that prints 64 KiB on stdout and on stderr.

    >>> len(program("x").encode()) == MAX_CODE
    True
    """
    head = (
        "import sys\n"
        "sys.stdout.write('o' * 65536)\n"
        "sys.stderr.write('e' * 65536)\n"
        "def project_qkv(X, Wq, Wk, Wv):\n"
        "    return None\n"
        f"# {nonce}\n"
    )
    # Random padding: text that no database can compress (PostgreSQL compresses long values).
    return head + "# " + secrets.token_urlsafe(MAX_CODE)[: MAX_CODE - len(head) - 3] + "\n"


@dataclass
class Sample:
    """What the database held at one moment of the run."""

    seconds: float
    payload_bytes: int
    used_bytes: int


@dataclass
class Figures:
    """Counts of the client's requests, and the samples."""

    samples: list[Sample] = field(default_factory=list)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    identities: int = 0

    def count(self, what: str, status: int) -> None:
        counts = self.statuses.setdefault(what, {})
        counts[status] = counts.get(status, 0) + 1


class Database:
    """Read-only measures of the server's database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = create_engine(url)

    def payload_bytes(self) -> int:
        length = (
            "octet_length({})" if self.engine.dialect.name == "postgresql" else "length(CAST({} AS BLOB))"
        )
        total = 0
        with self.engine.connect() as conn:
            for table, column in TEXT_COLUMNS:
                total += int(
                    conn.execute(
                        text(f"SELECT COALESCE(SUM({length.format(column)}), 0) FROM {table}")
                    ).scalar()
                    or 0
                )
        return total

    def used_bytes(self) -> int:
        with self.engine.connect() as conn:
            if self.engine.dialect.name == "postgresql":
                found = conn.execute(
                    text(
                        "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
                    )
                ).scalar()
                return int(found or 0)
            pages = int(conn.execute(text("PRAGMA page_count")).scalar() or 0)
            free = int(conn.execute(text("PRAGMA freelist_count")).scalar() or 0)
            size = int(conn.execute(text("PRAGMA page_size")).scalar() or 0)
            return (pages - free) * size

    def sample(self, started: float) -> Sample:
        return Sample(time.monotonic() - started, self.payload_bytes(), self.used_bytes())

    def client_storage(self) -> int:
        with self.engine.connect() as conn:
            found = conn.execute(text("SELECT COALESCE(MAX(stored_bytes), 0) FROM client_storage")).scalar()
        return int(found or 0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    database_url: str, workdir: Path, extra: Sequence[str]
) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    log = open(workdir / "serve.log", "wb")  # noqa: SIM115 (kept open for the server's life)
    server = subprocess.Popen(
        [sys.executable, "-m", "qkv", "serve", "--port", str(port), "--database-url", database_url, *extra],
        cwd=ROOT,
        env=dict(os.environ, XDG_DATA_HOME=str(workdir / "data"), PYTHONUNBUFFERED="1"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"qkv serve exited with {server.returncode}; see {workdir / 'serve.log'}.")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.kill()
    raise SystemExit(f"qkv serve did not answer within 90 s; see {workdir / 'serve.log'}.")


async def worker(
    number: int,
    url: str,
    stop_at: float,
    per_identity: int,
    figures: Figures,
    minted: list[tuple[dict[str, str], str]],
) -> None:
    """One loop of the client: a new identity (or, when the address may mint no more for now, one minted
    before), then drafts, programs and answers as fast as they are answered."""
    sent = 0
    while time.monotonic() < stop_at:
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            page = await client.get("/lessons/L4.1")
            figures.count("identity", page.status_code)
            found = CSRF.search(page.text)
            if page.status_code == 200 and found:
                token = found.group(1)
                minted.append((dict(client.cookies), token))
                figures.identities += 1
            elif minted:
                cookies, token = minted[(number * 7919 + sent) % len(minted)]
                client.cookies.update(cookies)
            else:
                await asyncio.sleep(1)
                continue
            headers = {"X-CSRF-Token": token}
            for _ in range(per_identity):
                if time.monotonic() >= stop_at:
                    return
                lesson = LESSONS[sent % len(LESSONS)]
                api = f"/api/lessons/{lesson}"
                sent += 1
                nonce = f"w{number} n{sent} {time.monotonic_ns()}"
                for draft in (program("draft " + nonce), "# small\n"):  # every other draft grows by 64 KiB
                    response = await client.put(
                        f"{api}/draft", json={"exercise_id": CODE_EXERCISE, "code": draft}, headers=headers
                    )
                    figures.count("draft", response.status_code)
                response = await client.post(
                    f"{api}/code",
                    json={"exercise_id": CODE_EXERCISE, "code": program(nonce)},
                    headers=headers,
                )
                figures.count("program", response.status_code)
                if response.status_code == 200:
                    kept = str(response.json().get("kept"))
                    figures.kept[kept] = figures.kept.get(kept, 0) + 1
                elif response.status_code in (429, 503):
                    await asyncio.sleep(float(response.headers.get("retry-after", "1")))
                response = await client.post(
                    "/api/lessons/L4.1/answers",
                    json={"exercise_id": "q", "answer": f"{nonce} ".ljust(1000, "9")},
                    headers=headers,
                )
                figures.count("answer", response.status_code)


async def sampler(database: Database, started: float, stop_at: float, every: float, figures: Figures) -> None:
    while True:
        sample = await asyncio.to_thread(database.sample, started)
        figures.samples.append(sample)
        print(
            f"  {sample.seconds:6.0f} s  payload {sample.payload_bytes / 1e6:8.1f} MB  "
            f"database {sample.used_bytes / 1e6:8.1f} MB",
            flush=True,
        )
        if time.monotonic() >= stop_at:
            return
        await asyncio.sleep(min(every, max(0.0, stop_at - time.monotonic())))


async def run(
    url: str, database: Database, minutes: float, workers: int, per_identity: int, every: float
) -> Figures:
    figures = Figures()
    started = time.monotonic()
    stop_at = started + minutes * 60
    minted: list[tuple[dict[str, str], str]] = []
    tasks = [
        asyncio.create_task(worker(n, url, stop_at, per_identity, figures, minted)) for n in range(workers)
    ]
    await sampler(database, started, stop_at, every, figures)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    figures.samples.append(await asyncio.to_thread(database.sample, started))
    return figures


def per_hour(samples: list[Sample], attribute: str) -> tuple[float, float]:
    """(linear rate per hour over the run, projected hour: the most stored so far + the last third's rate)."""
    first, last = samples[0], samples[-1]
    grown = getattr(last, attribute) - getattr(first, attribute)
    elapsed = max(last.seconds - first.seconds, 1e-9)
    tail_start = next(s for s in samples if s.seconds >= first.seconds + 2 * elapsed / 3)
    tail_rate = (getattr(last, attribute) - getattr(tail_start, attribute)) / max(
        last.seconds - tail_start.seconds, 1e-9
    )
    # The most the database held above its start (a client can shrink what it stored, e.g. its drafts).
    peak = max(getattr(sample, attribute) for sample in samples) - getattr(first, attribute)
    projected = max(grown, peak) + max(0.0, tail_rate) * max(0.0, 3600 - elapsed)
    return grown / elapsed * 3600, projected


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the run (default 10)")
    parser.add_argument("--workers", type=int, default=8, help="the client's concurrent loops (default 8)")
    parser.add_argument("--programs-per-identity", type=int, default=6, help="programs before a new identity")
    parser.add_argument("--sample", type=float, default=15.0, help="seconds between measures (default 15)")
    parser.add_argument("--database-url", help="the server's database (default: a temporary SQLite file)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the projected hour is over 200 MB")
    parser.add_argument("serve_options", nargs="*", help="after --: options for qkv serve (defaults if none)")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.workers < 1:
        parser.error("--minutes must be positive and --workers at least 1.")
    with tempfile.TemporaryDirectory(prefix="qkv-storage-rate-") as tmp:
        workdir = Path(tmp)
        url_db = args.database_url or f"sqlite:///{workdir / 'rate.sqlite3'}"
        server, url = start_server(url_db, workdir, args.serve_options)
        database = Database(url_db)
        try:
            cpu = next(
                (
                    line.split(":", 1)[1].strip()
                    for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")
                ),
                "unknown CPU",
            )
            print(
                f"one client at full speed for {args.minutes:g} min against {url} "
                f"({cpu}, {os.cpu_count()} cores)"
            )
            figures = asyncio.run(
                run(url, database, args.minutes, args.workers, args.programs_per_identity, args.sample)
            )
            counted = database.client_storage()
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
            database.engine.dispose()
    for what, counts in sorted(figures.statuses.items()):
        print(f"{what}: " + ", ".join(f"HTTP {status} × {n}" for status, n in sorted(counts.items())))
    print(f"identities minted: {figures.identities}; programs kept: {figures.kept}")
    print(f"the client's budget count at the end: {counted / 1e6:.1f} MB")
    payload_rate, payload_hour = per_hour(figures.samples, "payload_bytes")
    used_rate, used_hour = per_hour(figures.samples, "used_bytes")
    print(
        f"stored text (payload): {payload_rate / 1e6:.1f} MB/h over the run; "
        f"projected hour {payload_hour / 1e6:.1f} MB"
    )
    print(
        f"database size in use:  {used_rate / 1e6:.1f} MB/h over the run; "
        f"projected hour {used_hour / 1e6:.1f} MB"
    )
    verdict = "met" if max(payload_hour, used_hour) <= TARGET_BYTES_PER_HOUR else "MISSED"
    print(f"target: at most {TARGET_BYTES_PER_HOUR / 1e6:.0f} MB in an hour from one client: {verdict}")
    return 1 if args.strict and verdict != "met" else 0


if __name__ == "__main__":
    sys.exit(main())
