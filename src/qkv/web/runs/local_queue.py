"""A fair, bounded grading queue in front of the grader: fixed concurrency, a wait list, clean shutdown.

Gradings run on a small pool of threads (each one drives a sandboxed process, so the threads mostly
wait). Programs that find every grader busy wait in line, and the line is served fairly across clients
(client addresses, by the grader time each has used), so one client's many identities get no more of
the graders than any other client. A learner has one program in line at a time: running again while it
still waits replaces the waiting program (both requests get the newer program's verdict); running again
while it is being graded is refused with ``AlreadyGrading``. ``submit`` refuses at once with
``QueueFull`` only when the whole wait list is full, and with ``ClientBusy`` when one client already has
``per_client`` programs waiting.

With ``first_slice`` the queue is a multilevel feedback queue: every program first runs within a short
slice (``first_slice(source, suite, seed=...)`` returns its result, or an :class:`~qkv.grading.Unfinished`
when it outgrew the slice). An unfinished program is set aside, paused or stopped, in a second line, and
runs on only when no program waits for its first slice, a slice at a time (``later_slices``: the first
time for the first of them, and so on, the last one repeated), back into the second line after each:
endless loops cost the class a first slice each, not their whole time limit, and a program arriving
while they run on waits for one slice at most. Set-aside programs run on at most ``later_concurrency``
graders at once, so that a new program finds one soon. Both lines are served fairly across clients by
the grader time each has used (see :class:`~qkv.web.runs.fair_line.FairLine`), so a client whose
programs run long, however many identities it has, is served less often in either line, and cannot
starve the others' set-aside programs.

A class behind one address. The per-client bound (``per_client``) counts only programs of learners who
had a program in line before: a learner's *first* program is never refused because classmates behind the
same address flood the line (only a full line, ``capacity``, refuses it). A client minting identities to
make every program a first one is held by the new learners an address may start
(``qkv.web.http.identity_limits``: counted at a learner's first write, which a Run is; keep that bound below
``capacity``) and, in either line, by the grader time its address has used. Signed-in learners are clients
of their own (the web API keys them by person), so for them only the one-program-at-a-time rule applies.
Who had a program in line is remembered in memory (the last ``max_owners``): after a restart, a learner's
next program is a first one again.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import enum
import math
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from qkv.grading import Unfinished
from qkv.grading.judging import judging_for
from qkv.grading.sandbox.priority import SandboxPriority, running_at
from qkv.web.runs.fair_line import FairLine, FinishRate, Job


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
        Programs one client may have waiting, a learner's first program neither counted nor refused
        (default: no bound but the whole queue's).
    first_slice : callable, optional
        ``first_slice(source, suite, seed=None)``: grade within a first slice, returning the result or an
        :class:`~qkv.grading.Unfinished` (see above). Without it every program is graded whole by ``grade``.
    later_slices : sequence of float or None
        How long a set-aside program runs each time it is taken up again (CPU seconds): the first time
        ``later_slices[0]``, the second ``later_slices[1]``, and so on, the last one repeated until the
        program ends; between two slices it goes back to the end of its client's programs in the second
        line, so that programs arriving meanwhile wait for one slice at most. None runs a program to its
        end in one go (the default, ``(None,)``).
    later_concurrency : int, optional
        Graders that may run set-aside programs at once (default: half of them, at least one); the others
        stay free for programs arriving for their first slice.
    reserved : int
        Graders beyond ``concurrency`` kept for clients with no program running (default: none). A client
        whose programs hold every grader would otherwise make a newcomer wait for one of them to end; with
        a reserved grader the newcomer's program starts at once, at normal priority, while that client's
        run in the background (``qkv.grading.sandbox.priority``). A reserved grader never runs a program
        beside another of its client's, nor a set-aside one, and its program takes no place of the wait list.

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
        later_slices: Sequence[float | None] = (None,),
        later_concurrency: int | None = None,
        reserved: int = 0,
        on_start: Callable[[float], None] | None = None,
    ) -> None:
        if concurrency < 1 or capacity < 0 or (per_client is not None and per_client < 1) or reserved < 0:
            raise ValueError(
                "A grading queue needs concurrency >= 1, capacity >= 0, per_client >= 1 and reserved >= 0, "
                f"not {concurrency}, {capacity}, {per_client} and {reserved}."
            )
        if later_concurrency is not None and not 1 <= later_concurrency <= concurrency:
            raise ValueError(
                f"later_concurrency must be from 1 to the concurrency ({concurrency}), "
                f"not {later_concurrency}."
            )
        self._grade = grade
        self._first_slice = first_slice
        self._on_start = on_start  # told each program's wait for its first run, in seconds (the metrics)
        self._later_slices = tuple(later_slices)
        self.concurrency = concurrency
        self.reserved = reserved
        self.capacity = capacity
        self.per_client = per_client if per_client is not None else concurrency + capacity
        self.later_concurrency = max(1, concurrency // 2) if later_concurrency is None else later_concurrency
        self._lock = threading.Condition()
        # Line 0: programs waiting for their first slice (or to be graded whole); line 1: programs that
        # outgrew one or more slices, waiting to run on (for the slice of the level they reached).
        self._lines = [FairLine(), FairLine()]
        self._waiting_by_owner: dict[str, Job] = {}
        self._seen_owners: OrderedDict[str, None] = OrderedDict()  # learners who had a program in line
        self.max_owners = 200_000
        self._running_owners: dict[str, Job] = {}
        self._running_by_client: Counter[str] = Counter()  # programs of each client running now
        self._running = 0
        self._running_later = 0  # programs running on from a later line
        self._closed = False
        self._mean_s = 1.0  # running estimate of one grading's duration, for Retry-After
        self._rate = FinishRate()  # the line's measured pace, for the estimate a waiting learner is shown
        self._workers = [
            threading.Thread(target=self._work, name=f"qkv-grade-{index}", daemon=True)
            for index in range(concurrency + reserved)
        ]
        for worker in self._workers:
            worker.start()

    @property
    def admitted(self) -> int:
        """Gradings running or waiting now."""
        with self._lock:
            return self._running + self._waiting_count()

    def counts(self) -> tuple[int, int]:
        """Programs ``(waiting, running)`` now, in either line."""
        with self._lock:
            return self._waiting_count(), self._running

    def _waiting_count(self) -> int:
        return sum(len(line) for line in self._lines)

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
            If ``client`` already has ``per_client`` programs waiting (an owner's first program: never).
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
                if job.level:  # the older one outgrew its slice: drop it, the newer starts afresh
                    self._lines[1].remove(job)
                    stale, job.unfinished, job.level = job.unfinished, None, 0
                    self._lines[0].push(job)
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
            if self._full(client, waiting):
                retry = max(1, math.ceil(self._mean_s * (waiting + 1) / self.concurrency))
                taken = self._running + waiting
                described = "1 program is" if taken == 1 else f"{taken} programs are"
                raise QueueFull(
                    f"The grader is busy: {described} being graded or waiting, which is all this server "
                    f"takes at once. Try again in about {retry} s.",
                    retry,
                )
            first = owner is not None and owner not in self._seen_owners
            self._check_client(client, first)
            job = Job(source, suite, owner, client, seed, first=first)
            self._rate.busy(time.monotonic())
            self._lines[0].push(job)
            if owner is not None:
                self._waiting_by_owner[owner] = job
                self._seen(owner)
            self._lock.notify()
            return job.future

    def _full(self, client: str, waiting: int) -> bool:
        """Whether the line has no place for a program of ``client`` (call with the lock held).

        A program on a reserved grader takes no place of the wait list, and a free reserved grader takes
        a client with nothing running at once.
        """
        if min(self._running, self.concurrency) + waiting < self.concurrency + self.capacity:
            return False
        reserve_free = self.concurrency <= self._running < self.concurrency + self.reserved
        return not (reserve_free and not self._running_by_client[client])

    def _check_client(self, client: str, first: bool) -> None:
        """Raise ``ClientBusy`` when ``client`` may not put this program in line (call with the lock held).

        A learner's first program is taken whatever its address holds; any other counts against the
        client's programs of learners who had one in line before, in either line.
        """
        if first:
            return
        held = sum(line.of(client, first=False) for line in self._lines)
        if held < self.per_client:
            return
        retry = max(1, math.ceil(self._mean_s * held / self.concurrency))
        waiting = "1 program" if held == 1 else f"{held} programs"
        raise ClientBusy(
            f"Your network already has {waiting} waiting to be graded, the most one address may have; try "
            f"again in about {retry} s (the lesson page does so by itself).",
            retry,
        )

    def _seen(self, owner: str) -> None:
        """Remember that ``owner`` has had a program in line (the oldest forgotten past a bound)."""
        self._seen_owners[owner] = None
        self._seen_owners.move_to_end(owner)
        while len(self._seen_owners) > self.max_owners:
            self._seen_owners.popitem(last=False)

    def position(self, owner: str) -> int | None:
        """How many programs will be graded before ``owner``'s waiting one (None: nothing of theirs waits).

        With round-robin service, that is one program of each client served before theirs in every round;
        a program that outgrew its first slice also waits for every program in line for its first.
        """
        with self._lock:
            job = self._waiting_by_owner.get(owner)
            if job is None:
                return None
            if not job.level:
                return self._lines[0].ahead_of(job, self._mean_s)
            return len(self._lines[0]) + self._lines[1].ahead_of(job, self._mean_s)

    @property
    def finish_rate(self) -> float | None:
        """Runs the line finishes per second while it has work, measured (None before the first)."""
        with self._lock:
            return self._rate.per_second

    def state(self, owner: str) -> ProgramState | None:
        """Where ``owner``'s program is now: waiting, running, or taking longer than most (None: nowhere)."""
        with self._lock:
            job = self._waiting_by_owner.get(owner) or self._running_owners.get(owner)
            if job is None:
                return None
            if job.level:
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
            self._lines[min(job.level, 1)].remove(job)
            stale, job.unfinished = job.unfinished, None
        job.future.cancel()
        if stale is not None:
            stale.discard()
        return True

    def _next_job(self) -> tuple[Job | None, list[Unfinished]]:
        """The next program to run and the set-aside ones found cancelled (call with the lock held).

        Programs waiting for their first slice come first; set-aside ones only when none waits, and on at
        most ``later_concurrency`` graders at once, so that programs arriving meanwhile find a grader.
        """
        dropped: list[Unfinished] = []
        while True:
            job, line = self._take_next()
            if job is None or line is None:
                return None, dropped
            job.charged = (line, self._mean_s)
            if job.owner is not None:
                self._waiting_by_owner.pop(job.owner, None)
            # A slice leaves the future pending (the learner may still cancel while it is set aside); a
            # run that ends with the verdict for certain (a whole program, or the rest of one) marks it
            # running.
            final = self._first_slice is None or (job.level > 0 and self._slice_at(job.level) is None)
            if final and job.future.set_running_or_notify_cancel():
                return job, dropped
            if not final and not job.future.cancelled():
                return job, dropped
            line.settle(job.client, self._mean_s, 0.0)
            if job.unfinished is not None:
                dropped.append(job.unfinished)
                job.unfinished = None

    def _take_next(self) -> tuple[Job | None, FairLine | None]:
        """The first program of the first line with one; later lines only while a grader is left for them.

        Past ``concurrency`` programs running, the ``reserved`` graders take only a first program of a
        client that has none running (see ``reserved``).
        """
        if self._running >= self.concurrency:
            job = self._lines[0].pop(self._mean_s, lambda client: not self._running_by_client[client])
            return (job, self._lines[0]) if job is not None else (None, None)
        for level, line in enumerate(self._lines):
            if level and self._running_later >= self.later_concurrency:
                break
            job = line.pop(self._mean_s)
            if job is not None:
                return job, line
        return None, None

    def _slice_at(self, level: int) -> float | None:
        """The slice a program that outgrew ``level`` (> 0) slices runs for when it is taken up again."""
        return self._later_slices[min(level, len(self._later_slices)) - 1]

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
                    priority = self._priority_for(job.client)
                    self._running_by_client[job.client] += 1
                    self._running += 1
                    self._running_later += job.level > 0
                    if job.owner is not None:
                        self._running_owners[job.owner] = job
            for stale in dropped:
                stale.discard()
            if job is None:
                return
            if self._on_start is not None and job.level == 0:
                self._on_start(time.monotonic() - job.queued_at)
            self._run(job, priority)

    def _priority_for(self, client: str) -> SandboxPriority:
        """The CPU priority of a program of ``client`` taken up now (call with the lock held).

        A client with another program running or waiting, in either line, has its programs run in the
        background of the other clients' (see ``qkv.grading.sandbox.priority``): however many learners or
        programs one client has, a client with a single program gets the cores first. Among themselves
        a client's programs share what is left as before.
        """
        held = self._running_by_client[client] + sum(line.of(client) for line in self._lines)
        return SandboxPriority.BACKGROUND if held else SandboxPriority.NORMAL

    def _run(self, job: Job, priority: SandboxPriority) -> None:
        started = time.monotonic()
        from_later = job.level > 0
        # Out of every line now: no other thread reaches this job until it is set aside again.
        pending, job.unfinished = job.unfinished, None
        # Its report is judged in its client's turn (qkv.grading.judging), its sandbox run at its priority.
        with judging_for(job.client), running_at(priority):
            outcome = self._attempt(job, pending)
        set_aside = outcome[0] and isinstance(outcome[1], Unfinished)
        # The learner's place is freed before the verdict is set: with the result in hand, they may run again.
        with self._lock:
            took_s = time.monotonic() - started
            if job.charged is not None:
                line, estimate_s = job.charged
                line.settle(job.client, estimate_s, took_s)
                job.charged = None
            self._mean_s = 0.8 * self._mean_s + 0.2 * took_s
            self._running -= 1
            self._running_later -= from_later
            self._rate.finished(time.monotonic(), bool(self._running or self._waiting_count() or set_aside))
            self._running_by_client[job.client] -= 1
            if not self._running_by_client[job.client]:
                del self._running_by_client[job.client]
            if job.owner is not None:
                self._running_owners.pop(job.owner, None)
            queued = set_aside and not job.future.cancelled() and not self._closed
            if queued:
                job.unfinished, job.level = outcome[1], job.level + 1
                self._lines[1].push(job)  # behind every program waiting for its first slice
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

    def _attempt(self, job: Job, pending: Unfinished | None) -> tuple[bool, Any]:
        """Grade the job (or its next slice): ``(True, result)``, or ``(False, the exception)``."""
        try:
            if pending is not None:
                # A set-aside program runs on a slice at a time, so that a program arriving meanwhile waits
                # for one slice at most, not for the rest of a loop's time limit.
                return True, pending.resume(self._slice_at(job.level))
            if self._first_slice is not None:
                return True, self._first_slice(job.source, job.suite, seed=job.seed)
            if job.seed is None:
                return True, self._grade(job.source, job.suite)
            return True, self._grade(job.source, job.suite, seed=job.seed)
        except BaseException as error:  # the future carries it to the request that waits
            return False, error

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
            dropped = [job for line in self._lines for job in line.drain()]
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
