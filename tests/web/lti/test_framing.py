"""Framed by the LMS: only a registered platform's origin may frame the LTI pages, every other page stays
unframeable; a login without qkv's cookie is tied to the browser through the LMS's postMessage storage
(the proof taken only from qkv's own page), and a framed launch opens qkv, signed in, in a new window.

The postMessage exchange itself runs in Chromium (test_browser_lms_e2e.py); here each request is the one a
browser would send after it."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import httpx

from tests.web.lti.fake_platform import FakePlatform, posted_form_fields
from tests.web.lti.launching import LmsBrowser


def _attr(page: httpx.Response, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', page.text)
    assert found, f"no {name} in {page.text[:400]}"
    return unescape(found.group(1))


def _storage_login(browser: LmsBrowser, platform: FakePlatform, url: str) -> tuple[str, str, str]:
    """A login in a frame whose cookie is dropped: the page, then the LMS's auth answer (id_token, state)."""
    login = browser.client.get(
        platform.login_url(f"{url}/lessons/L4.1", "learner-1", storage_target="_parent")
    )
    assert login.status_code == 200, login.text
    assert _attr(login, "data-mode") == "put" and _attr(login, "data-origin") == platform.url
    assert _attr(login, "data-key") == "state_" + _attr(login, "data-value")
    assert f"frame-ancestors {platform.url}" in login.headers["content-security-policy"]
    assert "x-frame-options" not in login.headers
    assert "Open qkv in a new window" in login.text  # the fallback, shown when the LMS does not answer
    browser.client.cookies.clear()  # the browser kept none of qkv's cookies in the LMS's frame
    auth = browser.client.get(_attr(login, "data-next"))
    fields = posted_form_fields(auth.text)
    return fields["id_token"], fields["state"], _attr(login, "data-value")


def test_a_login_without_cookies_is_tied_to_the_browser_by_the_lms_storage(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    id_token, state, stored = _storage_login(lms_browser, platform, url)
    assert state == stored
    first = lms_browser.client.post(f"{url}/lti/launch", data={"id_token": id_token, "state": state})
    assert first.status_code == 200 and _attr(first, "data-mode") == "get"
    assert _attr(first, "data-key") == f"state_{state}" and 'id="lti-storage-launch"' in first.text
    assert f"frame-ancestors {platform.url}" in first.headers["content-security-policy"]
    proof = {"id_token": id_token, "state": state, "storage_value": state}
    forged = lms_browser.client.post(
        f"{url}/lti/launch", data=proof, headers={"origin": "http://evil.example"}
    )
    assert forged.status_code == 401 and "posted by qkv's own page" in forged.text
    wrong = lms_browser.client.post(
        f"{url}/lti/launch", data={**proof, "storage_value": "another"}, headers={"origin": url}
    )
    assert wrong.status_code == 401 and "does not hold this sign-in's state" in wrong.text
    launched = lms_browser.client.post(f"{url}/lti/launch", data=proof, headers={"origin": url})
    assert launched.status_code == 200, launched.text
    assert 'action="/lti/continue" target="_blank"' in launched.text
    ticket = {"ticket": _attr(launched, 'name="ticket" value')}
    stranger = LmsBrowser(url)
    elsewhere = stranger.client.post(
        f"{url}/lti/continue", data=ticket, headers={"origin": "http://evil.example"}
    )
    assert elsewhere.status_code == 403
    opened = stranger.client.post(f"{url}/lti/continue", data=ticket, headers={"origin": url})
    assert opened.status_code == 303 and opened.headers["location"] == "/lessons/L4.1"
    lesson = stranger.client.get(f"{url}/lessons/L4.1")
    assert "Ada Lovelace" in lesson.text  # the new window is signed in
    again = stranger.client.post(f"{url}/lti/continue", data=ticket, headers={"origin": url})
    assert again.status_code == 400 and "used already" in again.text
    stranger.close()


def test_a_framed_launch_with_cookies_opens_in_a_new_window(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    login = lms_browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    auth = lms_browser.client.get(login.auth_url)
    fields = posted_form_fields(auth.text)
    framed = lms_browser.client.post(f"{url}/lti/launch", data=fields, headers={"sec-fetch-dest": "iframe"})
    assert framed.status_code == 200 and "Open the lesson in a new window" in framed.text
    assert f"frame-ancestors {platform.url}" in framed.headers["content-security-policy"]


def test_only_the_lti_pages_may_be_framed_and_only_by_their_platform(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    app.state.qkv_lti.platforms.add(
        "https://other-lms.example", "c9", ["d9"], "https://other-lms.example/auth", "https://t", "https://j"
    )
    login = lms_browser.client.get(platform.login_url(f"{url}/lessons/L4.1", "learner-1"))
    csp = login.headers["content-security-policy"]
    assert f"frame-ancestors {platform.url}" in csp and "other-lms.example" not in csp
    lesson = lms_browser.open(lms_browser.launch(platform, f"{url}/lessons/L4.1", "learner-1"))
    for page in (lesson, lms_browser.client.get(f"{url}/"), lms_browser.client.get(f"{url}/instructor/lti")):
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"], page.url
        assert page.headers["x-frame-options"] == "DENY"
    app.state.qkv_lti.platforms.remove(platform.issuer)  # a removed platform frames nothing any more
    gone = lms_browser.client.get(platform.login_url(f"{url}/lessons/L4.1", "learner-1"))
    assert gone.status_code == 403 and "frame-ancestors 'none'" in gone.headers["content-security-policy"]


def test_a_framed_instructor_launch_opens_the_class_in_a_new_window(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    login = lms_browser.begin(platform, f"{url}/lessons/L4.1", "teacher-1")
    fields = posted_form_fields(lms_browser.client.get(login.auth_url).text)
    framed = lms_browser.client.post(f"{url}/lti/launch", data=fields, headers={"sec-fetch-dest": "iframe"})
    assert framed.status_code == 200 and "Open the class in a new window" in framed.text
    window = LmsBrowser(url)
    ticket = {"ticket": _attr(framed, 'name="ticket" value')}
    opened = window.client.post(f"{url}/lti/continue", data=ticket, headers={"origin": url})
    assert opened.status_code == 303 and opened.headers["location"] == "/instructor/lti"
    page = window.client.get(f"{url}/instructor/lti")
    assert page.status_code == 200 and "Classes from the LMS" in page.text
    window.close()
