"""The web server's side of remote grading: admit a program, hand its job to the queue, wait for its verdict.

``QueueSubmitter`` is what ``qkv serve --grading remote`` gives ``create_app`` (the interface is
``qkv.web.runs.backend.RemoteGrading``). Admission (one job per learner, the cluster's caps, the fair
priority) is decided by ``GradingJobs.enqueue`` in the database, so it holds across every server; the job
queue (procrastinate) then serves jobs by that priority, and each learner's jobs carry a queueing lock, so
the queue itself never holds two waiting jobs of one learner either.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued, ProcrastinateException

from qkv.remote_grading.job_queue import GRADE_TASK, GRADING_QUEUE, ensure_queue_tables, queue_app
from qkv.remote_grading.verdict_watcher import VerdictWatcher
from qkv.store import Admission, Admitted, GradingJobs, JobView, Store, StoreError
from qkv.web.runs.backend import RemoteProgram
from qkv.web.runs.local_queue import AlreadyGrading, ClientBusy, QueueFull

# The figure behind Retry-After: a grading's usual length, in seconds, and the graders assumed free.
_TYPICAL_GRADING_S = 1.0


class QueueSubmitter:
    """Remote grading for one web server.

    Parameters
    ----------
    database_url : str
        The store's PostgreSQL URL (the queue lives in the same database).
    capacity : int
        Jobs that may wait in the whole cluster (``--grading-queue``).
    per_client : int
        Jobs one client address may have waiting (``--grading-per-client``).
    stalled_after_s : float
        A grader whose last heartbeat is older than this counts as gone (the health figures).

    Raises
    ------
    qkv.remote_grading.RemoteGradingError
        If the URL is not a PostgreSQL one.
    """

    description = "on remote graders (qkv grader), through the job queue in PostgreSQL"

    def __init__(
        self, database_url: str, *, capacity: int, per_client: int, stalled_after_s: float = 30.0
    ) -> None:
        if capacity < 1 or per_client < 1:
            raise ValueError(
                "With remote graders every program waits in the queue until a grader takes it, so "
                f"--grading-queue and --grading-per-client must be at least 1, not {capacity} and "
                f"{per_client}."
            )
        self.database_url = database_url
        self.capacity = capacity
        self.per_client = per_client
        self.stalled_after_s = stalled_after_s
        self._app: procrastinate.App = queue_app(database_url, max_connections=4)
        self._jobs: GradingJobs | None = None
        self._watcher: VerdictWatcher | None = None
        self._open = False
        self._rate: float | None = None  # verdicts per second lately, read at _rate_read_at (monotonic)
        self._rate_read_at: float | None = None

    @property
    def jobs(self) -> GradingJobs:
        """The store's jobs (after :meth:`start`)."""
        if self._jobs is None:
            raise RuntimeError("QueueSubmitter.start(store) has not been called yet.")
        return self._jobs

    async def start(self, store: Store) -> None:
        """Make the queue's tables if needed, connect to it, and start watching for verdicts."""
        await ensure_queue_tables(self.database_url)
        await self._app.open_async()
        self._open = True
        self._jobs = store.grading_jobs
        self._watcher = VerdictWatcher(self._jobs)
        self._watcher.start()

    async def stop(self) -> None:
        """Stop watching and disconnect."""
        if self._watcher is not None:
            await self._watcher.stop()
            self._watcher = None
        if self._open:
            await self._app.close_async()
            self._open = False

    async def submit(self, program: RemoteProgram) -> str:
        """Admit the program and hand its job to the queue; the job id.

        Raises
        ------
        qkv.web.runs.local_queue.GradingBusy
            ``AlreadyGrading`` (the learner's previous program is running), ``ClientBusy`` (this address
            has its share waiting), ``QueueFull`` (the cluster's line is full, or the queue cannot be
            reached).
        """
        try:
            admitted = await asyncio.to_thread(
                self.jobs.enqueue,
                program.learner_id,
                program.lesson_id,
                program.exercise_id,
                program.source,
                client=program.client,
                storage_client=program.storage_client,
                own_work=program.own_work,
                capacity=self.capacity,
                per_client=self.per_client,
            )
        except StoreError as error:
            raise QueueFull(
                f"Your program could not be put in line: {error} Try again in a moment.", 5
            ) from None
        _refuse_unless_admitted(admitted)
        assert admitted.job_id is not None
        if admitted.admission is Admission.REPLACED:
            return admitted.job_id
        await self._hand_over(admitted, program.learner_id)
        return admitted.job_id

    async def _hand_over(self, admitted: Admitted, learner_id: str) -> None:
        """Defer the admitted job to the queue; undo the admission if the queue will not take it."""
        assert admitted.job_id is not None
        deferrer = self._app.configure_task(
            GRADE_TASK,
            queue=GRADING_QUEUE,
            priority=admitted.priority,
            queueing_lock=f"learner:{learner_id}",
        )
        try:
            queue_job_id = await deferrer.defer_async(job=admitted.job_id)
        except AlreadyEnqueued:
            await asyncio.to_thread(self.jobs.discard, admitted.job_id)
            raise AlreadyGrading(
                "Your previous program is still waiting for a grader; wait for its results, then run again.",
                2,
            ) from None
        except ProcrastinateException as error:
            await asyncio.to_thread(self.jobs.discard, admitted.job_id)
            raise QueueFull(
                f"The grading queue could not take your program ({error}); try again in a moment.", 5
            ) from None
        await asyncio.to_thread(self.jobs.attach, admitted.job_id, queue_job_id)

    async def wait(self, job_id: str, timeout_s: float) -> JobView | None:
        """The job once a grader wrote its verdict (or it ended otherwise), or None after ``timeout_s``."""
        if self._watcher is None:
            return None
        return await self._watcher.wait(job_id, timeout_s)

    async def view(self, job_id: str) -> JobView | None:
        """The job now (None: no such job)."""
        return await asyncio.to_thread(self.jobs.view, job_id)

    async def position(self, learner_id: str) -> int | None:
        """Jobs served before the learner's queued one (None: nothing of theirs waits)."""
        return await asyncio.to_thread(self.jobs.position, learner_id)

    async def cancel(self, learner_id: str) -> bool:
        """Take the learner's queued job out of line, in the database and in the queue."""
        cancelled = await asyncio.to_thread(self.jobs.cancel, learner_id)
        if cancelled is None:
            return False
        _job_id, queue_job_id = cancelled
        if queue_job_id is not None:
            # If a grader took it meanwhile, it finds the job cancelled and grades nothing.
            await self._app.job_manager.cancel_job_by_id_async(queue_job_id)
        return True

    async def finish_rate(self) -> float | None:
        """Verdicts per second over the last minute, the cluster's graders together (None: none lately).

        Read from the database at most once a second per server, however many learners ask.
        """
        now = time.monotonic()
        if self._rate_read_at is None or now - self._rate_read_at >= 1.0:
            self._rate_read_at = now
            health = await asyncio.to_thread(self.jobs.health)
            self._rate = health.verdicts_last_minute / 60 if health.verdicts_last_minute else None
        return self._rate

    async def health(self) -> dict[str, Any]:
        """Jobs queued and running, the oldest wait, recent verdicts, and graders that sent a heartbeat."""
        figures = (await asyncio.to_thread(self.jobs.health)).to_dict()
        figures["graders_alive"] = await graders_alive(self._app, self.stalled_after_s)
        return figures


async def graders_alive(app: procrastinate.App, within_s: float) -> int:
    """Graders (procrastinate workers) whose last heartbeat is at most ``within_s`` seconds old."""
    # procrastinate keeps one row per running worker with its last heartbeat; it has no call that counts them.
    row = await app.connector.execute_query_one_async(
        "SELECT count(*) AS alive FROM procrastinate_workers "
        "WHERE last_heartbeat > now() - make_interval(secs => %(within)s)",
        within=within_s,
    )
    return int(row["alive"])


def _refuse_unless_admitted(admitted: Admitted) -> None:
    """Raise the ``GradingBusy`` that says why the program was not admitted (nothing when it was)."""
    if admitted.admission is Admission.RUNNING:
        raise AlreadyGrading(
            "Your previous program is still being graded; wait for its results, then run again.", 2
        )
    if admitted.admission is Admission.QUEUE_FULL:
        retry = _retry_after(admitted.waiting)
        raise QueueFull(
            f"The graders are busy: {admitted.waiting} programs are waiting, which is all this course takes "
            f"at once. Try again in about {retry} s.",
            retry,
        )
    if admitted.admission is Admission.CLIENT_FULL:
        retry = _retry_after(admitted.client_waiting)
        waiting = "1 program" if admitted.client_waiting == 1 else f"{admitted.client_waiting} programs"
        raise ClientBusy(
            f"Your network already has {waiting} waiting to be graded, the most one address may have; "
            f"try again in about {retry} s.",
            retry,
        )


def _retry_after(waiting: int) -> int:
    return max(1, min(60, math.ceil(waiting * _TYPICAL_GRADING_S / 4)))


__all__ = ["QueueSubmitter", "graders_alive"]
