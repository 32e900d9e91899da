"""A fair, bounded grading queue in front of the grader: fixed concurrency, a wait list, clean shutdown.

Gradings run on a small pool of threads (each one drives a sandboxed process, so the threads mostly
wait). Programs that find every grader busy wait in line, and the line is served fairly across clients
(round robin over client addresses), so one client's many identities get one turn per round like any
other client. A learner has one program in line at a time: running again while it still waits replaces
the waiting program (both requests get the newer program's verdict); running again while it is being
graded is refused with ``AlreadyGrading``. ``submit`` refuses at once with ``QueueFull`` only when the
whole wait list is full, and with ``ClientBusy`` when one client already has ``per_client`` programs
waiting.

With ``first_slice`` the queue is a two-level feedback queue: every program first runs within a short
slice (``first_slice(source, suite, seed=...)`` returns its result, or an :class:`~qkv.grading.Unfinished`
when it outgrew the slice). An unfinished program waits in a second line, paused or stopped, and runs
on only when no program waits for its first slice: endless loops cost the class one slice each, not their
whole time limit. With ``later_slice_s`` it runs on a slice at a time, back to the end of the second
line after each, so that a program arriving while loops run on waits for one slice at most. Both lines
are served round robin over clients.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import enum
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from qkv.grading import Unfinished


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


class ProgramState(enum.Enum):
    """Where a learner's program is (what the page says while it waits for its verdict)."""

    WAITING = "waiting"  # in line for its first slice
    RUNNING = "running"  # in its first slice, or graded whole
    TAKING_LONGER = "taking_longer"  # outgrew its first slice: set aside, or finishing behind the others


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
    unfinished: Unfinished | None = None  # while it waits to finish after outgrowing its first slice
    outgrew: bool = False  # it outgrew its first slice (it waits in, or runs from, the second line)


class _FairLine:
    """Programs in line, served round robin over clients (one program of each client per round)."""

    def __init__(self) -> None:
        self.by_client: dict[str, deque[_Job]] = {}  # client -> its programs in line, oldest first
        self.turns: deque[str] = deque()  # clients with programs in line, in the order they are served

    def __len__(self) -> int:
        return sum(len(line) for line in self.by_client.values())

    def of(self, client: str) -> int:
        """How many programs ``client`` has in this line."""
        return len(self.by_client.get(client, ()))

    def push(self, job: _Job) -> None:
        line = self.by_client.get(job.client)
        if line is None:
            line = self.by_client[job.client] = deque()
            self.turns.append(job.client)
        line.append(job)

    def pop(self) -> _Job | None:
        """The next program, round robin over clients; None when the line is empty."""
        if not self.turns:
            return None
        client = self.turns.popleft()
        line = self.by_client[client]
        job = line.popleft()
        if line:
            self.turns.append(client)
        else:
            del self.by_client[client]
        return job

    def remove(self, job: _Job) -> None:
        line = self.by_client[job.client]
        line.remove(job)
        if not line:
            del self.by_client[job.client]
            self.turns.remove(job.client)

    def ahead_of(self, job: _Job) -> int:
        """Programs served before ``job``: one of each client before it in every round."""
        rank = self.by_client[job.client].index(job)  # rounds before this program's
        turn = list(self.turns).index(job.client)
        ahead = 0
        for index, client in enumerate(self.turns):
            ahead += min(len(self.by_client[client]), rank + (1 if index < turn else 0))
        return ahead

    def drain(self) -> list[_Job]:
        jobs = [job for line in self.by_client.values() for job in line]
        self.by_client.clear()
        self.turns.clear()
        return jobs


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
    first_slice : callable, optional
        ``first_slice(source, suite, seed=None)``: grade within a first slice, returning the result or an
        :class:`~qkv.grading.Unfinished` (see above). Without it every program is graded whole by ``grade``.
    later_slice_s : float, optional
        How long a set-aside program runs each time it is taken up again (CPU seconds) before it goes
        back to the end of the second line, so that programs arriving meanwhile wait for one slice at
        most; None runs it to its end in one go.

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
        first_slice: Callable[..., Any] | None = None,
        later_slice_s: float | None = None,
    ) -> None:
        if concurrency < 1 or capacity < 0 or (per_client is not None and per_client < 1):
            raise ValueError(
                "A grading queue needs concurrency >= 1, capacity >= 0 and per_client >= 1, not "
                f"{concurrency}, {capacity} and {per_client}."
            )
        self._grade = grade
        self._first_slice = first_slice
        self._later_slice_s = later_slice_s
        self.concurrency = concurrency
        self.capacity = capacity
        self.per_client = per_client if per_client is not None else concurrency + capacity
        self._lock = threading.Condition()
        self._first = _FairLine()  # programs waiting for their first slice (or to be graded whole)
        self._later = _FairLine()  # programs that outgrew their first slice, waiting to finish
        self._waiting_by_owner: dict[str, _Job] = {}
        self._running_owners: dict[str, _Job] = {}
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
        return len(self._first) + len(self._later)

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
                if job.outgrew:  # the older one outgrew its slice: drop it, the newer starts afresh
                    self._later.remove(job)
                    stale, job.unfinished, job.outgrew = job.unfinished, None, False
                    self._first.push(job)
                    if stale is not None:
                        stale.discard()
                    self._lock.notify()
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
            held = self._first.of(client) + self._later.of(client)
            if held >= self.per_client:
                retry = max(1, math.ceil(self._mean_s * held / self.concurrency))
                waiting_here = "1 program" if held == 1 else f"{held} programs"
                raise ClientBusy(
                    f"Your network already has {waiting_here} waiting to be graded, the most one "
                    f"address may have; try again in about {retry} s.",
                    retry,
                )
            job = _Job(source, suite, owner, client, seed)
            self._first.push(job)
            if owner is not None:
                self._waiting_by_owner[owner] = job
            self._lock.notify()
            return job.future

    def position(self, owner: str) -> int | None:
        """How many programs will be graded before ``owner``'s waiting one (None: nothing of theirs waits).

        With round-robin service, that is one program of each client served before theirs in every round;
        a program that outgrew its first slice also waits for every program in line for its first.
        """
        with self._lock:
            job = self._waiting_by_owner.get(owner)
            if job is None:
                return None
            if not job.outgrew:
                return self._first.ahead_of(job)
            return len(self._first) + self._later.ahead_of(job)

    def state(self, owner: str) -> ProgramState | None:
        """Where ``owner``'s program is now: waiting, running, or taking longer than most (None: nowhere)."""
        with self._lock:
            job = self._waiting_by_owner.get(owner) or self._running_owners.get(owner)
            if job is None:
                return None
            if job.outgrew:
                return ProgramState.TAKING_LONGER
            return ProgramState.RUNNING if owner in self._running_owners else ProgramState.WAITING

    def cancel(self, owner: str) -> bool:
        """Take ``owner``'s waiting program out of line (its future is cancelled); False if none waits.

        A program that outgrew its first slice and waits to finish is taken out too (its sandbox killed).
        """
        with self._lock:
            job = self._waiting_by_owner.pop(owner, None)
            if job is None:
                return False
            (self._later if job.outgrew else self._first).remove(job)
            stale, job.unfinished = job.unfinished, None
        job.future.cancel()
        if stale is not None:
            stale.discard()
        return True

    def _next_job(self) -> tuple[_Job | None, list[Unfinished]]:
        """The next program to run and the set-aside ones found cancelled (call with the lock held).

        Programs waiting for their first slice come first; one that outgrew it only when none waits.
        """
        dropped: list[Unfinished] = []
        while True:
            job = self._first.pop()
            later = job is None
            if later:
                job = self._later.pop()
            if job is None:
                return None, dropped
            if job.owner is not None:
                self._waiting_by_owner.pop(job.owner, None)
            # A slice leaves the future pending (the learner may still cancel while it is set aside); a
            # run that ends with the verdict for certain (a whole program, or the rest of one) marks it
            # running.
            final = self._first_slice is None or (later and self._later_slice_s is None)
            if final and job.future.set_running_or_notify_cancel():
                return job, dropped
            if not final and not job.future.cancelled():
                return job, dropped
            if job.unfinished is not None:
                dropped.append(job.unfinished)
                job.unfinished = None

    def _work(self) -> None:
        while True:
            with self._lock:
                job, dropped = self._next_job()
                while job is None:
                    if self._closed:
                        break
                    self._lock.wait()
                    job, more = self._next_job()
                    dropped += more
                if job is not None:
                    self._running += 1
                    if job.owner is not None:
                        self._running_owners[job.owner] = job
            for stale in dropped:
                stale.discard()
            if job is None:
                return
            self._run(job)

    def _run(self, job: _Job) -> None:
        started = time.monotonic()
        # Out of every line now: no other thread reaches this job until it is set aside again.
        pending, job.unfinished = job.unfinished, None
        try:
            if pending is not None:
                # A set-aside program runs on a slice at a time, so that a program arriving meanwhile waits
                # for one slice at most, not for the rest of a loop's time limit.
                result = pending.resume(self._later_slice_s)
            elif self._first_slice is not None:
                result = self._first_slice(job.source, job.suite, seed=job.seed)
            elif job.seed is None:
                result = self._grade(job.source, job.suite)
            else:
                result = self._grade(job.source, job.suite, seed=job.seed)
        except BaseException as error:  # the future carries it to the request that waits
            outcome: tuple[bool, Any] = (False, error)
        else:
            outcome = (True, result)
        set_aside = outcome[0] and isinstance(outcome[1], Unfinished)
        # The learner's place is freed before the verdict is set: with the result in hand, they may run again.
        with self._lock:
            self._mean_s = 0.8 * self._mean_s + 0.2 * (time.monotonic() - started)
            self._running -= 1
            if job.owner is not None:
                self._running_owners.pop(job.owner, None)
            queued = set_aside and not job.future.cancelled() and not self._closed
            if queued:
                job.unfinished, job.outgrew = outcome[1], True
                self._later.push(job)  # behind every program waiting for its first slice
                if job.owner is not None:
                    self._waiting_by_owner[job.owner] = job
            self._lock.notify_all()
        if queued:
            return
        if set_aside:
            outcome[1].discard()  # the learner cancelled (or left) during the first slice, or shutdown
            job.future.cancel()
        elif outcome[0]:
            _settle(job.future.set_result, outcome[1])
        else:
            _settle(job.future.set_exception, outcome[1])

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
            while (self._running or self._waiting_count()) and time.monotonic() < deadline:
                self._lock.wait(max(0.0, deadline - time.monotonic()))
            finished = not self._running and not self._waiting_count()
            dropped = self._first.drain() + self._later.drain()
            self._waiting_by_owner.clear()
            self._lock.notify_all()
        for job in dropped:
            if job.unfinished is not None:
                job.unfinished.discard()
            job.future.cancel()
        return finished


def _settle(setter: Callable[[Any], None], value: Any) -> None:
    """Set a future's outcome unless it was cancelled meanwhile (a request gone during a first slice)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        setter(value)
