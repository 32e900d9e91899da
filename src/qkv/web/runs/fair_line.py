"""The grading line's parts: a program in line (:class:`Job`), the line served fairly over clients by
the grader time each has used (:class:`FairLine`, start-time fair queueing), and the rate the line
finishes programs at (:class:`FinishRate`), which the place-in-line answer reads.
"""

from __future__ import annotations

import concurrent.futures
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from qkv.grading import Unfinished


@dataclass
class Job:
    """One program in line or being graded."""

    source: str
    suite: Any
    owner: str | None
    client: str
    seed: int | None = None
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    queued_at: float = field(default_factory=time.monotonic)
    unfinished: Unfinished | None = None  # while it waits to finish after outgrowing its first slice
    level: int = 0  # slices it outgrew: 0 in line for its first, n > 0 in (or running from) the later line
    first: bool = False  # its learner's first program in line: outside the per-client bound (see above)
    charged: tuple[FairLine, float] | None = None  # the line it was taken from, and the estimate charged


class FairLine:
    """Programs in line, served fairly over clients by the grader time each has used.

    Start-time fair queueing: every client has a *tag*, the grader seconds it has used (in virtual time),
    and the client with the smallest tag goes next (ties: the one in line longest). Taking a program
    charges its client an estimate at once, so that a client with many programs in line does not get
    every free grader; :meth:`settle` puts in the time the run really took. A client that joins the line
    starts at the line's *clock*, the smallest tag in line, so time unused while away is not banked.
    Round robin over clients is the case where every program takes as long: a client sending endless
    loops (each holding a grader for a whole slice) is served less often than one whose programs end in
    a few milliseconds.
    """

    def __init__(self) -> None:
        self.by_client: dict[str, deque[Job]] = {}  # client -> its programs in line, oldest first
        self.tags: dict[str, float] = {}  # client -> virtual start of its next program (while above clock)
        self.joined: dict[str, int] = {}  # client in line -> when it joined (a count), to break ties
        self.clock = 0.0
        self._joins = 0

    def __len__(self) -> int:
        return sum(len(line) for line in self.by_client.values())

    def of(self, client: str, *, first: bool | None = None) -> int:
        """How many programs ``client`` has in this line (only first programs, or only later ones)."""
        line = self.by_client.get(client, ())
        if first is None:
            return len(line)
        return sum(1 for job in line if job.first == first)

    def push(self, job: Job) -> None:
        line = self.by_client.get(job.client)
        if line is None:
            line = self.by_client[job.client] = deque()
            self.tags[job.client] = max(self.tags.get(job.client, self.clock), self.clock)
            self.joined[job.client] = self._joins
            self._joins += 1
        line.append(job)

    def pop(self, estimate_s: float, allowed: Callable[[str], bool] | None = None) -> Job | None:
        """The next program, charging its client ``estimate_s``; None when the line is empty.

        With ``allowed``, only clients it accepts are served (None when none of them has a program here).
        """
        clients = [name for name in self.by_client if allowed is None or allowed(name)]
        if not clients:
            return None
        client = min(clients, key=lambda name: (self.tags[name], self.joined[name]))
        self.clock = self.tags[client]
        self.tags[client] += estimate_s
        line = self.by_client[client]
        job = line.popleft()
        if not line:
            self._leave(client)
        self._forget_idle_clients()
        return job

    def settle(self, client: str, estimate_s: float, took_s: float) -> None:
        """Charge ``client`` what a program taken with :meth:`pop` really took instead of the estimate."""
        self.tags[client] = max(self.clock, self.tags.get(client, self.clock) + took_s - estimate_s)

    def remove(self, job: Job) -> None:
        line = self.by_client[job.client]
        line.remove(job)
        if not line:
            self._leave(job.client)

    def _leave(self, client: str) -> None:
        del self.by_client[client]
        del self.joined[client]

    def _forget_idle_clients(self) -> None:
        # A client out of line whose tag the clock has passed would rejoin at the clock anyway.
        if len(self.tags) > 2 * len(self.by_client) + 64:
            for client in [name for name, tag in self.tags.items() if name not in self.by_client]:
                if self.tags[client] <= self.clock:
                    del self.tags[client]

    def ahead_of(self, job: Job, unit_s: float) -> int:
        """Programs served before ``job`` if every program from now on took ``unit_s``.

        Client k's m-th program in line starts at ``tags[k] + m * unit_s``; those starting before
        ``job``'s (or with it, for a client in line longer) are ahead of it.
        """
        rank = self.by_client[job.client].index(job)
        start = self.tags[job.client] / unit_s + rank  # in programs
        ahead = rank
        for client, line in self.by_client.items():
            if client == job.client:
                continue
            lead = start - self.tags[client] / unit_s  # how many of its programs start first
            before = math.ceil(lead - 1e-9)
            if abs(lead - round(lead)) < 1e-9 and self.joined[client] < self.joined[job.client]:
                before = round(lead) + 1  # a tie goes to the client in line longer
            ahead += min(len(line), max(0, before))
        return ahead

    def drain(self) -> list[Job]:
        jobs = [job for line in self.by_client.values() for job in line]
        self.by_client.clear()
        self.joined.clear()
        return jobs


class FinishRate:
    """Runs the line finishes per second, exponentially weighted, measured only while it has work.

    The time between one finished run and the next is weighted into a running mean (the newest by
    ``weight``); a stretch with nothing to grade is not counted, since the line's rate is what it serves
    while learners wait. Before any run has finished the rate is unknown (None).

    Examples
    --------
    >>> rate = FinishRate(weight=0.5)
    >>> rate.per_second is None
    True
    >>> rate.busy(now=10.0)
    >>> rate.finished(now=10.5, still_busy=True)  # 0.5 s for the first run
    >>> rate.finished(now=10.75, still_busy=False)  # 0.25 s for the next: the mean is 0.375 s
    >>> round(rate.per_second, 2)
    2.67
    >>> rate.busy(now=100.0)  # an idle hour is not counted
    >>> rate.finished(now=100.375, still_busy=False)
    >>> round(rate.per_second, 2)
    2.67
    """

    def __init__(self, weight: float = 0.2) -> None:
        self.weight = weight
        self._interval_s: float | None = None  # the weighted mean time between two finished runs
        self._since: float | None = None  # the last finish, or when work came to an idle line

    def busy(self, now: float) -> None:
        """Work came in: measuring starts now unless the line is busy already."""
        if self._since is None:
            self._since = now

    def finished(self, now: float, still_busy: bool) -> None:
        """A run finished at ``now``; ``still_busy``: other programs run or wait."""
        if self._since is not None:
            took = max(now - self._since, 1e-6)
            previous = self._interval_s
            self._interval_s = took if previous is None else (1 - self.weight) * previous + self.weight * took
        self._since = now if still_busy else None

    @property
    def per_second(self) -> float | None:
        """Runs finished per second while the line had work (None before the first)."""
        return None if self._interval_s is None else 1.0 / self._interval_s
