"""The load script's own parts, without a server: targets, Retry-After, percentiles and the verdict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from types import ModuleType

import httpx
import pytest


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000", "http://localhost:9/", "http://[::1]:8000", "https://127.0.0.2"]
)
def test_loopback_targets_are_accepted(load_script: ModuleType, url: str) -> None:
    assert load_script.check_loopback(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["http://10.0.0.1:8000", "http://example.com", "http://0.0.0.0:8000"])
def test_anything_but_loopback_is_refused(load_script: ModuleType, url: str) -> None:
    with pytest.raises(load_script.LoadError) as caught:
        load_script.check_loopback(url)
    assert str(caught.value) == (
        f"The target {url!r} is not on a loopback address; the load script only targets this machine."
    )


def test_a_target_that_is_not_a_url_is_refused(load_script: ModuleType) -> None:
    with pytest.raises(
        load_script.LoadError, match=r"^The target 'ftp://127.0.0.1' is not an http:// or https:// URL"
    ):
        load_script.check_loopback("ftp://127.0.0.1")


def test_main_refuses_a_remote_target_without_sending_anything(
    load_script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load_script.main(["--url", "http://192.0.2.7:8000", "--learners", "1"]) == 2
    assert capsys.readouterr().err == (
        "load: The target 'http://192.0.2.7:8000' is not on a loopback address; "
        "the load script only targets this machine.\n"
    )


def test_retry_after_is_read_as_seconds_or_as_a_date(load_script: ModuleType) -> None:
    wait = load_script._retry_after_seconds
    assert wait("3") == 3.0
    assert wait("0.5") == 0.5
    assert wait(None) == 1.0
    assert wait("soon") == 1.0
    in_ten = format_datetime(datetime.now(UTC) + timedelta(seconds=10), usegmt=True)
    assert 8.0 <= wait(in_ten) <= 10.0


def test_percentiles_are_nearest_rank(load_script: ModuleType) -> None:
    report = load_script.LoadReport(learners=1, base_urls=["http://127.0.0.1:1"])
    for ms in range(1, 101):
        report.record("POST code", ms / 1000)
    p = report.percentiles("POST code")
    assert (p["n"], p["p50"], p["p95"], p["p99"], p["max"]) == (100, 0.05, 0.095, 0.099, 0.1)
    assert report.percentiles("GET page") == {}


def test_the_verdict_names_every_missed_target(load_script: ModuleType) -> None:
    report = load_script.LoadReport(learners=3, base_urls=["http://127.0.0.1:1"])
    report.finished_learners = 2
    report.errors.append("learner 0: POST /api/x answered 500")
    report.lost_writes.append("learner 1: q last answer is None")
    report.record("POST code: correct", 4.5)
    report.record("POST code: loop", 10.0)  # stopped at the grader's time limit: not part of the target
    assert report.misses(3.0) == [
        "1 requests failed with something other than a 503.",
        "1 acknowledged writes were missing when read back.",
        "Only 2 of 3 learners finished the lesson.",
        "Grading p99 was 4.50 s, above the target of 3 s (programs that end before the grader's time limit).",
    ]
    clean = load_script.LoadReport(learners=1, base_urls=["http://127.0.0.1:1"])
    clean.finished_learners = 1
    clean.record("POST code: memory hog", 0.8)
    clean.record("POST code: loop", 10.0)
    assert clean.misses(3.0) == []


def test_the_expected_projection_is_written_like_a_learner_types_it(load_script: ModuleType) -> None:
    assert load_script._vector_text([1, 2], [[1, 0], [1, 1]]) == "[3, 2]"
    assert load_script._vector_text([1, 2], [[2, 0], [0, 2]]) == "[2, 4]"
    assert load_script._vector_text([0.5, -1], [[1, 0], [1, 1]]) == "[-0.5, -1]"


def test_a_busy_answer_must_say_when_and_why(load_script: ModuleType) -> None:
    problem = load_script._busy_answer_problem
    good = httpx.Response(
        503, headers={"Retry-After": "3"}, json={"detail": "The grader is busy; try again."}
    )
    assert problem(good) is None
    no_header = httpx.Response(503, json={"detail": "The grader is busy."})
    assert problem(no_header) == "a 503 came without a Retry-After header."
    no_sentence = httpx.Response(503, headers={"Retry-After": "3"}, text="busy")
    assert problem(no_sentence) == "a 503 came without a sentence in 'detail': 'busy'."


def test_learners_drop_idle_connections_before_the_server_closes_them(load_script: ModuleType) -> None:
    # qkv serve keeps uvicorn's keep-alive; a client that reused a connection as long as the server kept
    # it could send a request just as the server closed it (a ReadError, seen once in CI).
    import uvicorn

    server_keep_alive = uvicorn.Config("qkv.web.app:app").timeout_keep_alive
    assert server_keep_alive > load_script.KEEPALIVE_SECONDS
