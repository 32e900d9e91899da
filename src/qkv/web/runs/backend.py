"""Where a Run goes: the in-process grading queue (``--grading local``) or graders on other machines.

``qkv serve --grading local`` (the default, and the only choice on SQLite) grades in this server's
processes through ``qkv.web.runs.local_queue``. ``qkv serve --grading remote`` hands ``create_app`` an object
with the :class:`RemoteGrading` interface (``qkv.remote_grading.QueueSubmitter``): each program becomes a
job in PostgreSQL that a ``qkv grader`` process takes, and the verdict it writes to the database reaches the
learner through whichever server they ask. This module holds that interface and turns a job into the
API's answer; the routes call it when ``services.remote`` is set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from qkv.store import JobState, JobView, Store


@dataclass(frozen=True)
class RemoteProgram:
    """A program for a remote grader, with everything needed to save its verdict.

    Attributes
    ----------
    learner_id, lesson_id, exercise_id : str
        Whose program, for which exercise.
    source : str
        The program.
    client : str
        Whose turn it takes in the fair line (the sending address).
    storage_client : str
        Whose storage budget its saving counts against.
    own_work : bool
        Whether a failing run may count as a new try (not the exercise's starter code).
    """

    learner_id: str
    lesson_id: str
    exercise_id: str
    source: str
    client: str
    storage_client: str
    own_work: bool


class RemoteGrading(Protocol):
    """What the web server needs from remote grading (``qkv.remote_grading.QueueSubmitter`` has it)."""

    description: str  # how code is graded, for the start-up line and /healthz

    async def start(self, store: Store) -> None:
        """Connect to the job queue; jobs and verdicts live in ``store`` (called in the app's lifespan)."""

    async def stop(self) -> None:
        """Disconnect; requests still waiting for a verdict get none."""

    async def submit(self, program: RemoteProgram) -> str:
        """Put the program in line and return its job id.

        Raises ``qkv.web.runs.local_queue.GradingBusy`` (429 or 503, with ``Retry-After``) when it cannot.
        """

    async def wait(self, job_id: str, timeout_s: float) -> JobView | None:
        """The job once final, or None when ``timeout_s`` passed first (or the job does not exist)."""

    async def view(self, job_id: str) -> JobView | None:
        """The job now, final or not (None: no such job)."""

    async def position(self, learner_id: str) -> int | None:
        """Jobs served before the learner's queued one (None: nothing of theirs waits)."""

    async def cancel(self, learner_id: str) -> bool:
        """Take the learner's queued job out of line; False when none waits."""

    async def finish_rate(self) -> float | None:
        """Verdicts the cluster's graders write per second, measured lately (None: none yet)."""

    async def health(self) -> dict[str, Any]:
        """The queue at a glance: jobs queued and running, graders alive, recent verdicts."""


@dataclass(frozen=True)
class Reply:
    """The API's answer about a job: a status, a JSON body and headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str]


def pending_reply(job_id: str, state: JobState, lesson_id: str) -> Reply:
    """202: the job has no verdict yet; the body says where to ask again.

    Examples
    --------
    >>> reply = pending_reply("j1", JobState.QUEUED, "L9.1")
    >>> reply.status, reply.body["poll"]
    (202, '/api/lessons/L9.1/code/jobs/j1')
    """
    where = "is waiting for a grader" if state is JobState.QUEUED else "is being graded"
    return Reply(
        202,
        {
            "job": job_id,
            "state": state.value,
            "poll": f"/api/lessons/{lesson_id}/code/jobs/{job_id}",
            "detail": f"Your program {where}; its result will appear here.",
        },
        {"Retry-After": "1"},
    )


def place_in_line(position: int | None, state: str | None, rate: float | None) -> dict[str, Any]:
    """What ``GET .../code/queue`` answers: where the learner's program is, and when it may be done.

    ``position`` programs are served before it; its ``place`` in line is one more (1: it is next). The
    estimate is the place over the line's measured ``rate`` (runs finished per second), in seconds rounded
    up to a tenth; None while nothing waits or before the line has a measured rate.

    Examples
    --------
    >>> place_in_line(3, "waiting", 2.0)
    {'position': 3, 'place': 4, 'estimate_s': 2.0, 'state': 'waiting'}
    >>> place_in_line(0, "waiting", 1000.0)["estimate_s"]  # never 0 while it waits
    0.1
    >>> place_in_line(0, "waiting", None)
    {'position': 0, 'place': 1, 'estimate_s': None, 'state': 'waiting'}
    >>> place_in_line(None, "running", 2.0)
    {'position': None, 'place': None, 'estimate_s': None, 'state': 'running'}
    """
    place = None if position is None else position + 1
    estimate = None if place is None or not rate else math.ceil(round(place / rate * 10, 6)) / 10
    return {"position": position, "place": place, "estimate_s": estimate, "state": state}


def final_reply(view: JobView, progress: dict[str, Any] | None) -> Reply:
    """The answer for a final job: its verdict (200), or why there is none (409 or 503).

    Examples
    --------
    >>> view = JobView("j1", "a" * 36, "L9.1", "shapes", JobState.CANCELLED, None, None, "You cancelled.")
    >>> final_reply(view, None).status
    409
    """
    if view.state is JobState.DONE and view.result is not None:
        body = {"result": view.result, "progress": progress, "kept": view.kept, "job": view.job_id}
        return Reply(200, body, {})
    if view.state is JobState.CANCELLED:
        return Reply(409, {"detail": "You cancelled this run before it was graded."}, {})
    message = view.message or "Your program could not be graded; run it again."
    return Reply(503, {"detail": message, "job": view.job_id}, {"Retry-After": "1"})


__all__ = ["RemoteGrading", "RemoteProgram", "Reply", "final_reply", "pending_reply", "place_in_line"]
