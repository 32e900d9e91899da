"""The jobs of remote grading on SQLite and on PostgreSQL: fair admission, one verdict per job, lost jobs."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from qkv.store import Admission, JobState, Store
from qkv.store.sql.tables import CodeSubmission, ExerciseTotals

A, B, C, D = ("a" * 36, "b" * 36, "c" * 36, "d" * 36)
PASS = {"status": "pass", "tests": [{"status": "pass"}]}


@pytest.fixture
def store(database_url: str) -> Store:
    opened = Store(database_url)
    yield opened  # type: ignore[misc]
    opened.close()


def test_a_learner_has_one_job_a_newer_program_replaces_a_queued_one(store: Store) -> None:
    jobs = store.grading_jobs
    first = jobs.enqueue(A, "T1.1", "shapes", "x = 1\n", client="198.51.100.1")
    again = jobs.enqueue(A, "T1.1", "shapes", "x = 2\n", client="198.51.100.1")
    assert (again.admission, again.job_id) == (Admission.REPLACED, first.job_id)
    assert first.job_id is not None
    program = jobs.start(first.job_id, worker="g1")
    assert program is not None and program.source == "x = 2\n"
    running = jobs.enqueue(A, "T1.1", "shapes", "x = 3\n", client="198.51.100.1")
    assert (running.admission, running.job_id) == (Admission.RUNNING, None)


def _had_a_program(store: Store, *learners: str) -> None:
    """Give each learner a job graded before (from elsewhere), so that their next ones are not firsts."""
    for learner in learners:
        job_id = store.grading_jobs.enqueue(learner, "T1.1", "shapes", "", client="earlier").job_id
        assert job_id is not None and store.grading_jobs.start(job_id, worker="g0") is not None
        assert store.grading_jobs.fail(job_id, "Graded before the test.")


def test_the_queue_and_each_client_are_capped(store: Store) -> None:
    jobs = store.grading_jobs
    _had_a_program(store, A, B, C, D)
    assert (
        jobs.enqueue(A, "T1.1", "shapes", "", client="c1", capacity=3, per_client=2).admission
        is Admission.NEW
    )
    assert (
        jobs.enqueue(B, "T1.1", "shapes", "", client="c1", capacity=3, per_client=2).admission
        is Admission.NEW
    )
    refused = jobs.enqueue(C, "T1.1", "shapes", "", client="c1", capacity=3, per_client=2)
    assert (refused.admission, refused.client_waiting) == (Admission.CLIENT_FULL, 2)
    assert (
        jobs.enqueue(C, "T1.1", "shapes", "", client="c2", capacity=3, per_client=2).admission
        is Admission.NEW
    )
    full = jobs.enqueue(D, "T1.1", "shapes", "", client="c3", capacity=3, per_client=2)
    assert (full.admission, full.waiting) == (Admission.QUEUE_FULL, 3)


def test_a_learners_first_program_is_not_refused_by_a_flooded_address(store: Store) -> None:
    jobs = store.grading_jobs
    _had_a_program(store, A, B, C)
    for learner in (A, B):  # classmates who had programs before fill the address's share
        assert jobs.enqueue(learner, "T1.1", "shapes", "", client="school", per_client=2).job_id
    refused = jobs.enqueue(C, "T1.1", "shapes", "", client="school", per_client=2)
    assert (refused.admission, refused.client_waiting) == (Admission.CLIENT_FULL, 2)
    # A learner's first program behind the same address is taken all the same, and is not counted.
    assert jobs.enqueue(D, "T1.1", "shapes", "", client="school", per_client=2).admission is Admission.NEW
    assert jobs.enqueue(f"{9:036d}", "T1.1", "shapes", "", client="school", per_client=2).job_id
    assert jobs.enqueue(C, "T1.1", "shapes", "", client="school", per_client=2).client_waiting == 2
    # Only a full line refuses a first program.
    full = jobs.enqueue(f"{8:036d}", "T1.1", "shapes", "", client="school", capacity=4, per_client=2)
    assert full.admission is Admission.QUEUE_FULL


def test_priorities_serve_each_clients_first_program_before_any_second(store: Store) -> None:
    jobs = store.grading_jobs
    minted = [jobs.enqueue(f"{n:036d}", "T1.1", "shapes", "", client="minting") for n in range(4)]
    honest = jobs.enqueue(B, "T1.1", "shapes", "", client="honest")
    assert [job.priority for job in minted] == [0, -1, -2, -3]
    assert honest.priority == 0
    assert jobs.position(B) == 1  # behind the minting client's first only
    assert jobs.position(f"{3:036d}") == 4
    # A client holding graders has its next program go after the others' first ones.
    assert minted[0].job_id is not None
    jobs.start(minted[0].job_id, worker="g1")
    assert jobs.enqueue(C, "T1.1", "shapes", "", client="minting").priority == -4


def test_the_first_verdict_is_the_only_one_and_counts_once(store: Store) -> None:
    jobs = store.grading_jobs
    job = jobs.enqueue(A, "T1.1", "shapes", "x = 1\n", client="c").job_id
    assert job is not None
    jobs.start(job, worker="g1")
    jobs.start(job, worker="g2")  # g1 fell silent; the queue gave the job to g2
    assert jobs.finish(job, PASS) is True
    assert jobs.finish(job, {"status": "fail", "tests": [{"status": "fail"}]}) is False  # g1 came back
    view = jobs.view(job)
    assert view is not None and view.state is JobState.DONE and view.result == PASS
    with store.database.read() as conn:
        assert conn.execute(select(func.count()).select_from(CodeSubmission)).scalar() == 1
        assert conn.execute(select(ExerciseTotals.attempts)).scalar() == 1


@pytest.mark.postgres
def test_graders_finishing_one_job_at_once_write_one_verdict(postgres_url: str) -> None:
    store = Store(postgres_url)
    try:
        jobs = store.grading_jobs
        job = jobs.enqueue(A, "T1.1", "shapes", "x = 1\n", client="c").job_id
        assert job is not None
        jobs.start(job, worker="g1")
        barrier = threading.Barrier(6)
        wrote: list[bool] = []

        def finish() -> None:
            barrier.wait()
            wrote.append(jobs.finish(job, PASS))

        threads = [threading.Thread(target=finish) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert sorted(wrote) == [False] * 5 + [True]
        with store.database.read() as conn:
            assert conn.execute(select(func.count()).select_from(CodeSubmission)).scalar() == 1
    finally:
        store.close()


@pytest.mark.postgres
def test_servers_admitting_at_once_keep_one_job_per_learner_and_the_caps(postgres_url: str) -> None:
    stores = [Store(postgres_url) for _ in range(4)]
    try:
        barrier = threading.Barrier(8)
        outcomes: list[Admission] = []

        for index in range(8):  # each learner had a program before: theirs count against the address
            if index % 2 == 0 or index == 1:
                _had_a_program(stores[0], A if index % 2 else f"{index:036d}")

        def admit(index: int) -> None:
            learner = A if index % 2 else f"{index:036d}"  # half of them are one learner
            barrier.wait()
            admitted = stores[index % 4].grading_jobs.enqueue(
                learner, "T1.1", "shapes", f"x = {index}\n", client="one-nat", per_client=3
            )
            outcomes.append(admitted.admission)

        threads = [threading.Thread(target=admit, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        health = stores[0].grading_jobs.health()
        assert health.queued == 3  # the per-client cap held across the four "servers"
        assert outcomes.count(Admission.NEW) == 3
        assert (
            outcomes.count(Admission.NEW)
            + outcomes.count(Admission.REPLACED)
            + outcomes.count(Admission.CLIENT_FULL)
            == 8
        )
    finally:
        for store in stores:
            store.close()


def test_cancelled_and_lost_jobs_end_with_a_sentence_and_are_purged(store: Store) -> None:
    jobs = store.grading_jobs
    cancelled = jobs.enqueue(A, "T1.1", "shapes", "", client="c").job_id
    lost = jobs.enqueue(B, "T1.1", "shapes", "", client="c").job_id
    kept = jobs.enqueue(C, "T1.1", "shapes", "", client="c").job_id
    assert cancelled and lost and kept
    jobs.attach(kept, 7)
    assert jobs.cancel(A) == (cancelled, None)
    assert jobs.start(cancelled, worker="g1") is None  # a grader that takes it grades nothing
    assert jobs.abandon_lost([7], older_than_s=0) == 1
    lost_view = jobs.view(lost)
    assert lost_view is not None and lost_view.state is JobState.ABANDONED
    assert "run it again" in (lost_view.message or "")
    assert jobs.view(kept).state is JobState.QUEUED  # type: ignore[union-attr]
    assert jobs.purge(older_than_s=0) == 2
    assert jobs.health().queued == 1


def test_a_remote_verdict_on_the_reference_solution_is_a_solve_after_the_solution(store: Store) -> None:
    passing = {"status": "pass", "tests": [{"name": "a", "status": "pass"}]}
    for learner, copied in (("a" * 36, True), ("b" * 36, False)):
        job = store.grading_jobs.enqueue(learner, "L4.1", "code", "def f(): return 1\n", client=learner)
        assert store.grading_jobs.finish(job.job_id, passing, copies_solution=copied)
    marked = {row.learner_id: row.solved_after_solution for row in store.gradebook.rows()}
    assert marked == {"a" * 36: True, "b" * 36: False}


def test_a_program_is_kept_with_the_time_it_was_sent_not_graded(store: Store) -> None:
    """A due date judges a program by when it was sent (issue 46): a newer program that replaced a queued
    one has its own time, though it kept the job's place in line; the verdict an hour later changes neither."""
    from datetime import datetime, timedelta

    from qkv.store.sql.clock import use_clock

    sent = datetime(2030, 3, 1, 9, 0)
    with use_clock(lambda: sent):
        first = store.grading_jobs.enqueue(A, "T1.1", "shapes", "x = 1\n", client="c1").job_id
    with use_clock(lambda: sent + timedelta(minutes=5)):
        replaced = store.grading_jobs.enqueue(A, "T1.1", "shapes", "x = 2\n", client="c1").job_id
    assert replaced == first and first is not None
    with use_clock(lambda: sent + timedelta(hours=1)):
        assert store.grading_jobs.start(first, worker="g1") is not None
        assert store.grading_jobs.finish(first, PASS)
    with store.database.read() as conn:
        solved_at = conn.execute(select(ExerciseTotals.__table__.c.first_solved_at)).scalar_one()
        kept_at = conn.execute(select(CodeSubmission.__table__.c.created_at)).scalar_one()
    assert solved_at == kept_at == sent + timedelta(minutes=5)
