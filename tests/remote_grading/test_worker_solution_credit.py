"""A remote grader's verdict on the reference solution (retyped: its names, layout and comments changed) is a
solve after the solution was shown, as on a web server that grades itself; a program of one's own is not."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from qkv.lessons import load_catalog
from qkv.remote_grading.worker import GraderWorker, WorkerSettings
from qkv.store import Store
from tests.web.backend_fixtures import CORRECT_SOLUTION, LESSON, retyped_solution


@pytest.mark.postgres
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.timeout(120)
def test_a_remote_verdict_on_the_retyped_solution_is_marked(postgres_url: str, grader: Any) -> None:
    store = Store(postgres_url)
    try:
        worker = GraderWorker(
            WorkerSettings(postgres_url, concurrency=1), grader=grader, store=store, catalog=load_catalog()
        )
        copied, own = "a" * 36, "b" * 36
        for learner, program in ((copied, retyped_solution()), (own, CORRECT_SOLUTION)):
            job = store.grading_jobs.enqueue(learner, LESSON, "functions", program, client=learner).job_id
            worker.grade_job(job)
            view = store.grading_jobs.view(job)
            assert view is not None and view.state.value == "done", view
        marked = {row.learner_id: (row.solved, row.solved_after_solution) for row in store.gradebook.rows()}
        assert marked == {copied: (True, True), own: (True, False)}
    finally:
        store.close()
