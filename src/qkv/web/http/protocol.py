"""uvicorn's HTTP/1.1 protocol with a deadline for each request's head.

uvicorn times out idle keep-alive connections and we time out slow bodies (``limits.py``), but nothing
limits how long a client may take to send a request line and headers: a client that sends them a byte at
a time, or stalls half-way, would hold its connection open for ever. This protocol closes such a
connection once ``head_timeout_s`` has passed without a complete head.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HeadTimeoutH11Protocol"]


class HeadTimeoutH11Protocol(H11Protocol):
    """``H11Protocol`` that closes a connection whose request head is not complete in time."""

    head_timeout_s: float = 10.0
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        cycle_before = self.cycle
        super().data_received(data)
        if self.cycle is not cycle_before:
            self._disarm()  # a whole head arrived; the body has its own deadline
        elif self._head_deadline is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of the next request on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._head_deadline = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing():
            self.transport.close()
