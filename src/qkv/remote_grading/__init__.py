"""Grading on other machines: web servers put programs in a job queue in PostgreSQL, graders take them.

``qkv serve --grading remote`` hands the web app a :class:`QueueSubmitter`: each Run becomes a row in
the store's ``grading_jobs`` (admitted fairly, under one lock for the whole cluster) and a job in
procrastinate's queue in the same database. ``qkv grader`` runs a :class:`GraderWorker` on any machine:
it takes jobs, grades each program in the local sandbox with the lesson's suite, and writes the verdict
with the learner's progress in one transaction, once per job. The learner's page gets it from whichever
web server it asks. See docs/operations.md ("Graders on other machines").
"""

from qkv.remote_grading.job_queue import (
    GRADE_TASK,
    GRADING_QUEUE,
    RemoteGradingError,
    ensure_queue_tables,
    queue_app,
    queue_conninfo,
)
from qkv.remote_grading.submitter import QueueSubmitter, graders_alive
from qkv.remote_grading.verdict_watcher import VerdictWatcher
from qkv.remote_grading.worker import GraderWorker, SweepReport, WorkerSettings

__all__ = [
    "GRADE_TASK",
    "GRADING_QUEUE",
    "GraderWorker",
    "QueueSubmitter",
    "RemoteGradingError",
    "SweepReport",
    "VerdictWatcher",
    "WorkerSettings",
    "ensure_queue_tables",
    "graders_alive",
    "queue_app",
    "queue_conninfo",
]
