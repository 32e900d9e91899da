"""Judging reports on a worker of its own, fairly across clients by the CPU their reports cost.

Once a sandbox has ended, its report is decoded and judged: in CPython that holds the interpreter for as
long as it takes, so the event loop and every other grading wait meanwhile. A :class:`JudgeLine` keeps
that work on its own threads (one by default: the interpreter runs one at a time anyway), and takes the
waiting reports in turn by client (the sending address), the client whose reports have cost the least
CPU first (start-time fair queueing, as the grading line does with grader time). A client that sends
heavy reports therefore waits behind its own reports, and an honest learner's light one is judged next.

The grading thread names its client with :func:`judging_for` (a context variable), so the grader needs no
client argument: ``qkv check`` and the tests judge inline, in the calling thread.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["JudgeLine", "current_client", "judging_for"]

T = TypeVar("T")
_CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("qkv_judging_client", default=None)
ANONYMOUS = ""  # the client of reports judged for nobody in particular


@contextlib.contextmanager
def judging_for(client: str | None) -> Iterator[None]:
    """Within the block, reports this thread has judged are charged to ``client``.

    Examples
    --------
    >>> with judging_for("10.0.0.1"):
    ...     current_client()
    '10.0.0.1'
    >>> current_client() is None
    True
    """
    token = _CLIENT.set(client)
    try:
        yield
    finally:
        _CLIENT.reset(token)


def current_client() -> str | None:
    """The client named by the innermost :func:`judging_for` of this thread, or None."""
    return _CLIENT.get()


@dataclass
class _Work:
    client: str
    run: Callable[[], Any]
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    order: int = 0


class JudgeLine:
    """Reports judged on ``workers`` threads, fairly across clients by the CPU each has cost.

    Parameters
    ----------
    workers : int
        Judging threads (at least 1).
    clock : callable
        The CPU clock a judgement is measured with (``time.thread_time``; tests pass their own).

    Examples
    --------
    >>> line = JudgeLine()
    >>> line.judge("10.0.0.1", lambda: 6 * 7)
    42
    >>> line.close()
    """

    def __init__(self, workers: int = 1, clock: Callable[[], float] = time.thread_time) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}.")
        self._clock = clock
        self._lock = threading.Condition()
        self._waiting: list[_Work] = []
        self._tags: dict[str, float] = {}  # CPU seconds each client's reports have cost (virtual time)
        self._virtual = 0.0  # the tag of the last judgement started: where a returning client starts
        self._counter = 0
        self._closed = False
        self._threads = [
            threading.Thread(target=self._serve, name=f"qkv-judge-{n}", daemon=True) for n in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def judge(self, client: str | None, run: Callable[[], T]) -> T:
        """Run ``run`` on a judging thread in ``client``'s turn; its result, or the exception it raised.

        Raises
        ------
        RuntimeError
            If the line is closed.
        """
        name = ANONYMOUS if client is None else client
        with self._lock:
            if self._closed:
                raise RuntimeError("The judging line is closed.")
            self._counter += 1
            work = _Work(name, run, order=self._counter)
            if name not in self._tags:
                self._tags[name] = self._virtual  # time unused while away is not banked
            self._waiting.append(work)
            self._lock.notify()
        result: T = work.future.result()
        return result

    @property
    def waiting(self) -> int:
        """Reports waiting to be judged now."""
        with self._lock:
            return len(self._waiting)

    def cost(self, client: str) -> float:
        """The CPU seconds charged to ``client`` so far (0 for one never seen, or forgotten when idle)."""
        with self._lock:
            return self._tags.get(client, 0.0)

    def close(self) -> None:
        """Judge what waits, then stop the threads."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        for thread in self._threads:
            thread.join()

    def _take(self) -> _Work | None:
        with self._lock:
            while not self._waiting and not self._closed:
                self._lock.wait()
            if not self._waiting:
                return None
            work = min(self._waiting, key=lambda w: (self._tags[w.client], w.order))
            self._waiting.remove(work)
            self._virtual = max(self._virtual, self._tags[work.client])
            return work

    def _serve(self) -> None:
        while (work := self._take()) is not None:
            started = self._clock()
            try:
                outcome: tuple[bool, Any] = (True, work.run())
            except BaseException as error:  # handed to the grading thread that waits for it
                outcome = (False, error)
            spent = max(0.0, self._clock() - started)
            with self._lock:
                self._tags[work.client] = self._tags.get(work.client, self._virtual) + spent
                self._forget_idle()
            if outcome[0]:
                work.future.set_result(outcome[1])
            else:
                work.future.set_exception(outcome[1])

    def _forget_idle(self) -> None:
        """Once nothing waits, clients start level again (their past is not held against them forever)."""
        if not self._waiting:
            now = self._virtual
            self._tags = {client: tag - now for client, tag in self._tags.items() if tag > now}
            self._virtual = 0.0
