"""Real ``qkv serve`` processes on free loopback ports, for the reliability tests.

Every server here is the real command in a child process (uvicorn, the store, the sandboxed grader),
started on a port nobody else uses, with a database of its own: a temporary SQLite file, or a fresh
PostgreSQL schema that is dropped afterwards so concurrent runs never see each other's rows.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.time_scale import scaled

REPO = Path(__file__).resolve().parents[2]
POSTGRES_URL = os.environ.get("QKV_TEST_POSTGRES_URL", "postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_test")

# Exactly what `make run` starts (through `python -m qkv`, so no console script needs to be installed).
_SERVE = [sys.executable, "-m", "qkv", "serve"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One ``qkv serve`` child process; its output goes to a log file shown when a test fails."""

    def __init__(self, database_url: str, workdir: Path, *extra: str, port: int | None = None) -> None:
        self.database_url = database_url
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra = extra
        self.workdir = workdir
        self.log_path = workdir / f"serve-{self.port}-{uuid.uuid4().hex[:6]}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, ready_within: float = 60.0) -> Server:
        args = [
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--database-url",
            self.database_url,
            *self.extra,
        ]
        env = dict(os.environ, XDG_DATA_HOME=str(self.workdir / "data"), PYTHONUNBUFFERED="1")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [*_SERVE, *args], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        ready_within = scaled(ready_within)
        deadline = time.monotonic() + ready_within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"qkv serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise AssertionError(f"qkv serve did not answer within {ready_within} s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """SIGKILL, as a crash would; wait until it is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=scaled(30))

    def terminate(self, within: float = 60.0) -> int:
        """SIGTERM and wait at most ``within`` seconds for the exit status (SIGKILL after that)."""
        assert self.process is not None
        within = scaled(within)
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"qkv serve did not exit within {within} s of SIGTERM:\n{self.log()}"
            ) from None


def require_bubblewrap() -> None:
    """Grading in these tests goes through the real sandbox."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; install it with: apt-get install bubblewrap")


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (children, grandchildren, ...), read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The command name sits in parentheses and may contain spaces; the parent id follows it.
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    """The ones of ``pids`` that still exist and are not zombies."""
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.add(pid)
    return living


def wait_until(condition: Callable[[], object], within_s: float, what: str) -> None:
    """Return as soon as ``condition()`` is true; fail with a sentence naming ``what`` after ``within_s`` s
    (scaled by ``tests.time_scale``).

    For conditions in other processes, which no event in this one can signal: it checks every 20 ms.
    """
    within_s = scaled(within_s)
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"Waited {within_s} s for {what}, but it did not happen.")
        time.sleep(0.02)


def sandbox_count(pid: int) -> int:
    """How many sandboxes the server ``pid`` runs now: the children of its zygote (each forked sandbox),
    or, where sandboxes start fresh interpreters, its children that each lead a session of their own."""
    below = alive(descendants(pid))
    zygote_like = {child for child in below if b"/grader/zygote.pyc" in _command_line(child)}
    zygotes = {child for child in zygote_like if _parent(child) not in zygote_like}
    holding_zygotes = {_parent(_parent(zygote)) for zygote in zygotes}  # bubblewrap's two processes
    count = sum(_parent(child) in zygotes for child in zygote_like)
    for child in below - holding_zygotes:
        try:
            fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent, session = int(fields[1]), int(fields[3])
        count += parent == pid and session == child
    return count


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return -1


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
