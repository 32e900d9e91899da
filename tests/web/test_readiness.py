"""``/readyz``: ready only when the database is reachable and migrated, a grader is there and the LTI key is
loaded; 503 with a sentence naming what is not. ``/healthz`` stays the cheap liveness check throughout.

Local grading uses the real sandbox (the server that cannot grade, a ``qkv serve`` whose PATH has no
bubblewrap, is in ``tests/web/test_api_serve.py``); remote grading a real ``qkv grader`` process on
PostgreSQL, whose heartbeat makes the server ready.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import text

from qkv.grading import sandbox_available
from qkv.remote_grading import QueueSubmitter
from qkv.store import LATEST_VERSION
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.time_scale import scaled, wait_for
from tests.web.backend_fixtures import SECRET

__all__ = ["postgres_admin_url", "postgres_url"]  # the store tests' PostgreSQL fixtures, used here

REPO = Path(__file__).resolve().parents[2]


def _needs_the_sandbox() -> None:
    if not sandbox_available():
        pytest.skip("bubblewrap cannot start a sandbox here, so this server could not grade")


def test_a_server_that_grades_in_its_sandbox_is_ready(make_app: Callable[..., FastAPI]) -> None:
    _needs_the_sandbox()
    client = TestClient(make_app())
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json() == {"status": "ready", "checks": {"database": "ok", "grading": "ok", "lti": "ok"}}
    assert ready.headers["cache-control"] == "no-store"


def test_a_database_upgraded_by_a_newer_qkv_makes_the_server_not_ready(
    make_app: Callable[..., FastAPI],
) -> None:
    _needs_the_sandbox()
    app = make_app()
    client = TestClient(app)
    assert client.get("/readyz").status_code == 200
    with app.state.qkv.store.database.write() as conn:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": LATEST_VERSION + 1})

    refused = client.get("/readyz")
    assert refused.status_code == 503
    assert refused.json()["reasons"] == [
        f"The database has schema version {LATEST_VERSION + 1}, but this server runs version {LATEST_VERSION}; "
        "restart it (a newer qkv upgraded the database) or upgrade qkv."
    ]


def test_without_the_lti_key_the_server_is_not_ready(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    del app.state.qkv_lti  # what an app whose LTI tool never opened has
    body = TestClient(app).get("/readyz").json()
    assert body["checks"]["lti"] == (
        "The LTI tool's signing key is not loaded, so LMS launches and scores cannot be signed."
    )


@pytest.fixture
def remote_app(postgres_url: str) -> Iterator[FastAPI]:
    """The app on PostgreSQL grading remotely, with a stall limit of 5 s for graders' heartbeats."""
    settings = Settings(database_url=postgres_url, secret_key=SECRET, remote_wait_s=0.5)
    submitter = QueueSubmitter(postgres_url, capacity=8, per_client=8, stalled_after_s=5)
    app = create_app(settings, remote=submitter)
    with TestClient(app):
        yield app


@pytest.mark.postgres
@pytest.mark.timeout(180)
def test_remote_grading_is_ready_once_a_grader_sends_its_heartbeat(
    remote_app: FastAPI, postgres_url: str
) -> None:
    if shutil.which("bwrap") is None or not sandbox_available():
        pytest.skip("bubblewrap cannot start a sandbox here, so no grader can run")
    client = TestClient(remote_app)
    refused = client.get("/readyz")
    assert refused.status_code == 503
    assert refused.json()["reasons"] == [
        "No grader is alive: none has sent a heartbeat recently, so programs would wait."
    ]
    command = [sys.executable, "-m", "qkv", "grader", "--database-url", postgres_url, "--concurrency", "1"]
    command += ["--heartbeat", "1", "--stalled-after", "5", "--warm-spares", "0"]
    grader = subprocess.Popen(
        command, cwd=REPO, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for(
            lambda: client.get("/readyz").status_code == 200,
            "the grader's heartbeat to make the server ready",
            60,
        )
        assert client.get("/readyz").json()["checks"]["grading"] == "ok"
    finally:
        grader.terminate()
        grader.wait(timeout=scaled(60))


def test_readyz_answers_json_to_a_browser_too(make_app: Callable[..., FastAPI]) -> None:
    answer = TestClient(make_app()).get("/readyz", headers={"accept": "text/html"})
    assert answer.headers["content-type"].startswith("application/json")
    assert httpx.Response(200, content=answer.content).json()["status"] in {"ready", "not ready"}
