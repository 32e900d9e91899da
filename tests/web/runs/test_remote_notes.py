"""An instructor's note reaches a program graded by a remote grader (``qkv serve --grading remote``): the
verdict a grader writes carries the behaviour signatures, and the server that answers the learner's poll
puts the note first, whichever server or grader it is."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading import sandbox_available
from qkv.lessons import load_catalog
from qkv.remote_grading import QueueSubmitter
from qkv.remote_grading.worker import GraderWorker, WorkerSettings
from qkv.store import EVERYONE
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.class_mistakes import EXERCISE, FUNCTION, LESSON, OTHERS, STYLES
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import SECRET, Browser

__all__ = ["postgres_admin_url", "postgres_url"]  # fixtures of the store's tests, used here


def _graded(app: FastAPI, worker: GraderWorker, program: str) -> dict[str, Any]:
    """A new learner's program, handed to the queue, graded by the worker, and read back by polling."""
    learner = Browser(app, LESSON).open_lesson()
    sent = learner.submit_code(program, EXERCISE)
    assert sent.status_code == 202, sent.text
    worker.grade_job(sent.json()["job"])
    done = learner.client.get(sent.json()["poll"])
    assert done.status_code == 200, done.text
    result: dict[str, Any] = done.json()["result"]
    return result


@pytest.mark.postgres
@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is needed to grade programs")
def test_a_remote_verdict_gets_the_note_of_its_behaviour_only(postgres_url: str, grader: Any) -> None:
    settings = Settings(database_url=postgres_url, secret_key=SECRET, remote_wait_s=0.1)
    app = create_app(settings, remote=QueueSubmitter(postgres_url, capacity=8, per_client=8))
    with TestClient(app):
        store = app.state.qkv.store
        worker = GraderWorker(
            WorkerSettings(postgres_url), grader=grader, store=store, catalog=load_catalog()
        )
        first = [_graded(app, worker, program) for program in STYLES[:4]]
        assert len({result["signatures"][FUNCTION] for result in first}) == 1
        group = store.mistakes.groups(EVERYONE, "")[0]
        assert (group.learners, group.function) == (4, FUNCTION)
        store.mistakes.name("", group.id, "Divide by √d_k alone.", by="Grace")
        noted = _graded(app, worker, STYLES[4])
        assert next(test["note"] for test in noted["tests"] if test.get("note")) == "Divide by √d_k alone."
        other = _graded(app, worker, OTHERS[0])
        assert not [test for test in other["tests"] if test.get("note")]
