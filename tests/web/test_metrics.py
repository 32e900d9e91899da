"""``/metrics``: Prometheus's text format with the figures the issue names, counted from real gradings in the
sandbox; served to loopback (or the networks given) and to a bearer token, never to the world by default,
nor to a request that came through a proxy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from qkv.grading import sandbox_available
from qkv.remote_grading import QueueSubmitter
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import CORRECT_SOLUTION, SECRET, WRONG_SOLUTION, Browser

__all__ = ["postgres_admin_url", "postgres_url"]  # the store tests' PostgreSQL fixtures, used here

TOKEN = "a-metrics-token-of-some-length"
LOOPBACK = ("127.0.0.1", 40000)


def scrape(app: FastAPI) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape from loopback, by name and labels."""
    answer = TestClient(app, client=LOOPBACK).get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_the_world_is_refused_by_default_and_loopback_is_served(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    world = TestClient(app, client=("198.51.100.7", 5000)).get("/metrics")
    assert world.status_code == 403
    assert "only to the addresses --metrics-allow names" in world.text
    assert TestClient(app, client=LOOPBACK).get("/metrics").status_code == 200
    # Through a proxy on this machine every client looks like loopback: such a request is not trusted.
    proxied = TestClient(app, client=LOOPBACK).get("/metrics", headers={"X-Forwarded-For": "198.51.100.7"})
    assert proxied.status_code == 403
    assert TestClient(app, client=("::1", 5000)).get("/metrics").status_code == 200


def test_allowed_networks_and_a_bearer_token(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(metrics_allow=("192.0.2.0/24",), metrics_token=TOKEN)
    assert TestClient(app, client=("192.0.2.9", 1)).get("/metrics").status_code == 200
    assert TestClient(app, client=LOOPBACK).get("/metrics").status_code == 401  # not in the networks given
    outside = TestClient(app, client=("198.51.100.7", 1))
    refused = outside.get("/metrics")
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    wrong = outside.get("/metrics", headers={"Authorization": "Bearer not-the-token-at-all"})
    assert wrong.status_code == 401 and "not the one this server was given" in wrong.text
    assert outside.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_bad_metrics_settings_are_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError) as bad_network:
        Settings(metrics_allow=("10.0.0.300",))
    assert str(bad_network.value).startswith("'10.0.0.300' in --metrics-allow is not an address or a network")
    with pytest.raises(ValueError) as short_token:
        Settings(metrics_token="short")
    assert str(short_token.value) == "The metrics token must have at least 16 characters, but it has 5."


def test_gradings_latency_queue_and_requests_are_counted(make_app: Callable[..., FastAPI]) -> None:
    if not sandbox_available():
        pytest.skip("bubblewrap cannot start a sandbox here, so nothing is graded")
    app = make_app(warm_spares=1)
    before = scrape(app)
    learner = Browser(app).open_lesson()
    for program in (CORRECT_SOLUTION, WRONG_SOLUTION, CORRECT_SOLUTION):
        assert learner.submit_code(program).status_code == 200
    after = scrape(app)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("qkv_gradings_total", lesson="L4.1", outcome="pass") == 2
    assert grew("qkv_gradings_total", lesson="L4.1", outcome="fail") == 1
    assert grew("qkv_verdict_latency_seconds_count") == 3
    assert grew("qkv_queue_wait_seconds_count") == 3
    assert (
        grew("qkv_http_requests_total", route="/api/lessons/{lesson_id}/code", method="POST", status="200")
        == 3
    )
    assert grew("qkv_http_requests_total", route="/lessons/{lesson_id}", method="GET", status="200") == 1
    assert value(after, "qkv_programs_waiting") == 0 and value(after, "qkv_programs_running") == 0
    assert ("qkv_sandboxes_warm", ()) in after and ("qkv_sandboxes_busy", ()) in after
    assert value(after, "qkv_learners_active") == 1
    for state in ("pending", "sent", "failed"):
        assert ("qkv_lti_outbox_scores", (("state", state),)) in after
    assert ("qkv_lti_outbox_oldest_pending_age_seconds", ()) in after


def test_a_waiting_lms_score_shows_in_the_outbox_figures(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    with app.state.qkv.store.database.write() as conn:
        conn.execute(
            text(
                "INSERT INTO lti_score_outbox (learner_id, lesson_id, issuer, client_id, lineitem_url, "
                "score_json, created_at, attempts, next_attempt_at) VALUES ('l', 'L4.1', 'https://lms', 'c', "
                "'https://lms/li', '{}', '2026-01-01 00:00:00', 0, '2026-01-01 00:00:00')"
            )
        )
    samples = scrape(app)
    assert value(samples, "qkv_lti_outbox_scores", state="pending") == 1
    assert value(samples, "qkv_lti_outbox_oldest_pending_age_seconds") > 3600


def test_a_database_that_fails_is_counted(make_app: Callable[..., FastAPI], tmp_path: Path) -> None:
    app = make_app()
    before = value(scrape(app), "qkv_database_errors_total")
    learner = Browser(app).open_lesson()
    with app.state.qkv.store.database.write() as conn:
        conn.execute(text("DROP TABLE answers"))  # what a broken database does to a write: it fails
    learner.client.post(
        "/api/lessons/L4.1/answers",
        json={"exercise_id": "q", "answer": "1, 2"},
        headers={"X-CSRF-Token": learner.token},
    )
    assert value(scrape(app), "qkv_database_errors_total") - before == 1


@pytest.fixture
def remote_app(postgres_url: str) -> Iterator[FastAPI]:
    settings = Settings(database_url=postgres_url, secret_key=SECRET, remote_wait_s=0.5)
    app = create_app(settings, remote=QueueSubmitter(postgres_url, capacity=8, per_client=8))
    with TestClient(app):
        yield app


@pytest.mark.postgres
def test_remote_jobs_and_graders_seen_come_from_the_database(remote_app: FastAPI) -> None:
    learner = Browser(remote_app).open_lesson()
    assert learner.submit_code(CORRECT_SOLUTION).status_code == 202  # no grader: it waits
    samples = scrape(remote_app)
    assert value(samples, "qkv_remote_jobs", state="queued") == 1
    assert value(samples, "qkv_remote_jobs", state="done") == 0
    assert value(samples, "qkv_remote_graders_seen") == 0


@pytest.mark.parametrize(
    ("option", "sentence"),
    [
        (
            ["--metrics-allow", "10.0.0.5,not-an-address"],
            "'not-an-address' in --metrics-allow is not an address",
        ),
        (["--metrics-token", "short"], "The metrics token must have at least 16 characters, but it has 5."),
    ],
)
def test_serve_refuses_bad_metrics_options_with_a_sentence(
    option: list[str], sentence: str, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from qkv.cli.serve import serve

    database = f"sqlite:///{tmp_path / 'serve.sqlite3'}"
    result = CliRunner().invoke(serve, ["--database-url", database, "--port", "0", *option])
    assert result.exit_code == 1
    assert sentence in result.output and "Traceback" not in result.output
