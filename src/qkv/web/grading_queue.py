"""A bounded grading queue in front of the grader: fixed concurrency, a limited wait list, clean shutdown.

Gradings run on a small pool of threads (each one drives a sandboxed process, so the threads
mostly wait). When every slot and every place in the wait list is taken, ``submit`` refuses at
once with ``QueueFull`` instead of letting requests pile up.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class GradingBusy(RuntimeError):
    """The queue cannot take this program now; the web API answers ``status`` with ``Retry-After``.

    Parameters
    ----------
    message : str
        The sentence for the learner.
    retry_after_s : int
        Estimated seconds until trying again may succeed (the ``Retry-After`` header).

    Examples
    --------
    >>> busy = QueueFull("The grader is busy.", 3)
    >>> (isinstance(busy, GradingBusy), busy.status, busy.retry_after_s)
    (True, 503, 3)
    >>> AlreadyGrading("Your previous program is still being graded.", 1).status
    429
    """

    status: int = 503

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueFull(GradingBusy):
    """Every grading slot and wait-list place is taken; ``retry_after_s`` estimates when one frees up."""

    status = 503


class AlreadyGrading(GradingBusy):
    """This learner already has a program being graded; one at a time keeps a few learners from
    holding every grader (a runaway loop holds one for the whole time limit)."""

    status = 429


class GradingClosed(RuntimeError):
    """The queue no longer takes work (the server is shutting down)."""


@dataclass
class _Slot:
    """One admitted grading's place in the queue, given back exactly once."""

    owner: str | None
    released: bool = False


class GradingQueue:
    """Runs ``grade(source, suite)`` calls with at most ``concurrency`` at once and ``capacity`` waiting.

    Parameters
    ----------
    grade : callable
        ``grade(source, suite)``, or ``grade(source, suite, seed=...)`` for a submission given a seed; it must
        be thread-safe.
    concurrency : int
        Gradings running at once.
    capacity : int
        Gradings allowed to wait for a slot.

    Examples
    --------
    >>> queue = GradingQueue(lambda source, suite: source.upper(), concurrency=1, capacity=0)
    >>> queue.submit("ok", suite=None).result()
    'OK'
    >>> queue.close(timeout_s=1.0)
    True
    """

    def __init__(self, grade: Callable[..., Any], *, concurrency: int, capacity: int) -> None:
        if concurrency < 1 or capacity < 0:
            raise ValueError(
                f"A grading queue needs concurrency >= 1 and capacity >= 0, not {concurrency} and {capacity}."
            )
        self._grade = grade
        self.concurrency = concurrency
        self.capacity = capacity
        self._executor = concurrent.futures.ThreadPoolExecutor(concurrency, thread_name_prefix="qkv-grade")
        self._lock = threading.Lock()
        self._admitted = 0
        self._closed = False
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._owners: set[str] = set()  # learners with a grading admitted
        self._mean_s = 1.0  # running estimate of one grading's duration, for Retry-After

    @property
    def admitted(self) -> int:
        """Gradings running or waiting now."""
        return self._admitted

    def submit(
        self, source: str, suite: Any, owner: str | None = None, *, seed: int | None = None
    ) -> concurrent.futures.Future[Any]:
        """Queue a grading and return its future.

        ``owner`` (a learner id) may have one grading admitted at a time. ``seed``, when given, is passed
        on as ``grade(source, suite, seed=seed)``: the seed of the test inputs.

        Raises
        ------
        AlreadyGrading
            If ``owner`` already has a grading running or waiting.
        QueueFull
            If ``concurrency + capacity`` gradings are already admitted.
        GradingClosed
            If the queue has been closed.
        """
        with self._lock:
            if self._closed:
                raise GradingClosed(
                    "The server is shutting down and takes no more code to grade; try again shortly."
                )
            if self._admitted >= self.concurrency + self.capacity:
                retry = max(1, math.ceil(self._mean_s * (self._admitted + 1) / self.concurrency))
                taken = "1 program is" if self._admitted == 1 else f"{self._admitted} programs are"
                raise QueueFull(
                    f"The grader is busy: {taken} being graded or waiting, which is all this server "
                    f"takes at once. Try again in about {retry} s.",
                    retry,
                )
            if owner is not None and owner in self._owners:
                retry = max(1, math.ceil(self._mean_s))
                raise AlreadyGrading(
                    "Your previous program is still being graded; wait for its results, then run again "
                    f"(in about {retry} s).",
                    retry,
                )
            self._admitted += 1
            if owner is not None:
                self._owners.add(owner)
            slot = _Slot(owner)
            future = self._executor.submit(self._timed, source, suite, slot, seed)
            self._pending.add(future)
        future.add_done_callback(lambda done: self._forget(done, slot))
        return future

    def _timed(self, source: str, suite: Any, slot: _Slot, seed: int | None) -> Any:
        # The slot is freed here, in the worker, before the future gets its result: a learner who
        # has the result of one grading may submit the next at once.
        started = time.monotonic()
        try:
            return self._grade(source, suite) if seed is None else self._grade(source, suite, seed=seed)
        finally:
            elapsed = time.monotonic() - started
            with self._lock:
                self._mean_s = 0.8 * self._mean_s + 0.2 * elapsed
                self._release(slot)

    def _forget(self, future: concurrent.futures.Future[Any], slot: _Slot) -> None:
        with self._lock:
            self._pending.discard(future)
            self._release(slot)  # only does something for a grading cancelled before it started

    def _release(self, slot: _Slot) -> None:
        """Give back an admitted grading's place (call with the lock held; a second call does nothing)."""
        if slot.released:
            return
        slot.released = True
        self._admitted -= 1
        if slot.owner is not None:
            self._owners.discard(slot.owner)

    def close(self, timeout_s: float) -> bool:
        """Stop taking work and wait up to ``timeout_s`` for admitted gradings to finish.

        Returns
        -------
        bool
            True if everything admitted finished in time.
        """
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        _done, not_done = concurrent.futures.wait(pending, timeout=timeout_s)
        for future in not_done:
            future.cancel()  # still waiting for a slot: drop it; running ones end with their own time limit
        self._executor.shutdown(wait=False, cancel_futures=True)
        return not not_done
