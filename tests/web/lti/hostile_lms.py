"""What an attacker points a registration link at: real sockets on loopback, each in its own threads.

- ``SlowLms``: answers every request with headers at once, then a body of one byte every 2 s, forever; it
  records when each connection came and when the other side closed it.
- ``OddServer``: what a prober finds at an address: an open port that speaks no HTTP, an HTML page, a
  body that is no JSON, a JSON array, a redirect, a 404; it counts the connections it was given.
"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

DRIP_S = 2.0


def _read_head(sock: socket.socket) -> bytes:
    """The request's head (up to the blank line), or what came before the peer closed."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < 65536:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return head


@dataclass
class SlowLms:
    """A server that never finishes an answer (see the module's docstring)."""

    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    spans: dict[int, list[float]] = field(default_factory=dict)  # connection -> [accepted, closed?]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/.well-known/openid-configuration"

    def accepted(self) -> int:
        with self.lock:
            return len(self.spans)

    def closed(self) -> list[float]:
        """How long each connection closed so far was open, in seconds."""
        with self.lock:
            return [span[1] - span[0] for span in self.spans.values() if len(span) == 2]

    def serve_one(self, sock: socket.socket) -> None:
        with self.lock:
            number = len(self.spans)
            self.spans[number] = [time.monotonic()]
        try:
            _read_head(sock)
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            )
            while True:
                sock.sendall(b" ")
                readable, _, _ = select.select([sock], [], [], DRIP_S)
                if readable and not sock.recv(1):
                    break  # the other side closed the connection
        except OSError:
            pass
        finally:
            with self.lock:
                self.spans[number].append(time.monotonic())


@dataclass
class OddServer:
    """An open port that answers what a prober may find there (see the module's docstring)."""

    port: int = 0
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    heads: list[bytes] = field(default_factory=list)  # each request's head, as it came

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve_one(self, sock: socket.socket) -> None:
        with self.lock:
            self.connections += 1
        head = _read_head(sock)
        with self.lock:
            self.heads.append(head)
        path = head.split(b" ", 2)[1].decode("ascii", "replace") if head.count(b" ") >= 2 else "/"
        if path.startswith("/ssh"):
            sock.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
            return
        status, kind, body = ANSWERS.get(path, ("404 Not Found", "text/plain", b"no such page"))
        extra = f"Location: {self.url('/json')}\r\n" if status.startswith("302") else ""
        sock.sendall(
            f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n{extra}"
            "Connection: close\r\n\r\n".encode("ascii")
            + body
        )


ANSWERS = {
    "/html": ("200 OK", "text/html", b"<!doctype html><title>Router admin</title><p>Log in</p>"),
    "/notjson": ("200 OK", "application/json", b"{'issuer': nope"),
    "/array": ("200 OK", "application/json", b"[1, 2, 3]"),
    "/json": ("200 OK", "application/json", b'{"issuer": "", "status": "ok"}'),
    "/redirect": ("302 Found", "text/plain", b""),
}


@contextmanager
def listening(handler: SlowLms | OddServer) -> Iterator[None]:
    """``handler`` served on a free loopback port (``handler.port``), one thread per connection."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            handler.serve_one(self.request)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Handler)
    handler.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, name="hostile-lms", daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
