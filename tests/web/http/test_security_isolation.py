"""Learners stay apart: cookies are signed, ids come only from them, and writes need the learner's CSRF token."""

from __future__ import annotations

import uuid

import pytest
from fastapi import FastAPI
from itsdangerous import URLSafeSerializer

from qkv.web.http.security import COOKIE_NAME, LearnerIdentity
from tests.web.backend_fixtures import API, LESSON_URL, SECRET, Browser


def _cookie(browser: Browser) -> str:
    value = browser.client.cookies.get(COOKIE_NAME)
    assert value
    return str(value)


def _learner_id(browser: Browser) -> str:
    found = LearnerIdentity(SECRET).unsign(_cookie(browser))
    assert found
    return found


def _with_cookie(app: FastAPI, value: str) -> Browser:
    other = Browser(app)
    other.client.cookies.set(COOKIE_NAME, value)
    return other


@pytest.fixture
def alice(app: FastAPI) -> Browser:
    learner = Browser(app).open_lesson()
    assert learner.answer("q", "3, 2").json()["feedback"]["correct"] is True
    assert learner.post("/api/learner", {"display_name": "Alice"}).status_code == 200
    return learner


def test_another_learner_sees_none_of_alices_work(app: FastAPI, alice: Browser) -> None:
    bob = Browser(app).open_lesson()
    assert bob.progress()["exercises"]["q"]["status"] == "untouched"
    assert "Alice" not in bob.client.get("/").text
    assert _learner_id(bob) != _learner_id(alice)


def test_learner_ids_in_the_url_or_body_are_ignored_or_refused(app: FastAPI, alice: Browser) -> None:
    bob = Browser(app).open_lesson()
    alice_id = _learner_id(alice)
    by_query = bob.client.get(f"{API}/progress", params={"learner_id": alice_id, "learner": alice_id})
    assert by_query.json()["exercises"]["q"]["status"] == "untouched"
    by_body = bob.post(f"{API}/answers", {"exercise_id": "q", "answer": "1", "learner_id": alice_id})
    assert by_body.status_code == 422
    assert alice.progress()["exercises"]["q"]["attempts"] == 1


def test_a_forged_cookie_holding_alices_raw_id_gets_a_fresh_identity(app: FastAPI, alice: Browser) -> None:
    alice_id = _learner_id(alice)
    mallory = _with_cookie(app, alice_id)  # the bare id, unsigned
    response = mallory.client.get(f"{API}/progress")
    assert response.json()["exercises"]["q"]["status"] == "untouched"
    assert response.headers["set-cookie"].startswith(f"{COOKIE_NAME}=")  # replaced by a new learner's cookie


def test_a_cookie_signed_with_another_key_is_not_accepted(app: FastAPI, alice: Browser) -> None:
    forged = URLSafeSerializer("some-other-servers-secret-key", salt="qkv.learner").dumps(_learner_id(alice))
    mallory = _with_cookie(app, forged)
    assert mallory.progress()["exercises"]["q"]["status"] == "untouched"
    mallory.token = alice.token
    refused = mallory.answer("q", "9, 9")
    assert refused.status_code == 403
    assert alice.progress()["exercises"]["q"]["attempts"] == 1


def test_a_tampered_cookie_is_not_accepted(app: FastAPI, alice: Browser) -> None:
    cookie = _cookie(alice)
    payload, signature = cookie.rsplit(".", 1)
    other_id = str(uuid.uuid4())
    tampered = (
        URLSafeSerializer("x" * 32, salt="qkv.learner").dumps(other_id).rsplit(".", 1)[0] + "." + signature
    )
    for value in (tampered, payload + "." + signature[::-1], cookie + "x"):
        mallory = _with_cookie(app, value)
        mallory.token = alice.token
        assert mallory.answer("q", "1, 1").status_code == 403
    assert alice.progress()["exercises"]["q"]["attempts"] == 1


def test_every_state_changing_request_needs_the_csrf_header(alice: Browser) -> None:
    requests = [
        (f"{API}/answers", {"exercise_id": "q", "answer": "3, 2"}),
        (f"{API}/code", {"exercise_id": "functions", "code": "pass"}),
        (f"{API}/variant", {}),
        ("/api/learner", {"display_name": "Eve"}),
    ]
    for path, body in requests:
        missing = alice.client.post(path, json=body)
        assert missing.status_code == 403, path
        assert missing.json() == {
            "detail": "This request has no X-CSRF-Token header; state-changing requests must send the token "
            "from the page's csrf-token meta tag."
        }
        wrong = alice.client.post(path, json=body, headers={"X-CSRF-Token": "0" * 64})
        assert wrong.status_code == 403, path
        assert wrong.json() == {
            "detail": "The X-CSRF-Token header does not match this browser's learner; reload the page and try again."
        }
    assert alice.progress()["exercises"]["q"]["attempts"] == 1
    assert alice.progress()["variant_seed"] is None


def test_bobs_token_does_not_work_with_alices_cookie(app: FastAPI, alice: Browser) -> None:
    bob = Browser(app).open_lesson()
    assert bob.token != alice.token
    response = alice.client.post(
        f"{API}/answers", json={"exercise_id": "q", "answer": "0, 0"}, headers={"X-CSRF-Token": bob.token}
    )
    assert response.status_code == 403


def test_a_request_without_any_cookie_cannot_write(app: FastAPI) -> None:
    stranger = Browser(app)
    response = stranger.client.post(
        f"{API}/answers", json={"exercise_id": "q", "answer": "3, 2"}, headers={"X-CSRF-Token": "a" * 64}
    )
    assert response.status_code == 403
    assert response.json()["detail"].startswith("This request carries no valid learner cookie")


def test_the_cookie_is_http_only_same_site_lax_and_optionally_secure(make_app: object) -> None:
    plain = LearnerIdentity(SECRET).cookie_header(str(uuid.uuid4())).decode()
    assert "; HttpOnly" in plain and "; SameSite=Lax" in plain and "Secure" not in plain
    secure = LearnerIdentity(SECRET, secure=True).cookie_header(str(uuid.uuid4())).decode()
    assert secure.endswith("; Secure")


def test_two_servers_on_one_database_share_the_cookie_key(make_app: object, tmp_path: object) -> None:
    make = make_app  # type: ignore[assignment]
    first = make(secret_key=None)  # type: ignore[operator]
    second = make(secret_key=None)  # type: ignore[operator]
    learner = Browser(first).open_lesson()
    learner.answer("q", "3, 2")
    moved = _with_cookie(second, _cookie(learner))
    moved.token = learner.token
    assert moved.progress()["exercises"]["q"]["status"] == "correct"
    assert moved.answer("k", "2, 1").status_code == 200
    assert "set-cookie" not in moved.client.get(LESSON_URL).headers
