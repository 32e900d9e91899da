"""Jobs for graders on other machines: the line of programs, each learner's one job, and the verdicts.

A web server started with ``qkv serve --grading remote`` puts each program here (``enqueue``) and hands
the job's id to the job queue; a grader takes it (``start``), grades it and writes the verdict
(``finish``). The first verdict written for a job is the only one: it is saved with the learner's
program, in the same transaction, so the program counts once in the learner's progress however many
graders finish the job (a grader thought dead may come back and finish it too).

Fairness holds across every server on the database, because it is decided here, under one lock:

- a learner has at most one job queued or running; running again while it is queued replaces the
  program (both requests get the newer program's verdict), and while it runs is refused;
- at most ``capacity`` jobs wait in the whole cluster, and at most ``per_client`` of one client (an
  address), counting only jobs of learners who had a job before: a learner's first program is never
  refused because classmates behind the same address flood the line (a client minting identities is
  held by the web server's bound on new learners per address);
- a job's priority is minus the number of jobs its client already has queued or running, so each
  client's first program goes before any client's second (round robin across clients, in the order the
  job queue serves: priority first, then arrival).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row, Table, delete, func, or_, select, text, update

from qkv.store.runs.job_states import ACTIVE, Admission, Admitted, JobState, JobView, Program, QueueHealth
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.storable import check_storable
from qkv.store.sql.tables import GradingJob
from qkv.store.work.code_work import CodeWork

_JOBS: Table = GradingJob.__table__  # type: ignore[assignment]


# Any fixed number: the PostgreSQL advisory lock under which every server admits programs to the line.
_ADMISSION_LOCK_KEY = 0x716B7667


_CLIENT_KEY_LENGTH = 64


class GradingJobs:
    """The jobs of remote grading, in the store's database.

    Parameters
    ----------
    database : Database
        The database (PostgreSQL in a cluster; SQLite works for one process, as in the examples).
    code : CodeWork
        Where a verdict's program is saved, in the same transaction as the verdict.

    Examples
    --------
    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> jobs = store.grading_jobs
    >>> admitted = jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="192.0.2.1")
    >>> admitted.admission, admitted.priority
    (<Admission.NEW: 'new'>, 0)
    >>> jobs.start(admitted.job_id, worker="grader-1").source
    'x = 1\\n'
    >>> jobs.finish(admitted.job_id, {"status": "pass", "tests": [{"status": "pass"}]})
    True
    >>> jobs.finish(admitted.job_id, {"status": "fail", "tests": []})  # a second verdict is ignored
    False
    >>> view = jobs.view(admitted.job_id)
    >>> view.state, view.result["status"], view.kept
    (<JobState.DONE: 'done'>, 'pass', 'all')
    >>> store.close()
    """

    def __init__(self, database: Database, code: CodeWork) -> None:
        self.database = database
        self.code = code

    def enqueue(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        source: str,
        *,
        client: str,
        storage_client: str | None = None,
        own_work: bool = True,
        capacity: int = 256,
        per_client: int = 64,
    ) -> Admitted:
        """Put a program in line, replace the learner's queued one, or say why not.

        Parameters
        ----------
        learner_id, lesson_id, exercise_id : str
            Whose program, for which exercise.
        source : str
            The program.
        client : str
            Whose turn it takes (the sending address; cut to 64 characters).
        storage_client : str, optional
            Whose storage budget its saving counts against (see ``CodeWork.record``).
        own_work : bool
            Whether a failing run may count as a new try (see ``CodeWork.record``).
        capacity : int
            Jobs that may wait in the whole cluster.
        per_client : int
            Jobs one client may have waiting, jobs of learners with no earlier job neither counted nor
            refused.

        Returns
        -------
        Admitted
            The job and what happened.

        Raises
        ------
        ValueError
            If the program holds a NUL or a lone surrogate, or a bound is below 1.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> first = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c")
        >>> again = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 2\\n", client="c")
        >>> again.admission, again.job_id == first.job_id
        (<Admission.REPLACED: 'replaced'>, True)
        >>> store.grading_jobs.enqueue("b" * 36, "L9.1", "shapes", "x = 3\\n", client="c").priority
        -1
        >>> store.grading_jobs.enqueue("c" * 36, "L9.1", "shapes", "", client="c", per_client=2).admission
        <Admission.NEW: 'new'>

        (two jobs of ``c`` wait, but this is the learner's first: not counted, not refused)
        >>> store.close()
        """
        check_storable(source, "The program")
        if capacity < 1 or per_client < 1:
            raise ValueError(
                f"capacity and per_client must be at least 1, but they are {capacity} and {per_client}."
            )
        client = client[:_CLIENT_KEY_LENGTH]
        now = utc_now()
        program = {
            "lesson_id": lesson_id,
            "exercise_id": exercise_id,
            "source": source,
            "own_work": own_work,
            "storage_client": storage_client,
            "sent_at": now,  # a replacement keeps the job's place in line, not its time
        }
        with self.database.write() as conn:
            _lock_admission(conn)
            self.database.ensure_learner(conn, learner_id)
            replaced = _replace_active(conn, learner_id, program)
            if replaced is not None:
                return replaced
            waiting = _count(conn, _JOBS.c.state == JobState.QUEUED.value)
            refused = _refusal(conn, learner_id, client, waiting, capacity=capacity, per_client=per_client)
            if refused is not None:
                return refused
            client_active = _count(conn, _JOBS.c.state.in_(ACTIVE), _JOBS.c.client == client)
            job_id = _insert_job(conn, learner_id, client, -client_active, program, now)
        return Admitted(Admission.NEW, job_id, -client_active, waiting, client_active)

    def attach(self, job_id: str, queue_job_id: int) -> None:
        """Record the job queue's id of the job (for the sweep that finds jobs the queue lost).

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.attach(job, 41)
        >>> store.grading_jobs.abandon_lost([41], older_than_s=0)  # the queue holds it: not lost
        0
        >>> store.close()
        """
        with self.database.write() as conn:
            conn.execute(update(_JOBS).where(_JOBS.c.id == job_id).values(queue_job_id=queue_job_id))

    def discard(self, job_id: str) -> None:
        """Delete a queued job the job queue never got, so that its learner may run again.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.discard(job)
        >>> store.grading_jobs.view(job) is None
        True
        >>> store.close()
        """
        with self.database.write() as conn:
            conn.execute(delete(_JOBS).where(_JOBS.c.id == job_id, _JOBS.c.state == JobState.QUEUED.value))

    def start(self, job_id: str, *, worker: str) -> Program | None:
        """Mark the job running on ``worker`` and return its program; None when it is final (or unknown).

        A running job may be started again: the job queue hands a job to another grader when the one that
        had it stopped sending heartbeats.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> [store.grading_jobs.start(job, worker=name).attempts for name in ("g1", "g2")]
        [1, 2]
        >>> store.close()
        """
        now = utc_now()
        with self.database.write() as conn:
            row = conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id == job_id, _JOBS.c.state.in_(ACTIVE))
                .values(
                    state=JobState.RUNNING.value,
                    attempts=_JOBS.c.attempts + 1,
                    worker=worker[:128],
                    started_at=now,
                )
                .returning(
                    _JOBS.c.learner_id,
                    _JOBS.c.lesson_id,
                    _JOBS.c.exercise_id,
                    _JOBS.c.source,
                    _JOBS.c.attempts,
                    _JOBS.c.created_at,
                )
            ).first()
        if row is None:
            return None
        waited_s = max(0.0, (now - row.created_at).total_seconds())
        return Program(
            job_id, row.learner_id, row.lesson_id, row.exercise_id, row.source, row.attempts, waited_s
        )

    def finish(
        self, job_id: str, result: Mapping[str, Any], *, tried: bool = True, copies_solution: bool = False
    ) -> bool:
        """Write the job's verdict and save the program with it, unless a verdict was written already.

        Parameters
        ----------
        job_id : str
            The job.
        result : mapping
            The grader's result document.
        tried : bool
            Whether the run was a real try (it defined the functions and ran the tests): a failed run
            counts toward the reference solution only then (and if it was the learner's own work).
        copies_solution : bool
            Whether the program is the exercise's reference solution (``CodeWork.record``).

        Returns
        -------
        bool
            True when this call wrote the verdict; False when the job was already final (another grader
            finished it, or the learner cancelled it) or is unknown.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> store.grading_jobs.finish("no-such-job", {"status": "pass", "tests": []})
        False
        >>> store.close()
        """
        document = json.dumps(result, allow_nan=False, separators=(",", ":"))
        with self.database.write() as conn:
            row = conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id == job_id, _JOBS.c.state.in_(ACTIVE))
                .values(state=JobState.DONE.value, result_json=document, finished_at=utc_now())
                .returning(
                    _JOBS.c.learner_id,
                    _JOBS.c.lesson_id,
                    _JOBS.c.exercise_id,
                    _JOBS.c.source,
                    _JOBS.c.own_work,
                    _JOBS.c.storage_client,
                    _JOBS.c.created_at,
                    _JOBS.c.sent_at,
                )
            ).first()
            if row is None:
                return False
            kept = self.code.record_in(
                conn,
                row.learner_id,
                row.lesson_id,
                row.exercise_id,
                row.source,
                result,
                own_work=row.own_work and tried,
                client=row.storage_client,
                copies_solution=copies_solution,
                submitted_at=row.sent_at or row.created_at,  # as sent, however long it waited
            )
            conn.execute(update(_JOBS).where(_JOBS.c.id == job_id).values(kept=kept.value))
        return True

    def fail(self, job_id: str, message: str) -> bool:
        """End an active job without a verdict; ``message`` tells the learner why. False if it was final.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.fail(job, "No grader knows L9.1."), store.grading_jobs.view(job).state
        (True, <JobState.FAILED: 'failed'>)
        >>> store.close()
        """
        with self.database.write() as conn:
            changed = conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id == job_id, _JOBS.c.state.in_(ACTIVE))
                .values(state=JobState.FAILED.value, message=message, finished_at=utc_now())
            ).rowcount
        return bool(changed)

    def cancel(self, learner_id: str) -> tuple[str, int | None] | None:
        """Take the learner's queued job out of line: its id and the job queue's id, or None if none waits.

        A running job is not cancelled: it ends with its own time limit.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.cancel("a" * 36) == (job, None), store.grading_jobs.cancel("a" * 36)
        (True, None)
        >>> store.close()
        """
        with self.database.write() as conn:
            row = conn.execute(
                update(_JOBS)
                .where(_JOBS.c.learner_id == learner_id, _JOBS.c.state == JobState.QUEUED.value)
                .values(
                    state=JobState.CANCELLED.value,
                    message="You cancelled this run before it was graded.",
                    finished_at=utc_now(),
                )
                .returning(_JOBS.c.id, _JOBS.c.queue_job_id)
            ).first()
        return None if row is None else (str(row.id), row.queue_job_id)

    def view(self, job_id: str) -> JobView | None:
        """The job as its learner sees it, or None when there is no such job.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> view = store.grading_jobs.view(job)
        >>> view.state, view.final, store.grading_jobs.view("no-such-job")
        (<JobState.QUEUED: 'queued'>, False, None)
        >>> store.close()
        """
        found = self.views([job_id])
        return found.get(job_id)

    def views(self, job_ids: Iterable[str]) -> dict[str, JobView]:
        """The jobs among ``job_ids`` that exist, by id (one query for all, for servers awaiting many).

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> list(store.grading_jobs.views([job, "no-such-job"])) == [job]
        True
        >>> store.close()
        """
        wanted = list(dict.fromkeys(job_ids))
        if not wanted:
            return {}
        with self.database.read() as conn:
            rows = conn.execute(
                select(
                    _JOBS.c.id,
                    _JOBS.c.learner_id,
                    _JOBS.c.lesson_id,
                    _JOBS.c.exercise_id,
                    _JOBS.c.state,
                    _JOBS.c.result_json,
                    _JOBS.c.kept,
                    _JOBS.c.message,
                ).where(_JOBS.c.id.in_(wanted))
            ).all()
        return {str(row.id): _view(row) for row in rows}

    def position(self, learner_id: str) -> int | None:
        """How many jobs the queue serves before the learner's queued one (None: nothing of theirs waits).

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> for learner, client in (("a", "c1"), ("b", "c1"), ("c", "c2")):
        ...     _ = store.grading_jobs.enqueue(learner * 36, "L9.1", "shapes", "x = 1\\n", client=client)
        >>> [store.grading_jobs.position(learner * 36) for learner in "abcd"]  # c2's first, then c1's second
        [0, 2, 1, None]
        >>> store.close()
        """
        with self.database.read() as conn:
            mine = conn.execute(
                select(_JOBS.c.priority, _JOBS.c.created_at).where(
                    _JOBS.c.learner_id == learner_id, _JOBS.c.state == JobState.QUEUED.value
                )
            ).first()
            if mine is None:
                return None
            ahead = or_(
                _JOBS.c.priority > mine.priority,
                (_JOBS.c.priority == mine.priority) & (_JOBS.c.created_at < mine.created_at),
            )
            return _count(conn, _JOBS.c.state == JobState.QUEUED.value, ahead)

    def abandon_lost(self, live_queue_ids: Iterable[int], *, older_than_s: float) -> int:
        """End the active jobs the job queue no longer holds; the number ended.

        A job is lost when the server that admitted it stopped before handing it to the job queue, or the
        queue dropped it. Only jobs older than ``older_than_s`` count, so one being handed over right now
        is left alone. ``live_queue_ids`` are the queue's jobs waiting or running.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.abandon_lost([], older_than_s=0), store.grading_jobs.view(job).state
        (1, <JobState.ABANDONED: 'abandoned'>)
        >>> store.close()
        """
        live = set(live_queue_ids)
        cutoff = utc_now() - timedelta(seconds=older_than_s)
        message = (
            "Your program was lost on its way to a grader (a server stopped while handing it over); "
            "run it again."
        )
        with self.database.write() as conn:
            rows = conn.execute(
                select(_JOBS.c.id, _JOBS.c.queue_job_id).where(
                    _JOBS.c.state.in_(ACTIVE), _JOBS.c.created_at < cutoff
                )
            ).all()
            lost = [str(row.id) for row in rows if row.queue_job_id is None or row.queue_job_id not in live]
            if not lost:
                return 0
            conn.execute(
                update(_JOBS)
                .where(_JOBS.c.id.in_(lost), _JOBS.c.state.in_(ACTIVE))
                .values(state=JobState.ABANDONED.value, message=message, finished_at=utc_now())
            )
        return len(lost)

    def purge(self, *, older_than_s: float) -> int:
        """Delete final jobs that ended over ``older_than_s`` ago (their programs are saved as progress).

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> job = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c").job_id
        >>> store.grading_jobs.fail(job, "Gone.")
        True
        >>> store.grading_jobs.purge(older_than_s=0)
        1
        >>> store.close()
        """
        cutoff = utc_now() - timedelta(seconds=older_than_s)
        with self.database.write() as conn:
            return int(
                conn.execute(
                    delete(_JOBS).where(_JOBS.c.state.not_in(ACTIVE), _JOBS.c.finished_at < cutoff)
                ).rowcount
            )

    def counts_by_state(self) -> dict[str, int]:
        """Jobs in the table by state (``queued``, ``running``, ``done``, …), every state named.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> store.grading_jobs.counts_by_state()["queued"]
        0
        >>> store.close()
        """
        with self.database.read() as conn:
            found: dict[str, int] = dict(
                conn.execute(select(_JOBS.c.state, func.count()).group_by(_JOBS.c.state)).all()
            )
        return {state.value: int(found.get(state.value, 0)) for state in JobState}

    def health(self) -> QueueHealth:
        """Jobs queued and running, the oldest wait, and recent verdicts and failures.

        Examples
        --------
        >>> from qkv.store import Store
        >>> store = Store("sqlite://")
        >>> _ = store.grading_jobs.enqueue("a" * 36, "L9.1", "shapes", "x = 1\\n", client="c")
        >>> health = store.grading_jobs.health()
        >>> health.queued, health.running, health.verdicts_last_minute
        (1, 0, 0)
        >>> store.close()
        """
        now = utc_now()
        with self.database.read() as conn:
            counts: dict[str, int] = dict(
                conn.execute(
                    select(_JOBS.c.state, func.count())
                    .where(_JOBS.c.state.in_(ACTIVE))
                    .group_by(_JOBS.c.state)
                ).all()
            )
            oldest: datetime | None = conn.execute(
                select(func.min(_JOBS.c.created_at)).where(_JOBS.c.state == JobState.QUEUED.value)
            ).scalar()
            recent = _count(
                conn, _JOBS.c.state == JobState.DONE.value, _JOBS.c.finished_at >= now - timedelta(minutes=1)
            )
            hour = now - timedelta(hours=1)
            failed = _count(conn, _JOBS.c.state == JobState.FAILED.value, _JOBS.c.finished_at >= hour)
            abandoned = _count(conn, _JOBS.c.state == JobState.ABANDONED.value, _JOBS.c.finished_at >= hour)
        return QueueHealth(
            queued=int(counts.get(JobState.QUEUED.value, 0)),
            running=int(counts.get(JobState.RUNNING.value, 0)),
            oldest_queued_s=None if oldest is None else max(0.0, (now - oldest).total_seconds()),
            verdicts_last_minute=recent,
            failed_last_hour=failed,
            abandoned_last_hour=abandoned,
        )


def _replace_active(conn: Connection, learner_id: str, program: Mapping[str, object]) -> Admitted | None:
    """The learner's active job, if any: a queued one takes ``program`` instead of its own, a running one
    stays (None: the learner has no active job)."""
    mine = conn.execute(
        select(_JOBS.c.id, _JOBS.c.state).where(_JOBS.c.learner_id == learner_id, _JOBS.c.state.in_(ACTIVE))
    ).first()
    if mine is None:
        return None
    if mine.state == JobState.RUNNING.value:
        return Admitted(Admission.RUNNING, None)
    conn.execute(update(_JOBS).where(_JOBS.c.id == mine.id).values(**program))
    return Admitted(Admission.REPLACED, mine.id)


def _refusal(
    conn: Connection, learner_id: str, client: str, waiting: int, *, capacity: int, per_client: int
) -> Admitted | None:
    """Why a new job is refused (the cluster's line full, or the client's), or None to take it."""
    if waiting >= capacity:
        return Admitted(Admission.QUEUE_FULL, None, waiting=waiting)
    if _had_a_job(conn, learner_id):  # a first program is taken whatever its client holds
        client_waiting = _count(
            conn, _JOBS.c.state == JobState.QUEUED.value, _JOBS.c.client == client, _NOT_FIRST
        )
        if client_waiting >= per_client:
            return Admitted(Admission.CLIENT_FULL, None, waiting=waiting, client_waiting=client_waiting)
    return None


def _insert_job(
    conn: Connection,
    learner_id: str,
    client: str,
    priority: int,
    program: Mapping[str, object],
    now: datetime,
) -> str:
    """A new queued job of ``program``; its id."""
    job_id = str(uuid.uuid4())
    conn.execute(
        _JOBS.insert().values(
            id=job_id,
            learner_id=learner_id,
            client=client,
            state=JobState.QUEUED.value,
            priority=priority,
            attempts=0,
            created_at=now,
            **program,
        )
    )
    return job_id


def _lock_admission(conn: Connection) -> None:
    """Serialise admissions across servers (SQLite's write transaction already does)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADMISSION_LOCK_KEY})


_EARLIER: Table = _JOBS.alias("earlier")  # type: ignore[assignment]


# A job whose learner has another job (queued, running or finished): not the learner's first program.
_NOT_FIRST = (
    select(_EARLIER.c.id)
    .where(_EARLIER.c.learner_id == _JOBS.c.learner_id, _EARLIER.c.id != _JOBS.c.id)
    .exists()
)


def _had_a_job(conn: Connection, learner_id: str) -> bool:
    """Whether the learner has a job here already (finished ones are kept until ``purge``)."""
    return (
        conn.execute(select(_JOBS.c.id).where(_JOBS.c.learner_id == learner_id).limit(1)).first() is not None
    )


def _count(conn: Connection, *where: Any) -> int:
    return int(conn.execute(select(func.count()).select_from(_JOBS).where(*where)).scalar() or 0)


def _view(row: Row[Any, Any, Any, Any, Any, Any, Any, Any]) -> JobView:
    result = json.loads(row.result_json) if row.result_json else None
    return JobView(
        job_id=str(row.id),
        learner_id=row.learner_id,
        lesson_id=row.lesson_id,
        exercise_id=row.exercise_id,
        state=JobState(row.state),
        result=result,
        kept=row.kept,
        message=row.message,
    )


__all__ = [
    "ACTIVE",
    "Admission",
    "Admitted",
    "GradingJobs",
    "JobState",
    "JobView",
    "Program",
    "QueueHealth",
]
