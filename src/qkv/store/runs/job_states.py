"""What a remote grading job is, as callers see it: its states (:class:`JobState`), the answer to a
program put in line (:class:`Admission`, :class:`Admitted`), the program a grader takes (:class:`Program`),
a job read back (:class:`JobView`) and the line's health (:class:`QueueHealth`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


class JobState(Enum):
    """Where a job is. ``queued`` and ``running`` are active; the others are final."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"  # a grader wrote the verdict
    FAILED = "failed"  # a grader could not grade it (the message says why)
    CANCELLED = "cancelled"  # the learner took it out of line
    ABANDONED = "abandoned"  # the job queue lost it (its server stopped before handing it over)


ACTIVE = (JobState.QUEUED.value, JobState.RUNNING.value)


class Admission(Enum):
    """What ``enqueue`` did with a program."""

    NEW = "new"  # a new job, in line
    REPLACED = "replaced"  # the learner's queued job now holds this program
    RUNNING = "running"  # refused: the learner's previous program is being graded
    QUEUE_FULL = "queue full"  # refused: ``capacity`` jobs wait already
    CLIENT_FULL = "client full"  # refused: this client has ``per_client`` jobs waiting


@dataclass(frozen=True)
class Admitted:
    """The outcome of ``enqueue``.

    Attributes
    ----------
    admission : Admission
        What happened.
    job_id : str or None
        The job that will carry the program's verdict (None when refused).
    priority : int
        The job's priority in the job queue (0 for the client's first job, -1 for its second, ...).
    waiting : int
        Jobs waiting in the whole cluster before this one was admitted.
    client_waiting : int
        Jobs of this client queued or running before this one was admitted.
    """

    admission: Admission
    job_id: str | None
    priority: int = 0
    waiting: int = 0
    client_waiting: int = 0


@dataclass(frozen=True)
class Program:
    """What a grader needs to grade a job."""

    job_id: str
    learner_id: str
    lesson_id: str
    exercise_id: str
    source: str
    attempts: int
    waited_s: float = 0.0  # from the job's arrival to this start


@dataclass(frozen=True)
class JobView:
    """A job as its learner sees it: its state and, once final, its verdict or why there is none."""

    job_id: str
    learner_id: str
    lesson_id: str
    exercise_id: str
    state: JobState
    result: dict[str, Any] | None
    kept: str | None
    message: str | None

    @property
    def final(self) -> bool:
        """Whether nothing more will happen to the job."""
        return self.state.value not in ACTIVE


@dataclass(frozen=True)
class QueueHealth:
    """The line at a glance, for an operator."""

    queued: int
    running: int
    oldest_queued_s: float | None
    verdicts_last_minute: int
    failed_last_hour: int
    abandoned_last_hour: int

    def to_dict(self) -> dict[str, Any]:
        """The figures as a JSON object."""
        return {
            "queued": self.queued,
            "running": self.running,
            "oldest_queued_s": None if self.oldest_queued_s is None else round(self.oldest_queued_s, 1),
            "verdicts_last_minute": self.verdicts_last_minute,
            "failed_last_hour": self.failed_last_hour,
            "abandoned_last_hour": self.abandoned_last_hour,
        }


__all__ = ["ACTIVE", "Admission", "Admitted", "JobState", "JobView", "Program", "QueueHealth"]
