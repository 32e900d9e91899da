"""A ``qkv serve`` of a benchmark's own: started on a free loopback port, handed back once it answers.

The benchmarks that measure the whole server (``heavy_reports.py``, ``class_burst.py``) import it as a
sibling module: ``python benchmarks/NAME.py`` puts this folder first on ``sys.path``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

__all__ = ["free_port", "start_server"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    database: Path | str, options: Sequence[str] = (), *, log: Path | None = None, within_s: float = 60.0
) -> tuple[subprocess.Popen[bytes], str]:
    """``qkv serve`` on ``database`` (a SQLite file, or a database URL) with ``options``; the process and
    its URL.

    The server trusts ``X-Forwarded-For`` from loopback, so that a benchmark's simulated clients have
    addresses of their own, and logs only warnings (to ``log``, appended, when one is given).

    Raises
    ------
    RuntimeError
        If the server exits, or does not answer ``/healthz`` within ``within_s`` seconds (it is killed).
    """
    port = free_port()
    url = database if isinstance(database, str) else f"sqlite:///{database}"
    command = [
        sys.executable, "-m", "qkv", "serve", "--port", str(port), "--database-url", url,
        "--forwarded-allow-ips", "127.0.0.1", "--log-level", "warning", *options,
    ]  # fmt: skip
    output = subprocess.DEVNULL if log is None else log.open("ab")
    server = subprocess.Popen(command, stdout=output, stderr=output)
    address = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(address + "/healthz", timeout=1).status_code == 200:
                return server, address
        except httpx.HTTPError:
            time.sleep(0.2)
    exited = server.poll()
    server.kill()
    server.wait()
    if exited is not None:
        raise RuntimeError(f"qkv serve exited with status {exited} before it answered /healthz")
    raise RuntimeError(f"qkv serve did not answer /healthz within {within_s:g} s")
