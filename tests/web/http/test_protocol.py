"""The request-head deadline: a client that stalls in its headers is cut off; others are served."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from qkv.web.http.protocol import HeadTimeoutH11Protocol


class QuickDeadline(HeadTimeoutH11Protocol):
    head_timeout_s = 0.5


async def hello(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def port() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    config = uvicorn.Config(hello, host="127.0.0.1", port=free, http=QuickDeadline, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield free
    server.should_exit = True
    thread.join(timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(1024):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def _get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return sock.recv(1024)


@pytest.mark.timeout(30)
def test_a_client_stalled_in_its_headers_is_cut_off_and_others_are_served(port: int) -> None:
    stalled = socket.create_connection(("127.0.0.1", port), timeout=5)
    stalled.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finishes the head
    assert _get(port).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    assert _closed_within(stalled, 5.0)
    assert time.monotonic() - started < 3.0
    stalled.close()


@pytest.mark.timeout(30)
def test_a_kept_alive_connection_that_stalls_in_its_second_head_is_cut_off(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET / HTTP/1.1\r\nHo")
        assert _closed_within(sock, 5.0)


@pytest.mark.timeout(30)
def test_a_slow_but_complete_head_within_the_deadline_is_served(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for part in (b"GET / HTTP/1.1\r\n", b"Host: x\r\n", b"Connection: close\r\n\r\n"):
            sock.sendall(part)
            time.sleep(0.1)
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
