"""The load client retries like a browser: against a tiny real HTTP server on loopback (real sockets).

The server answers the first request of a connection, keeps the connection open, and then closes it as
the second request arrives, without answering: the race of a kept-alive connection that the server
closes just as the client reuses it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from types import ModuleType

import httpx
import pytest

from tests.time_scale import scaled


class FlakyServer:
    """Answers ``200 ok`` with keep-alive; on the first connection, drops the second request unanswered.

    With ``drop_every_first`` every connection's *first* request is dropped instead: a failure on a new
    connection, which must not be retried.
    """

    def __init__(self, *, drop_every_first: bool = False) -> None:
        self.drop_every_first = drop_every_first
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        self.requests: list[tuple[int, bytes]] = []  # (connection number, body)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn, self.connections), daemon=True).start()

    def _handle(self, conn: socket.socket, number: int) -> None:
        with conn:
            reader = conn.makefile("rb")
            for index in range(100):
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = reader.read(length) if length else b""
                self.requests.append((number, body))
                drop = index == 0 if self.drop_every_first else (number == 1 and index == 1)
                if drop:
                    return  # closed with the request read and nothing answered
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def flaky() -> Iterator[FlakyServer]:
    server = FlakyServer()
    yield server
    server.close()


def test_a_request_on_a_reused_connection_closed_unanswered_is_sent_once_more_on_a_new_one(
    load_script: ModuleType, flaky: FlakyServer
) -> None:
    async def run() -> list[tuple[int, bool]]:
        async with httpx.AsyncClient(timeout=scaled(10)) as client:
            results = []
            for body in (b"first", b"second", b"third"):
                response, retried = await load_script.send_like_a_browser(
                    client, "POST", flaky.url + "/api", content=body
                )
                results.append((response.status_code, retried))
            return results

    assert asyncio.run(run()) == [(200, False), (200, True), (200, False)]
    # The second request reached the server twice: on the first connection (dropped), then on a new one,
    # used for that request only; the third went on another new one, the client's first having closed.
    assert flaky.requests == [(1, b"first"), (1, b"second"), (2, b"second"), (3, b"third")]
    assert flaky.connections == 3


def test_a_failure_on_a_new_connection_is_not_retried(load_script: ModuleType) -> None:
    server = FlakyServer(drop_every_first=True)

    async def run() -> None:
        async with httpx.AsyncClient(timeout=scaled(10)) as client:
            await load_script.send_like_a_browser(client, "POST", server.url + "/api", content=b"only")

    try:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            asyncio.run(run())
        assert server.requests == [(1, b"only")] and server.connections == 1
    finally:
        server.close()


def test_the_load_report_counts_and_shows_the_retries(load_script: ModuleType) -> None:
    report = load_script.LoadReport(learners=1, base_urls=["http://127.0.0.1:1"])
    report.connection_retries = 2
    assert report.to_dict()["connection_retries"] == 2
    assert (
        "requests sent again on a new connection (a reused one closed before answering): 2" in report.format()
    )
