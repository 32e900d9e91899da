"""A qkv cluster of a benchmark's own: web servers with ``--grading remote`` and ``qkv grader`` processes,
all on one PostgreSQL database, in a fresh schema that is dropped afterwards.

``class_burst.py --remote`` imports it as a sibling module. The database is ``qkv_bench`` on the test
cluster (made once, by the role ``qkv``, which may create databases), so a benchmark never touches the
tests' ``qkv_test``; ``--database-url`` names another.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from serving import start_server
from sqlalchemy import create_engine, make_url, text

__all__ = ["BENCH_URL", "Cluster", "cluster", "commits"]

REPO = Path(__file__).resolve().parents[1]
BENCH_URL = os.environ.get("QKV_BENCH_POSTGRES_URL", "postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_bench")


@dataclass
class Cluster:
    """The running cluster: its servers' URLs and the database URL (its own schema)."""

    database_url: str
    servers: list[str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)


def ensure_database(url: str) -> None:
    """Make the database ``url`` names if it does not exist (connecting to the server's ``postgres`` one)."""
    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            found = conn.execute(
                text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": parsed.database}
            ).first()
            if found is None:
                conn.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    finally:
        admin.dispose()


@contextlib.contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """A URL whose connections live in a new, empty schema of ``url``'s database; dropped afterwards."""
    ensure_database(url)
    schema = f"qkv_burst_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def commits(url: str) -> int:
    """Transactions committed in ``url``'s database so far (PostgreSQL's statistics, flushed within ~1 s)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_stat_clear_snapshot()"))
            row = conn.execute(
                text("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
            ).one()
            return int(row[0])
    finally:
        engine.dispose()


@contextlib.contextmanager
def cluster(
    database_url: str,
    *,
    servers: int = 2,
    graders: int = 1,
    grader_concurrency: int = 2,
    serve_options: Sequence[str] = (),
    log: Path | None = None,
) -> Iterator[Cluster]:
    """``servers`` ``qkv serve --grading remote`` and ``graders`` ``qkv grader`` on a fresh schema; stopped
    (SIGTERM) and the schema dropped on leaving."""
    with fresh_schema(database_url) as url:
        running = Cluster(url, [])
        try:
            for _ in range(servers):
                process, address = start_server(url, ["--grading", "remote", *serve_options], log=log)
                running.processes.append(process)
                running.servers.append(address)
            output = subprocess.DEVNULL if log is None else log.open("ab")
            command = [sys.executable, "-m", "qkv", "grader", "--database-url", url]
            for _ in range(graders):
                running.processes.append(
                    subprocess.Popen(
                        [*command, "--concurrency", str(grader_concurrency)],
                        cwd=REPO,
                        stdout=output,
                        stderr=output,
                    )
                )
            _wait_for_graders(running.servers[0], graders)
            yield running
        finally:
            for process in running.processes:
                process.send_signal(signal.SIGTERM)
            for process in running.processes:
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def _wait_for_graders(server: str, graders: int, within_s: float = 120.0) -> None:
    """Until ``graders`` graders have sent a heartbeat (``/healthz/grading``'s ``graders_alive``)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, ValueError):
            if httpx.get(server + "/healthz/grading", timeout=5).json().get("graders_alive", 0) >= graders:
                return
        time.sleep(0.5)
    raise RuntimeError(f"{graders} qkv grader processes did not all send a heartbeat within {within_s:g} s")
