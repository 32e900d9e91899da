"""A clock the tests move: a term's days pass in a test without sleeping.

``TermClock`` runs with the real time (so leases, waits and sessions keep moving) from where the test put
it, and jumps forward when told (``advance``); installed with ``qkv.store.sql.clock.use_clock``, it is
the time every row qkv keeps is stamped with (work saved, a first solve, a score's timestamp).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from qkv.store.sql.clock import use_clock, utc_now

__all__ = ["TermClock", "term_clock"]


class TermClock:
    """Naive UTC time: the real time, moved by the jumps the test made."""

    def __init__(self) -> None:
        self.started = utc_now()
        self._ticks = time.monotonic()
        self.jumped = timedelta(0)

    def __call__(self) -> datetime:
        return self.started + self.jumped + timedelta(seconds=time.monotonic() - self._ticks)

    def advance(self, **delta: float) -> datetime:
        """Jump forward (``days=2``, ``hours=1``); the new time."""
        step = timedelta(**delta)
        assert step > timedelta(0), "a term's clock only moves forward"
        self.jumped += step
        return self()


@contextmanager
def term_clock() -> Iterator[TermClock]:
    """A ``TermClock`` installed as the store's clock for the block."""
    clock = TermClock()
    with use_clock(clock):
        yield clock
