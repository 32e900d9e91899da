"""Learner sign-in over HTTP: links, sessions, merging, sign-out, device links, --require-sign-in.

Each test runs the real app on a fresh SQLite file; ``Browser`` is one browser's cookie jar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from starlette.responses import Response

from qkv.web.http.learner_sessions import sign_in
from qkv.web.http.security import COOKIE_NAME, SESSION_COOKIE
from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import API, LESSON_URL, Browser

HTML = {"accept": "text/html"}
__all__ = ["postgres_admin_url", "postgres_url"]  # the store tests' PostgreSQL fixtures, used here


def _account(app: FastAPI, external_id: str = "s-1", name: str = "Ada") -> tuple[str, str]:
    accounts = app.state.qkv.store.accounts
    learner = accounts.find_or_create(None, external_id, name)
    return learner, accounts.new_sign_in_token(learner)


def _check_link(browser: Browser, token: str) -> Any:
    """What the sign-in page does with the link's fragment: its script posts the token to be checked."""
    page = browser.client.get("/sign-in", headers=HTML)
    assert page.status_code == 200 and 'data-fragment-token="submit"' in page.text
    return browser.client.post("/sign-in/check", data={"token": token}, headers=HTML)


def _use_link(browser: Browser, token: str) -> Any:
    checked = _check_link(browser, token)
    assert checked.status_code == 200 and 'action="/sign-in"' in checked.text
    used = browser.client.post("/sign-in", data={"token": token}, headers=HTML)
    if used.status_code == 200:
        browser.open_lesson()  # a fresh page: the CSRF token of the account
    return used


def _set_cookie_headers(response: Any) -> list[str]:
    return [value for name, value in response.headers.multi_items() if name == "set-cookie"]


def test_a_sign_in_link_signs_in_once_and_sets_a_lax_httponly_session_cookie(app: FastAPI) -> None:
    _, token = _account(app)
    browser = Browser(app).open_lesson()
    used = _use_link(browser, token)
    assert used.status_code == 200
    cookies = _set_cookie_headers(used)
    session = next(c for c in cookies if c.startswith(f"{SESSION_COOKIE}="))
    assert "HttpOnly" in session and "SameSite=Lax" in session and "Path=/" in session
    assert any(
        c.startswith(f"{COOKIE_NAME}=;") and "Max-Age=0" in c for c in cookies
    )  # anonymous cookie gone
    assert "You are signed in" in used.text and "Ada" in used.text
    again = Browser(app).client.post("/sign-in", data={"token": token}, headers=HTML)
    assert again.status_code == 401 and "already used, has expired or was never issued" in again.text


def test_progress_follows_the_account_to_a_second_browser(app: FastAPI) -> None:
    learner, token = _account(app)
    first = Browser(app).open_lesson()
    assert _use_link(first, token).status_code == 200
    assert first.answer("q", "3, 2").json()["feedback"]["correct"]
    second = Browser(app).open_lesson()
    assert not second.progress()["exercises"]["q"]["done"]
    token2 = app.state.qkv.store.accounts.new_sign_in_token(learner)
    assert _use_link(second, token2).status_code == 200
    assert second.progress()["exercises"]["q"]["done"]
    assert "Sign out" in second.client.get(LESSON_URL, headers=HTML).text


def test_anonymous_work_is_merged_at_sign_in_and_said_so(app: FastAPI) -> None:
    learner, token = _account(app)
    store = app.state.qkv.store
    store.progress.record_answer(learner, "L4.1", "q", "3, 1", correct=False, message="No.")
    browser = Browser(app).open_lesson()
    browser.answer("q", "3, 1")
    browser.answer("q", "3, 2")
    used = _use_link(browser, token)
    assert (
        "What you did in this browser before signing in (2 answers and 0 programs on 1 exercise)" in used.text
    )
    exercise = browser.progress()["exercises"]["q"]
    assert exercise["done"] and exercise["attempts"] == 3


def test_sign_in_rotates_the_session_and_sign_out_ends_it_everywhere(app: FastAPI) -> None:
    learner, token = _account(app)
    browser = Browser(app).open_lesson()
    _use_link(browser, token)
    before = browser.client.cookies.get(SESSION_COOKIE)
    _use_link(browser, app.state.qkv.store.accounts.new_sign_in_token(learner))
    after = browser.client.cookies.get(SESSION_COOKIE)
    assert before and after and before != after
    stale = TestClient(app, cookies={SESSION_COOKIE: before})
    assert "Sign out" not in stale.get("/", headers=HTML).text  # the old session id stopped working
    copied = TestClient(app, cookies={SESSION_COOKIE: after})
    assert "Sign out" in copied.get("/", headers=HTML).text
    out = browser.client.post("/sign-out", data={"csrf_token": browser.token}, follow_redirects=False)
    assert out.status_code == 303
    assert "Sign out" not in copied.get("/", headers=HTML).text  # ended on the server, not just in one jar


def test_sign_out_needs_the_csrf_token(app: FastAPI) -> None:
    _, token = _account(app)
    browser = Browser(app).open_lesson()
    _use_link(browser, token)
    refused = browser.client.post("/sign-out", data={"csrf_token": "forged"}, follow_redirects=False)
    assert refused.status_code == 403
    assert "Sign out" in browser.client.get("/", headers=HTML).text


def test_a_cross_site_sign_in_post_is_refused(app: FastAPI) -> None:
    _, token = _account(app)
    refused = TestClient(app).post(
        "/sign-in", data={"token": token}, headers={"sec-fetch-site": "cross-site", **HTML}
    )
    assert refused.status_code == 403
    assert Browser(app).client.post("/sign-in", data={"token": token}).status_code == 200  # not used up


def test_the_device_link_signs_in_another_browser_once(app: FastAPI) -> None:
    _, token = _account(app)
    phone, laptop = Browser(app), Browser(app).open_lesson()
    _use_link(laptop, token)
    assert laptop.answer("q", "3, 2").json()["feedback"]["correct"]
    page = laptop.client.get("/account/devices", headers=HTML)
    assert page.status_code == 200 and "Make a sign-in link" in page.text
    made = laptop.client.post("/account/devices", data={"csrf_token": laptop.token}, headers=HTML)
    assert made.status_code == 200
    link = re.search(r'<a href="(http://testserver/sign-in#token=[^"]+)">', made.text)
    assert link and 'src="data:image/svg+xml;base64,' in made.text
    device_token = link.group(1).split("token=")[1]
    assert _use_link(phone.open_lesson(), device_token).status_code == 200
    assert phone.progress()["exercises"]["q"]["done"]
    assert Browser(app).client.post("/sign-in", data={"token": device_token}).status_code == 401


def test_device_links_are_for_signed_in_learners_only(app: FastAPI) -> None:
    browser = Browser(app).open_lesson()
    assert browser.client.get("/account/devices", headers=HTML).status_code == 401
    refused = browser.client.post("/account/devices", data={"csrf_token": browser.token})
    assert refused.status_code == 401


def test_anonymous_learning_stays_the_default(app: FastAPI) -> None:
    browser = Browser(app).open_lesson()
    assert browser.answer("q", "3, 2").status_code == 200
    assert "Sign out" not in browser.client.get(LESSON_URL, headers=HTML).text


def test_require_sign_in_asks_for_it_on_pages_and_refuses_anonymous_writes(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(require_sign_in=True)
    anonymous = TestClient(app)
    for url in ("/", LESSON_URL):
        page = anonymous.get(url, headers=HTML)
        assert page.status_code == 401 and "Please sign in" in page.text
    page = anonymous.get("/docs")
    assert page.status_code == 200  # the API reference stays open
    token = re.search(r'name="csrf-token" content="([^"]+)"', anonymous.get("/sign-in", headers=HTML).text)
    assert token is not None
    write = anonymous.post(
        f"{API}/answers",
        json={"exercise_id": "q", "answer": "3, 2"},
        headers={"X-CSRF-Token": token.group(1)},
    )
    assert write.status_code == 401 and "sign in" in write.json()["detail"]
    _, link = _account(app)
    browser = Browser(app)
    assert _use_link(browser, link).status_code == 200  # the page, its check and the sign-in are open
    assert browser.answer("q", "3, 2").json()["feedback"]["correct"]


def test_sign_in_is_callable_by_another_route(make_app: Callable[..., FastAPI]) -> None:
    """The function the LTI launch uses: merge, rotate, cookies on any response."""
    app = make_app()
    learner, _ = _account(app)

    def real_launch(request: Request) -> Response:
        response = Response("launched")
        signed = sign_in(request, response, learner)
        response.headers["x-merged"] = signed.merged.sentence()
        return response

    app.add_api_route("/test-launch", real_launch, methods=["POST"])
    browser = Browser(app).open_lesson()
    browser.answer("q", "3, 2")
    launched = browser.client.post("/test-launch")
    assert launched.headers["x-merged"] == "1 answer and 0 programs on 1 exercise"
    browser.open_lesson()
    assert browser.progress()["exercises"]["q"]["done"]
    assert app.state.qkv.store.progress.lesson_activity(learner, "L4.1").exercises["q"].solved


@pytest.mark.parametrize("token", ["", "x" * 500, "not-a-token"])
def test_bad_tokens_get_a_sentence(app: FastAPI, token: str) -> None:
    response = TestClient(app).post("/sign-in", data={"token": token}, headers=HTML)
    assert response.status_code == 401 and "sign-in link" in response.text


def test_an_anonymous_sign_out_changes_nothing(app: FastAPI) -> None:
    browser = Browser(app).open_lesson()
    browser.answer("q", "3, 2")
    response = browser.client.post("/sign-out", data={"csrf_token": browser.token}, headers=HTML)
    assert response.status_code == 401 and "nothing to sign out of" in response.text
    assert not [c for c in _set_cookie_headers(response) if c.startswith(f"{COOKIE_NAME}=")]
    assert browser.progress()["exercises"]["q"]["done"]  # the anonymous learner keeps their identity


@pytest.mark.postgres
def test_two_servers_sharing_postgresql_share_the_session(
    postgres_url: str,
    make_app: Callable[..., FastAPI],  # the database first: dropped after the apps stop
) -> None:
    first, second = make_app(database_url=postgres_url), make_app(database_url=postgres_url)
    _, token = _account(first)
    browser = Browser(first).open_lesson()
    assert _use_link(browser, token).status_code == 200
    on_second = Browser(second)
    on_second.client.cookies.set(SESSION_COOKIE, browser.client.cookies[SESSION_COOKIE])
    on_second.open_lesson()
    assert on_second.answer("q", "3, 2").json()["feedback"]["correct"]  # a write on the other server
    assert browser.progress()["exercises"]["q"]["done"]
    out = browser.client.post("/sign-out", data={"csrf_token": browser.token}, follow_redirects=False)
    assert out.status_code == 303
    assert "Sign out" not in on_second.client.get("/", headers=HTML).text  # ended on both servers


def test_signed_in_learners_are_not_counted_as_new_identities(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(identities_per_address=1)
    assert Browser(app).open_lesson().answer("q", "3, 2").status_code == 200  # uses the address's one
    for external_id in ("s-1", "s-2"):
        _, token = _account(app, external_id)
        browser = Browser(app).open_lesson()
        assert _use_link(browser, token).status_code == 200
        assert browser.answer("q", "3, 2").status_code == 200


def test_secure_cookies_mark_the_session_cookie_secure(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(secure_cookies=True)
    _, token = _account(app)
    used = TestClient(app, base_url="https://testserver").post("/sign-in", data={"token": token})
    session = next(c for c in _set_cookie_headers(used) if c.startswith(f"{SESSION_COOKIE}="))
    assert session.endswith("; Secure") and "HttpOnly" in session and "SameSite=Lax" in session


def _device_link(app: FastAPI, learner: str) -> str:
    return str(app.state.qkv.store.accounts.new_device_token(learner))


def test_the_check_names_the_account_and_uses_nothing(app: FastAPI) -> None:
    _, token = _account(app, "s-1001", "Ada Lovelace")
    browser = Browser(app).open_lesson()
    checked = _check_link(browser, token)
    assert checked.status_code == 200 and checked.headers["cache-control"] == "no-store"
    assert "<h1>Sign in as Ada Lovelace (s-1001)?</h1>" in checked.text
    assert "Sign in as Ada Lovelace (s-1001)</button>" in checked.text
    assert _check_link(browser, token).status_code == 200  # checking twice uses nothing
    assert SESSION_COOKIE not in browser.client.cookies
    assert _use_link(browser, token).status_code == 200
    refused = _check_link(Browser(app), token)
    assert refused.status_code == 401 and "already used, has expired or was never issued" in refused.text
    cross_site = TestClient(app).post(
        "/sign-in/check", data={"token": token}, headers={"sec-fetch-site": "cross-site", **HTML}
    )
    assert cross_site.status_code == 403


def test_the_personal_link_says_which_account_receives_this_browsers_work(app: FastAPI) -> None:
    learner, token = _account(app, "s-1001", "Ada Lovelace")
    browser = Browser(app).open_lesson()
    browser.answer("q", "3, 2")
    checked = _check_link(browser, token)
    assert "the personal sign-in link of <strong>Ada Lovelace (s-1001)</strong>" in checked.text
    assert (
        "Anything done in this browser without signing in becomes part of the account of\n"
        "<strong>Ada Lovelace (s-1001)</strong>" in checked.text
    )
    used = _use_link(browser, token)
    assert "(1 answer and 0 programs on 1 exercise)\nis now part of your account" in used.text
    assert app.state.qkv.store.progress.lesson_activity(learner, "L4.1").exercises["q"].solved


def test_a_device_link_pressed_by_someone_else_never_takes_their_work(app: FastAPI) -> None:
    ada, token = _account(app, "s-1001", "Ada Lovelace")
    laptop = Browser(app).open_lesson()
    _use_link(laptop, token)
    device_token = _device_link(app, ada)
    stranger = Browser(app).open_lesson()
    assert stranger.answer("q", "3, 2").json()["feedback"]["correct"]  # the stranger's own, anonymous work
    checked = _check_link(stranger, device_token)
    assert "<h1>Sign in as Ada Lovelace (s-1001)?</h1>" in checked.text
    assert "made on a device signed in as <strong>Ada Lovelace (s-1001)</strong>" in checked.text
    assert "Nothing done in this browser without signing in is added to that account." in checked.text
    used = _use_link(stranger, device_token)
    assert used.status_code == 200
    assert "with a link from another device, so nothing this browser did before" in used.text
    store = app.state.qkv.store
    assert "q" not in store.progress.lesson_activity(ada, "L4.1").exercises  # nothing moved into Ada's
    assert not stranger.progress()["exercises"]["q"]["done"]


def test_a_link_of_the_old_form_is_sent_on_to_the_fragment_unused(app: FastAPI) -> None:
    _, token = _account(app)
    old = TestClient(app).get(f"/sign-in?token={token}", headers=HTML, follow_redirects=False)
    assert old.status_code == 303 and old.headers["location"] == f"/sign-in#token={token}"
    instructor_token = app.state.qkv.store.instructors.add("Grace")[1]
    old = TestClient(app).get(
        f"/instructor/sign-in?token={instructor_token}", headers=HTML, follow_redirects=False
    )
    assert old.headers["location"] == f"/instructor/sign-in#token={instructor_token}"
    assert Browser(app).client.post("/sign-in", data={"token": token}).status_code == 200  # still unused


def _signed_in_twice(app: FastAPI, other: FastAPI | None = None) -> tuple[Browser, Browser, str]:
    ada, token = _account(app)
    phone = Browser(app).open_lesson()
    _use_link(phone, token)
    laptop = Browser(other or app).open_lesson()
    laptop.client.post("/sign-in", data={"token": _device_link(app, ada)}, headers=HTML)
    laptop.open_lesson()
    return phone, laptop, ada


def test_sign_out_on_every_device_ends_every_session_of_the_learner(app: FastAPI) -> None:
    phone, laptop, ada = _signed_in_twice(app)
    pending_device_link, personal_link = _device_link(app, ada), _account(app, "s-1")[1]
    someone_else = Browser(app).open_lesson()
    _use_link(someone_else, _account(app, "s-2", "Grace")[1])
    assert "Sign out" in laptop.client.get("/", headers=HTML).text
    page = phone.client.get("/account/devices", headers=HTML).text
    assert 'action="/sign-out/everywhere"' in page and "Sign out on every device</button>" in page
    refused = phone.client.post("/sign-out/everywhere", data={"csrf_token": "forged"})
    assert refused.status_code == 403 and "Sign out" in laptop.client.get("/", headers=HTML).text
    out = phone.client.post("/sign-out/everywhere", data={"csrf_token": phone.token}, follow_redirects=False)
    assert out.status_code == 303
    for browser in (phone, laptop):
        assert "Sign out" not in browser.client.get("/", headers=HTML).text
    assert "Sign out" in someone_else.client.get("/", headers=HTML).text  # only Ada's sessions ended
    assert _check_link(Browser(app), pending_device_link).status_code == 401  # its device links too
    assert _check_link(Browser(app), personal_link).status_code == 200  # to sign back in
    again = laptop.client.post("/sign-out/everywhere", data={"csrf_token": laptop.token}, headers=HTML)
    assert again.status_code == 401 and "nothing to sign out of" in again.text


@pytest.mark.postgres
def test_sign_out_on_every_device_holds_on_every_server_sharing_postgresql(
    postgres_url: str,
    make_app: Callable[..., FastAPI],  # the database first: dropped after the apps stop
) -> None:
    first, second = make_app(database_url=postgres_url), make_app(database_url=postgres_url)
    phone, laptop, _ = _signed_in_twice(first, second)
    assert "Sign out" in laptop.client.get("/", headers=HTML).text  # signed in on the second server
    out = phone.client.post("/sign-out/everywhere", data={"csrf_token": phone.token}, follow_redirects=False)
    assert out.status_code == 303
    assert "Sign out" not in laptop.client.get("/", headers=HTML).text


def test_a_learner_cannot_take_the_name_of_another_learner(app: FastAPI) -> None:
    _account(app, "s-1001", "Ada Lovelace")
    anonymous = Browser(app).open_lesson()
    for taken in ("Ada Lovelace", "  ada   LOVELACE "):
        refused = anonymous.post("/api/learner", {"display_name": taken})
        assert refused.status_code == 409
        assert refused.json()["detail"] == (
            f"The name {' '.join(taken.split())!r} is taken by another learner of this class; choose "
            "another one (add an initial or a second name)."
        )
    assert anonymous.post("/api/learner", {"display_name": "Ada L."}).json() == {"display_name": "Ada L."}
    grace = Browser(app).open_lesson()
    _use_link(grace, _account(app, "s-1002", "Grace Hopper")[1])
    renamed = grace.post("/api/learner", {"display_name": "Ada Lovelace"})
    assert renamed.status_code == 403 and "comes from your class list or your LMS" in renamed.json()["detail"]
    page = grace.client.get("/", headers=HTML).text
    assert "Your name comes from your class list or your LMS" in page and 'id="learner-form"' not in page
    names = [record.display_name for record in app.state.qkv.store.accounts.all()]
    assert names == ["Ada Lovelace", "Grace Hopper"]
