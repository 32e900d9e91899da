"""Warm spares: sandboxes started ahead of time, with NumPy imported, each used for one submission."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from qkv.grading.sandbox.process import SandboxProcess, SandboxStartError

__all__ = ["SparePool"]

_log = logging.getLogger(__name__)


class SparePool:
    """Keeps ``size`` started sandboxes ready. :meth:`take` hands one out (never twice) or returns None."""

    def __init__(self, size: int, start: Callable[[], SandboxProcess]) -> None:
        self.size = size
        self._start = start
        self._ready: deque[SandboxProcess] = deque()
        self._starting = 0
        self._starts_left: int | None = None  # spares still to start; None: refill for ever
        self._closed = False
        self._condition = threading.Condition()
        self.failures = 0
        self._workers = [
            threading.Thread(target=self._refill, name=f"qkv-grading-spares-{i}", daemon=True)
            for i in range(min(size, 2))
        ]
        for worker in self._workers:
            worker.start()

    @property
    def ready(self) -> int:
        """Spares started and waiting for a program now."""
        with self._condition:
            return len(self._ready)

    def take(self, keep: int = 0) -> SandboxProcess | None:
        """A ready spare, or None when none is ready right now (the caller then starts one itself).

        With ``keep``, only while more than ``keep`` are ready: the last ones stay for other callers.
        """
        with self._condition:
            while len(self._ready) > keep:
                spare = self._ready.popleft()
                self._condition.notify_all()
                if spare.alive():
                    return spare
                spare.discard()
            self._condition.notify_all()
            return None

    def wait_until_full(self, timeout: float) -> bool:
        """Block until every spare is ready (used by benchmarks and tests); False on timeout."""
        with self._condition:
            return self._condition.wait_for(lambda: len(self._ready) >= self.size or self._closed, timeout)

    def stop_refilling(self, wait_s: float) -> None:
        """Fill the pool this once more, then start no spare again; wait up to ``wait_s`` seconds for it.

        For a grader that grades once (``qkv check``): the spare it asked for while it got ready is then
        ready for :meth:`take` (unless it failed to start), and taking it starts no other one, which would
        only compete for the CPU and delay :meth:`close`.
        """
        with self._condition:
            self._starts_left = max(0, self.size - len(self._ready) - self._starting)
            self._condition.notify_all()
            self._condition.wait_for(
                lambda: (self._starts_left == 0 and self._starting == 0) or self._closed, wait_s
            )

    def close(self) -> None:
        """Stop refilling and kill the waiting spares."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()
        for worker in self._workers:
            worker.join(timeout=60)
        with self._condition:
            spares, self._ready = list(self._ready), deque()
        for spare in spares:
            spare.discard()

    def _refill(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(
                    lambda: (
                        self._closed
                        or (len(self._ready) + self._starting < self.size and self._starts_left != 0)
                    )
                )
                if self._closed:
                    return
                self._starting += 1
                if self._starts_left is not None:
                    self._starts_left -= 1
            spare: SandboxProcess | None = None
            failed = False
            try:
                spare = self._start()
                spare.wait_ready()
            except Exception as error:  # a refill thread must outlive any failed start
                if not isinstance(error, SandboxStartError):
                    _log.exception("A warm spare sandbox could not be started")
                if spare is not None:
                    spare.discard()
                spare, failed = None, True
                self.failures += 1
            with self._condition:
                self._starting -= 1
                if spare is not None and not self._closed:
                    self._ready.append(spare)
                    spare = None
                self._condition.notify_all()
                closed = self._closed
            if spare is not None:
                spare.discard()
            if closed:
                return
            if failed:
                threading.Event().wait(0.5)  # do not spin when sandboxes cannot start
