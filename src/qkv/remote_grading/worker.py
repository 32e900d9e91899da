"""The grader's side of remote grading: take jobs from the queue, grade them in the sandbox, write verdicts.

``qkv grader`` runs one ``GraderWorker``: a procrastinate worker with ``concurrency`` gradings at once
(each in a thread driving a fresh sandbox, through the same ``Grader`` as ``qkv serve``), which sends a
heartbeat every ``heartbeat_s``. Every grader also sweeps the queue now and then, one grader at a time
(an advisory lock): a job whose grader has sent no heartbeat for ``stalled_after_s`` (killed, frozen, cut
off) goes back in line for another grader, and a job the queue no longer holds is ended with a sentence
for its learner. The first verdict written for a job is the only one (``GradingJobs.finish``), so a job
graded twice still counts once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import procrastinate
import psycopg
from procrastinate.exceptions import ProcrastinateException
from procrastinate.worker import Worker
from sqlalchemy import event
from sqlalchemy.exc import SQLAlchemyError

from qkv.grading import Grader
from qkv.grading.verdict import ran_its_tests
from qkv.lessons import Catalog, CodeExercise, LessonError
from qkv.remote_grading.job_queue import (
    GRADE_TASK,
    GRADING_QUEUE,
    RemoteGradingError,
    ensure_queue_tables,
    queue_app,
    queue_conninfo,
)
from qkv.store import Store, StoreError
from qkv.web import metrics

_log = logging.getLogger(__name__)
# Any fixed number: the advisory lock that lets one grader at a time sweep the queue.
_SWEEP_LOCK_KEY = 0x716B7673
_PURGE_EVERY_S = 300.0
_KEEP_FINISHED_S = 3600.0


def _default_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class WorkerSettings:
    """How one ``qkv grader`` process works.

    Parameters
    ----------
    database_url : str
        The store's PostgreSQL URL.
    concurrency : int
        Gradings at once (about one per core: a grading is mostly CPU).
    heartbeat_s : float
        Seconds between two heartbeats.
    stalled_after_s : float
        A grader silent this long has its running jobs given to another grader.
    name : str
        This grader's name in the jobs' rows (host and process id by default).

    Raises
    ------
    ValueError
        If a number is out of range, or the grader would count as stalled between two of its heartbeats.

    Examples
    --------
    >>> WorkerSettings("postgresql+psycopg://db/qkv", concurrency=2).sweep_every_s
    10.0
    >>> WorkerSettings("postgresql+psycopg://db/qkv", heartbeat_s=10, stalled_after_s=15)
    Traceback (most recent call last):
    ...
    ValueError: stalled_after_s (15) must be at least twice heartbeat_s (10), or a live grader would ...
    """

    database_url: str
    concurrency: int = 2
    heartbeat_s: float = 10.0
    stalled_after_s: float = 30.0
    name: str = field(default_factory=_default_name)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, but it is {self.concurrency}.")
        if not self.heartbeat_s > 0:
            raise ValueError(f"heartbeat_s must be a positive number of seconds, not {self.heartbeat_s!r}.")
        if self.stalled_after_s < 2 * self.heartbeat_s:
            raise ValueError(
                f"stalled_after_s ({self.stalled_after_s:g}) must be at least twice heartbeat_s "
                f"({self.heartbeat_s:g}), or a live grader would count as stalled."
            )

    @property
    def sweep_every_s(self) -> float:
        """Seconds between two sweeps of the queue."""
        return self.stalled_after_s / 3

    @property
    def lost_after_s(self) -> float:
        """An active job the queue does not hold is ended once it is this old."""
        return max(60.0, 2 * self.stalled_after_s)


@dataclass(frozen=True)
class SweepReport:
    """What one sweep did."""

    swept: bool  # False: another grader was sweeping
    retried: int = 0  # jobs of silent graders put back in line
    abandoned: int = 0  # jobs the queue had lost, ended with a sentence


class GraderWorker:
    """Takes grading jobs from the queue and writes their verdicts.

    Parameters
    ----------
    settings : WorkerSettings
        How it works.
    grader : Grader
        The sandboxed grader (``require_sandbox=True``: the CLI refuses to start without bubblewrap).
    store : Store
        The store on the same database (jobs, and the learners' progress the verdicts are saved in).
    catalog : Catalog
        The lessons whose suites grade the programs (the same content as the web servers').
    """

    def __init__(self, settings: WorkerSettings, *, grader: Grader, store: Store, catalog: Catalog) -> None:
        self.settings = settings
        self.grader = grader
        self.store = store
        self.catalog = catalog
        self.app: procrastinate.App = queue_app(
            settings.database_url, max_connections=settings.concurrency + 4
        )
        self.app.task(name=GRADE_TASK, queue=GRADING_QUEUE)(self.grade_job)
        self._last_purge = 0.0
        self._worker: Worker | None = None
        self._struck_off = False
        _end_frozen_transactions(store, after_s=settings.stalled_after_s)

    def grade_job(self, job: str) -> None:
        """The task: grade job ``job`` (a ``grading_jobs`` id) and write its verdict, unless it is final."""
        jobs = self.store.grading_jobs
        program = jobs.start(job, worker=self.settings.name)
        if program is None:
            _log.info("Job %s is final already (cancelled, or graded elsewhere): nothing to grade.", job)
            return
        metrics.observe_queue_wait(program.waited_s)
        started = time.monotonic()
        try:
            exercise = self._exercise(program.lesson_id, program.exercise_id)
            result = self.grader.grade(program.source, exercise.suite)
        except Exception as error:  # the learner gets a sentence, never a job stuck in "running"
            _log.exception("Job %s could not be graded", job)
            jobs.fail(job, f"The grader could not grade your program ({error}); run it again.")
            return
        # A grader frozen for long finds its session ended by PostgreSQL: its verdict is not written.
        try:
            document = result.to_dict()
            # A solve with the reference solution is a solve after it, as on the web.
            copied = exercise.exercise.solved_with_solution(program.source, document)
            written = jobs.finish(job, document, tried=ran_its_tests(document), copies_solution=copied)
        except (StoreError, SQLAlchemyError) as error:
            _log.warning(
                "Job %s: this grader's verdict was not written (%s); another grader's verdict stands, or the "
                "job goes back in line.",
                job,
                str(error).splitlines()[0],
            )
            return
        if not written:
            _log.info("Job %s was finished elsewhere first; this grader's verdict is dropped.", job)
            return
        metrics.graded(
            program.lesson_id, document.get("status"), program.waited_s + time.monotonic() - started
        )

    def _exercise(self, lesson_id: str, exercise_id: str) -> CodeExercise:
        try:
            return self.catalog.code_exercise(f"{lesson_id}/{exercise_id}")
        except LessonError as error:
            raise LookupError(f"this grader's lessons have no such exercise: {error}") from None

    async def run(self) -> None:
        """Take jobs until SIGTERM or SIGINT, then let the running gradings finish and stop.

        Raises
        ------
        RemoteGradingError
            If this grader was struck off the queue's list of graders (it was silent for longer than
            ``stalled_after_s``, and another grader starting meanwhile removed it): such a grader can take no
            job any more, so it stops, for its service manager to start it afresh.
        """
        await ensure_queue_tables(self.settings.database_url)
        async with self.app.open_async():
            self._worker = Worker(
                app=self.app,
                queues=[GRADING_QUEUE],
                name=self.settings.name,
                concurrency=self.settings.concurrency,
                update_heartbeat_interval=self.settings.heartbeat_s,
                stalled_worker_timeout=self.settings.stalled_after_s,
                delete_jobs="successful",
                install_signal_handlers=True,
            )
            sweeper = asyncio.create_task(self._sweep_forever(), name="qkv-grader-sweep")
            try:
                await self._worker.run()  # type: ignore[no-untyped-call]
            finally:
                sweeper.cancel()
        if self._struck_off:
            raise RemoteGradingError(
                f"This grader ({self.settings.name}) was struck off the grading queue's list after a "
                f"silence of more than {self.settings.stalled_after_s:g} s (it was frozen, starved of CPU or "
                "cut off), so it could take no more jobs; it stopped. Start it again (systemd does, with "
                "Restart=on-failure)."
            )

    async def _still_registered(self) -> bool:
        """Whether the queue still lists this grader (another grader's start removes silent ones)."""
        if self._worker is None or self._worker.worker_id is None:
            return True
        row = await self.app.connector.execute_query_one_async(
            "SELECT count(*) AS found FROM procrastinate_workers WHERE id = %(id)s", id=self._worker.worker_id
        )
        return bool(row["found"])

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_every_s)
            if not await self._still_registered():
                _log.error("This grader was struck off the grading queue's list of graders; it stops.")
                self._struck_off = True
                assert self._worker is not None
                self._worker.stop()  # type: ignore[no-untyped-call]
                return
            try:
                report = await self.sweep()
            except (psycopg.Error, ProcrastinateException, OSError) as error:
                _log.warning("The sweep of the grading queue failed and will be tried again: %s", error)
                continue
            if report.retried or report.abandoned:
                _log.warning(
                    "Sweep: %d job(s) of silent graders put back in line, %d lost job(s) ended.",
                    report.retried,
                    report.abandoned,
                )

    async def sweep(self) -> SweepReport:
        """Give silent graders' jobs to others and end lost jobs; one grader at a time does it.

        The lock is a transaction's, and the transaction ends itself after 10 s idle: a grader frozen
        in the middle of a sweep does not stop the others from sweeping.
        """
        conninfo = queue_conninfo(self.settings.database_url)
        async with await psycopg.AsyncConnection.connect(conninfo) as conn, conn.transaction():
            await conn.execute("SET LOCAL idle_in_transaction_session_timeout = '10s'")
            row = await (
                await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_SWEEP_LOCK_KEY,))
            ).fetchone()
            if row is None or not row[0]:
                return SweepReport(swept=False)
            retried = await self._retry_stalled()
            abandoned = await self._end_lost()
            await self._purge_now_and_then()
        return SweepReport(swept=True, retried=retried, abandoned=abandoned)

    async def _retry_stalled(self) -> int:
        manager = self.app.job_manager
        stalled = await manager.get_stalled_jobs(
            queue=GRADING_QUEUE, seconds_since_heartbeat=self.settings.stalled_after_s
        )
        retried = 0
        for job in stalled:
            try:
                await manager.retry_job(job)
            except ProcrastinateException:  # it finished meanwhile: nothing to run again
                continue
            retried += 1
        return retried

    async def _end_lost(self) -> int:
        manager = self.app.job_manager
        # Waiting ones first: a job that starts between the two reads is in the first; only this sweep
        # (under the lock) moves a job back from running to waiting.
        waiting = await manager.list_jobs_async(queue=GRADING_QUEUE, status="todo")
        running = await manager.list_jobs_async(queue=GRADING_QUEUE, status="doing")
        live = {job.id for job in waiting if job.id is not None}
        live |= {job.id for job in running if job.id is not None}
        return await asyncio.to_thread(
            self.store.grading_jobs.abandon_lost, live, older_than_s=self.settings.lost_after_s
        )

    async def _purge_now_and_then(self) -> None:
        now = time.monotonic()
        if now - self._last_purge < _PURGE_EVERY_S:
            return
        self._last_purge = now
        await asyncio.to_thread(self.store.grading_jobs.purge, older_than_s=_KEEP_FINISHED_S)
        await self.app.job_manager.delete_old_jobs(
            nb_hours=int(_KEEP_FINISHED_S // 3600) or 1,
            queue=GRADING_QUEUE,
            include_failed=True,
            include_cancelled=True,
            include_aborted=True,
        )


def _end_frozen_transactions(store: Store, *, after_s: float) -> None:
    """Have PostgreSQL end this grader's transactions that sit idle for ``after_s``.

    A grader frozen in the middle of writing a verdict would otherwise hold the job's row locked for ever,
    and the grader that takes the job over would wait on it. Set on every new connection of the store's
    pool (the ones already open are closed).
    """
    engine = store.database.engine
    if engine.dialect.name != "postgresql":
        return
    milliseconds = str(int(after_s * 1000))

    @event.listens_for(engine, "connect")
    def _bound_idle_transactions(dbapi_connection: Any, _record: object) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("SELECT set_config('idle_in_transaction_session_timeout', %s, false)", (milliseconds,))
        cursor.close()
        dbapi_connection.commit()

    engine.dispose()


__all__ = ["GraderWorker", "SweepReport", "WorkerSettings"]
