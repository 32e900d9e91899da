"""The API with ``--grading remote`` and no grader running: 202 and where to ask, cancel, another learner's job,
the queue's health; and the same routes with local grading."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.remote_grading import QueueSubmitter
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, SECRET, Browser

__all__ = ["postgres_admin_url", "postgres_url"]  # fixtures of the store's tests, used here


@pytest.fixture
def remote_app(postgres_url: str) -> Iterator[FastAPI]:
    """The app on PostgreSQL, grading remotely, with no grader anywhere: every program waits."""
    settings = Settings(database_url=postgres_url, secret_key=SECRET, remote_wait_s=0.5)
    app = create_app(settings, remote=QueueSubmitter(postgres_url, capacity=8, per_client=8))
    with TestClient(app):  # runs the lifespan: connects to the queue
        yield app


@pytest.mark.postgres
def test_a_program_without_a_grader_is_answered_202_with_where_to_ask(remote_app: FastAPI) -> None:
    learner = Browser(remote_app).open_lesson()
    sent = learner.submit_code(CORRECT_SOLUTION)
    assert sent.status_code == 202, sent.text
    body = sent.json()
    assert (body["state"], body["poll"]) == ("queued", f"{API}/code/jobs/{body['job']}")
    assert body["detail"] == "Your program is waiting for a grader; its result will appear here."
    assert learner.client.get(body["poll"]).status_code == 202  # still nobody to grade it
    # Its place in line; no verdict written lately, so no pace to estimate its wait from.
    assert learner.client.get(f"{API}/code/queue").json() == {
        "position": 0,
        "place": 1,
        "estimate_s": None,
        "state": "waiting",
    }

    stranger = Browser(remote_app).open_lesson()
    refused = stranger.client.get(body["poll"])
    assert refused.status_code == 404
    assert refused.json()["detail"] == f"You have no grading job {body['job']!r}; run your program again."

    health = learner.client.get("/healthz/grading")
    assert health.status_code == 503
    figures = health.json()
    assert (figures["mode"], figures["status"], figures["queued"], figures["graders_alive"]) == (
        "remote",
        "no grader is alive",
        1,
        0,
    )

    again = learner.submit_code(CORRECT_SOLUTION + "\n")  # running again while it waits replaces it
    assert again.status_code == 202 and again.json()["job"] == body["job"]
    assert learner.post(f"{API}/code/cancel", {}).json() == {"cancelled": True}
    cancelled = learner.client.get(body["poll"])
    assert cancelled.status_code == 409
    assert cancelled.json() == {"detail": "You cancelled this run before it was graded."}


def test_local_grading_has_no_jobs_and_says_so(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'web.sqlite3'}", secret_key=SECRET, warm_spares=0
    )
    with TestClient(create_app(settings)) as client:
        app = client.app
        assert isinstance(app, FastAPI)
        learner = Browser(app).open_lesson()
        missing = learner.client.get(f"{API}/code/jobs/0f6b1d7e-0000-4000-8000-000000000000")
        assert missing.status_code == 404
        assert missing.json()["detail"] == (
            "This server grades programs itself: a program's result comes with the answer to its POST."
        )
        health = learner.client.get("/healthz/grading").json()
        assert health["mode"] in {"local", "off"}  # off where bubblewrap is missing


@pytest.mark.postgres
def test_with_remote_graders_the_estimate_comes_from_the_clusters_verdicts_lately(
    remote_app: FastAPI,
) -> None:
    jobs = remote_app.state.qkv.store.grading_jobs
    graded = Browser(remote_app).open_lesson()
    first = graded.submit_code(CORRECT_SOLUTION).json()["job"]
    jobs.start(first, worker="a grader of this test")
    assert jobs.finish(first, {"status": "pass", "tests": [{"status": "pass"}]}) is True  # one verdict lately
    waiting = Browser(remote_app).open_lesson()
    assert waiting.submit_code(CORRECT_SOLUTION).status_code == 202
    # One verdict in the last minute: a pace of 1/60 a second, so the next in line is done in about 60 s.
    assert waiting.client.get(f"{API}/code/queue").json() == {
        "position": 0,
        "place": 1,
        "estimate_s": 60.0,
        "state": "waiting",
    }


def test_a_remote_verdict_that_solves_nothing_sends_in_progress_to_the_lms(remote_app: FastAPI) -> None:
    # Issue 43: InProgress once something was run; a verdict from a remote grader queues the LMS score as
    # a local run does (it queued none before).
    from tests.web.backend_fixtures import learner_id_of

    learner = Browser(remote_app).open_lesson()
    learner_id = learner_id_of(learner)
    tool = remote_app.state.qkv_lti
    tool.links.remember_line_item(learner_id, "L4.1", "i", "c", "sub-1", "https://lms.invalid/li/1")
    sent = learner.submit_code(CORRECT_SOLUTION.replace("return (n_q, d_v)", "return (0, 0)"))
    assert sent.status_code == 202, sent.text
    failing = {"status": "fail", "tests": [{"name": "output_shape", "status": "fail"}]}
    assert remote_app.state.qkv.store.grading_jobs.finish(sent.json()["job"], failing)
    verdict = learner.client.get(sent.json()["poll"])
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["progress"]["done"] == 0
    documents = [entry.document for entry in tool.outbox.waiting()]
    assert [(d["scoreGiven"], d["activityProgress"]) for d in documents] == [(0, "InProgress")]
