"""``--log-format json``: every line a real ``qkv serve`` or ``qkv grader`` writes is one JSON object, each
request is one record with its id, route template, status, duration and hashed learner, and no token or
secret used in the run appears in the log (nor any 8 characters of one).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from qkv.grading import sandbox_available
from qkv.store import Store
from qkv.web.http.json_logs import JsonFormatter, hashed_learner
from tests.reliability.reliability_support import REPO, Server
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.time_scale import scaled
from tests.web.backend_fixtures import SECRET

__all__ = ["postgres_admin_url", "postgres_url"]  # the store tests' PostgreSQL fixtures, used here


def _lines(text: str) -> list[dict[str, Any]]:
    """Every line of a log as JSON (a line that is not one fails the test, naming it)."""
    records = []
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise AssertionError(f"a log line is not a JSON object: {line!r}") from None
        assert isinstance(records[-1], dict), line
        assert {"time", "level", "logger", "message"} <= records[-1].keys(), line
    return records


def _assert_absent(log: str, secrets: list[str]) -> None:
    for secret in secrets:
        pieces = {secret[start : start + 8] for start in range(len(secret) - 7)}
        leaked = sorted(piece for piece in pieces if piece in log)
        assert not leaked, f"the log holds pieces of a secret: {leaked}"


def test_a_record_is_one_json_line_and_a_token_in_it_is_redacted() -> None:
    try:
        raise ValueError("GET /lti/launch?id_token=eyJhbGciOi.payload.sig failed")
    except ValueError:
        record = logging.LogRecord(
            "qkv.web", logging.ERROR, __file__, 1, "%s", ("/sign-in?token=abc123",), None
        )
        record.exc_info = sys.exc_info()
    record.request_id, record.status = "r-1", 500
    line = JsonFormatter().format(record)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "/sign-in?token=[redacted]"
    assert (parsed["level"], parsed["logger"], parsed["request_id"], parsed["status"]) == (
        "error",
        "qkv.web",
        "r-1",
        500,
    )
    assert "id_token=[redacted]" in parsed["exception"] and "eyJhbGciOi" not in line
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", parsed["time"])


def _learner_id(client: httpx.Client) -> str:
    from itsdangerous import URLSafeSerializer

    return str(URLSafeSerializer(SECRET, salt="qkv.learner").loads(client.cookies["qkv_learner"]))


def _a_class_uses_the_server(url: str, old_form: str, instructor_token: str) -> str:
    """Pages, an answer, sign-in links of both forms, an unknown path; the learner's id."""
    with httpx.Client(base_url=url, timeout=scaled(30)) as learner:
        page = learner.get("/lessons/L4.1", headers={"x-request-id": "proxy-req-42"})
        assert page.status_code == 200 and page.headers["x-request-id"] == "proxy-req-42"
        csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert csrf is not None
        answered = learner.post(
            "/api/lessons/L4.1/answers",
            json={"exercise_id": "q", "answer": "nonsense"},
            headers={"X-CSRF-Token": csrf.group(1)},
        )
        assert answered.status_code < 500, answered.text
        assert learner.get("/nowhere/at-all").status_code == 404
        learner_id = _learner_id(learner)
    assert httpx.get(f"{url}/sign-in?token={old_form}", timeout=scaled(30)).status_code in {200, 303}
    with httpx.Client(base_url=url, timeout=scaled(30)) as teacher:
        assert teacher.post("/instructor/sign-in", data={"token": instructor_token}).status_code == 303
        assert teacher.get("/instructor/export/gradebook.csv").status_code == 200
    return learner_id


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_serve_writes_json_lines_with_each_request_and_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = f"sqlite:///{tmp_path / 'qkv.sqlite3'}"
    store = Store(database)
    try:
        old_form = store.accounts.new_sign_in_token(store.accounts.find_or_create(None, "s-1", "Ada"))
        grace, instructor_token = store.instructors.add("Grace")
        store.courses.grant_all_courses(grace.id)
    finally:
        store.close()
    monkeypatch.setenv("QKV_SECRET_KEY", SECRET)
    server = Server(database, tmp_path, "--log-format", "json", "--warm-spares", "0").start()
    try:
        learner_id = _a_class_uses_the_server(server.url, old_form, instructor_token)
    finally:
        assert server.terminate() == 0
    log = server.log_path.read_text()
    records = _lines(log)

    requests = [r for r in records if r["logger"] == "qkv.request"]
    assert {"request_id", "method", "route", "status", "duration_ms"} <= requests[0].keys()
    page = next(r for r in requests if r["request_id"] == "proxy-req-42")
    assert (page["method"], page["route"], page["status"]) == ("GET", "/lessons/{lesson_id}", 200)
    assert page["learner"] == hashed_learner(learner_id) and isinstance(page["duration_ms"], float)
    assert any(r["route"] == "/api/lessons/{lesson_id}/answers" and r["method"] == "POST" for r in requests)
    assert any(r["route"] == "(no route)" and r["status"] == 404 for r in requests)
    assert any(r["route"] == "/sign-in" for r in requests)
    assert any(
        r["logger"] == "qkv.cli" and r["message"].startswith("qkv: serving the lesson at") for r in records
    )
    assert any(r["logger"].startswith("uvicorn") for r in records)
    _assert_absent(log, [old_form, instructor_token, SECRET, learner_id])
    assert "nowhere/at-all" not in log  # a path a client made up is never written: only route templates


@pytest.mark.postgres
@pytest.mark.timeout(180)
def test_the_grader_writes_json_lines(postgres_url: str) -> None:
    if not sandbox_available():
        pytest.skip("bubblewrap cannot start a sandbox here, so qkv grader refuses to start")
    command = [sys.executable, "-m", "qkv", "grader", "--database-url", postgres_url, "--log-format", "json"]
    command += ["--concurrency", "1", "--warm-spares", "0", "--heartbeat", "1"]
    grader = subprocess.Popen(
        command, cwd=REPO, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert grader.stdout is not None
    seen = []
    for line in grader.stdout:  # waits on its own lines: the start-up ones come first
        seen.append(line)
        if "cgroup" in line or "rlimits" in line:
            break
    grader.send_signal(signal.SIGTERM)
    rest, _ = grader.communicate(timeout=scaled(60))
    records = _lines("".join(seen) + rest)
    assert any(r["message"].startswith("qkv grader ") for r in records)
    assert all(r["logger"] for r in records)
