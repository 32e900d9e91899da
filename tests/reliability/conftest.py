"""Real ``qkv serve`` processes on free loopback ports, their databases, and the load script.

Every server here is the real command in a child process (uvicorn, the store, the sandboxed grader),
started on a port nobody else uses, with a database of its own: a temporary SQLite file, or a fresh
PostgreSQL schema that is dropped afterwards so concurrent runs never see each other's rows.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
POSTGRES_URL = os.environ.get("QKV_TEST_POSTGRES_URL", "postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_test")

# `qkv serve` itself, run without going through the group, so it does not depend on the other sub-commands.
_SERVE = "import sys; from qkv.cli.serve import serve; serve.main(sys.argv[1:], prog_name='qkv serve')"


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
                [sys.executable, "-c", _SERVE, *args], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )
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
            self.process.wait(timeout=30)

    def terminate(self, within: float = 60.0) -> int:
        """SIGTERM and wait at most ``within`` seconds for the exit status (SIGKILL after that)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"qkv serve did not exit within {within} s of SIGTERM:\n{self.log()}"
            ) from None


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[type[Server]]:
    """Start servers with ``start_server(database_url, *extra_options).start()``; all are killed afterwards."""
    started: list[Server] = []

    class _Tracked(Server):
        def start(self, ready_within: float = 60.0) -> Server:
            started.append(self)
            return super().start(ready_within)

        def __init__(self, database_url: str, *extra: str, port: int | None = None) -> None:
            super().__init__(database_url, tmp_path, *extra, port=port)

    yield _Tracked  # type: ignore[misc]
    for server in started:
        server.kill()


def require_bubblewrap() -> None:
    """Grading in these tests goes through the real sandbox."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; install it with: apt-get install bubblewrap")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'qkv.sqlite3'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL whose connections live in a fresh PostgreSQL schema, dropped after the test."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    schema = f"qkv_rel_{uuid.uuid4().hex[:12]}"
    try:
        admin = create_engine(POSTGRES_URL)
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {schema}"))
    except SQLAlchemyError as error:
        pytest.skip(f"PostgreSQL is not reachable at {POSTGRES_URL}: {type(error).__name__}")
    separator = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"
    finally:
        with contextlib.suppress(SQLAlchemyError), admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="session")
def load_script() -> ModuleType:
    """``benchmarks/load.py`` imported as a module."""
    spec = importlib.util.spec_from_file_location("qkv_load_script", REPO / "benchmarks" / "load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module
