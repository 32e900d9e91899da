"""A fair, bounded grading queue in front of the grader: fixed concurrency, a wait list, clean shutdown.

Gradings run on a small pool of threads (each one drives a sandboxed process, so the threads mostly
wait). Programs that find every grader busy wait in line, and the line is served fairly across clients
(round robin over client addresses), so one client's many identities get one turn per round like any
other client. A learner has one program in line at a time: running again while it still waits replaces
the waiting program (both requests get the newer program's verdict); running again while it is being
graded is refused with ``AlreadyGrading``. ``submit`` refuses at once with ``QueueFull`` only when the
whole wait list is full, and with ``ClientBusy`` when one client already has ``per_client`` programs
waiting.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
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


class ClientBusy(GradingBusy):
    """One client (one address) already has as many programs waiting as a client may have."""

    status = 429


class GradingClosed(RuntimeError):
    """The queue no longer takes work (the server is shutting down)."""


@dataclass
class _Job:
    """One program in line or being graded."""

    source: str
    suite: Any
    owner: str | None
    client: str
    seed: int | None = None
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    queued_at: float = field(default_factory=time.monotonic)


class GradingQueue:
    """Runs ``grade(source, suite)`` calls, ``concurrency`` at once, with a fair wait list of ``capacity``.

    Parameters
    ----------
    grade : callable
        ``grade(source, suite)``; it must be thread-safe.
    concurrency : int
        Gradings running at once.
    capacity : int
        Programs allowed to wait for a grader, all clients together.
    per_client : int, optional
        Programs one client may have waiting (default: no bound but the whole queue's).

    Examples
    --------
    >>> queue = GradingQueue(lambda source, suite: source.upper(), concurrency=1, capacity=0)
    >>> queue.submit("ok", suite=None).result()
    'OK'
    >>> queue.close(timeout_s=1.0)
    True
    """

    def __init__(
        self,
        grade: Callable[..., Any],
        *,
        concurrency: int,
        capacity: int,
        per_client: int | None = None,
    ) -> None:
        if concurrency < 1 or capacity < 0 or (per_client is not None and per_client < 1):
            raise ValueError(
                "A grading queue needs concurrency >= 1, capacity >= 0 and per_client >= 1, not "
                f"{concurrency}, {capacity} and {per_client}."
            )
        self._grade = grade
        self.concurrency = concurrency
        self.capacity = capacity
        self.per_client = per_client if per_client is not None else concurrency + capacity
        self._lock = threading.Condition()
        self._lines: dict[str, deque[_Job]] = {}  # client -> its programs in line, oldest first
        self._turns: deque[str] = deque()  # clients with programs in line, in the order they are served
        self._waiting_by_owner: dict[str, _Job] = {}
        self._running_owners: set[str] = set()
        self._running = 0
        self._closed = False
        self._mean_s = 1.0  # running estimate of one grading's duration, for Retry-After
        self._workers = [
            threading.Thread(target=self._work, name=f"qkv-grade-{index}", daemon=True)
            for index in range(concurrency)
        ]
        for worker in self._workers:
            worker.start()

    @property
    def admitted(self) -> int:
        """Gradings running or waiting now."""
        with self._lock:
            return self._running + self._waiting_count()

    def _waiting_count(self) -> int:
        return sum(len(line) for line in self._lines.values())

    def submit(
        self,
        source: str,
        suite: Any,
        owner: str | None = None,
        client: str = "",
        *,
        seed: int | None = None,
    ) -> concurrent.futures.Future[Any]:
        """Put a program in line and return the future of its verdict.

        Parameters
        ----------
        source, suite
            What to grade.
        owner : str, optional
            The learner; one program of theirs waits at a time (a newer one replaces it).
        client : str
            Who sent it (the client address); the line is served fairly across clients.
        seed : int, optional
            Passed on as ``grade(source, suite, seed=seed)``: the seed of the test inputs.

        Raises
        ------
        AlreadyGrading
            If ``owner``'s previous program is being graded right now.
        ClientBusy
            If ``client`` already has ``per_client`` programs waiting.
        QueueFull
            If no grader is free and the wait list is full.
        GradingClosed
            If the queue has been closed.
        """
        with self._lock:
            if self._closed:
                raise GradingClosed(
                    "The server is shutting down and takes no more code to grade; try again shortly."
                )
            if owner is not None and owner in self._waiting_by_owner:
                job = self._waiting_by_owner[owner]
                job.source, job.suite, job.seed = source, suite, seed  # the newer program takes the place
                return job.future
            if owner is not None and owner in self._running_owners:
                retry = max(1, math.ceil(self._mean_s))
                raise AlreadyGrading(
                    "Your previous program is still being graded; wait for its results, then run again "
                    f"(in about {retry} s).",
                    retry,
                )
            waiting = self._waiting_count()
            if self._running + waiting >= self.concurrency + self.capacity:
                retry = max(1, math.ceil(self._mean_s * (waiting + 1) / self.concurrency))
                taken = self._running + waiting
                described = "1 program is" if taken == 1 else f"{taken} programs are"
                raise QueueFull(
                    f"The grader is busy: {described} being graded or waiting, which is all this server "
                    f"takes at once. Try again in about {retry} s.",
                    retry,
                )
            line = self._lines.get(client)
            if line is not None and len(line) >= self.per_client:
                retry = max(1, math.ceil(self._mean_s * len(line) / self.concurrency))
                waiting_here = "1 program" if len(line) == 1 else f"{len(line)} programs"
                raise ClientBusy(
                    f"Your network already has {waiting_here} waiting to be graded, the most one "
                    f"address may have; try again in about {retry} s.",
                    retry,
                )
            job = _Job(source, suite, owner, client, seed)
            if line is None:
                line = self._lines[client] = deque()
                self._turns.append(client)
            line.append(job)
            if owner is not None:
                self._waiting_by_owner[owner] = job
            self._lock.notify()
            return job.future

    def position(self, owner: str) -> int | None:
        """How many programs will be graded before ``owner``'s waiting one (None: nothing of theirs waits).

        With round-robin service, that is one program of each client served before theirs in every round.
        """
        with self._lock:
            job = self._waiting_by_owner.get(owner)
            if job is None:
                return None
            rank = self._lines[job.client].index(job)  # rounds before this program's
            turn = list(self._turns).index(job.client)
            ahead = 0
            for index, client in enumerate(self._turns):
                line_length = len(self._lines[client])
                ahead += min(line_length, rank + (1 if index < turn else 0))
            return ahead

    def cancel(self, owner: str) -> bool:
        """Take ``owner``'s waiting program out of line (its future is cancelled); False if none waits."""
        with self._lock:
            job = self._waiting_by_owner.pop(owner, None)
            if job is None:
                return False
            line = self._lines[job.client]
            line.remove(job)
            if not line:
                del self._lines[job.client]
                self._turns.remove(job.client)
        job.future.cancel()
        return True

    def _next_job(self) -> _Job | None:
        """The next program to grade, round robin over clients (call with the lock held)."""
        while self._turns:
            client = self._turns.popleft()
            line = self._lines[client]
            job = line.popleft()
            if line:
                self._turns.append(client)
            else:
                del self._lines[client]
            if job.owner is not None:
                self._waiting_by_owner.pop(job.owner, None)
            if job.future.set_running_or_notify_cancel():
                return job
        return None

    def _work(self) -> None:
        while True:
            with self._lock:
                job = self._next_job()
                while job is None:
                    if self._closed:
                        return
                    self._lock.wait()
                    job = self._next_job()
                self._running += 1
                if job.owner is not None:
                    self._running_owners.add(job.owner)
            self._run(job)

    def _run(self, job: _Job) -> None:
        started = time.monotonic()
        try:
            if job.seed is None:
                result = self._grade(job.source, job.suite)
            else:
                result = self._grade(job.source, job.suite, seed=job.seed)
        except BaseException as error:  # the future carries it to the request that waits
            outcome: tuple[bool, Any] = (False, error)
        else:
            outcome = (True, result)
        # The learner's place is freed before the verdict is set: with the result in hand, they may run again.
        with self._lock:
            self._mean_s = 0.8 * self._mean_s + 0.2 * (time.monotonic() - started)
            self._running -= 1
            if job.owner is not None:
                self._running_owners.discard(job.owner)
            self._lock.notify_all()
        if outcome[0]:
            job.future.set_result(outcome[1])
        else:
            job.future.set_exception(outcome[1])

    def close(self, timeout_s: float) -> bool:
        """Stop taking work and let what was admitted finish, for up to ``timeout_s``.

        Programs still waiting when the time is up are dropped (their futures cancelled); running ones end
        with their own time limit.

        Returns
        -------
        bool
            True if everything admitted finished in time.
        """
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            while (self._running or self._turns) and time.monotonic() < deadline:
                self._lock.wait(max(0.0, deadline - time.monotonic()))
            finished = not self._running and not self._turns
            dropped = [job for line in self._lines.values() for job in line]
            self._lines.clear()
            self._turns.clear()
            self._waiting_by_owner.clear()
            self._lock.notify_all()
        for job in dropped:
            job.future.cancel()
        return finished
