"""Every bad launch gets a 4xx with a sentence a teacher can act on, no session, and no logged traceback."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.web.lti.fake_platform import CLIENT_ID, LTI, FakePlatform, SigningKey
from tests.web.lti.launching import LmsBrowser

Claims = dict[str, Any]


def _launch_with(
    lms: tuple[FakePlatform, str, Any], browser: LmsBrowser, change: Callable[[Claims], None], **sign: Any
) -> Any:
    platform, url, _app = lms
    target = f"{url}/lessons/L4.1"
    login = browser.begin(platform, target, "learner-1")
    claims = platform.claims_for("learner-1", target, login.nonce)
    change(claims)
    return browser.post_launch(platform.sign(claims, **sign), login.state)


def _assert_refused(answer: Any, status: int, sentence: str, caplog: pytest.LogCaptureFixture) -> None:
    assert answer.status_code == status, answer.text
    assert sentence in answer.text.replace("&#39;", "'").replace("&#34;", '"')
    set_names = {cookie.split("=", 1)[0] for cookie in answer.headers.get_list("set-cookie")}
    assert not {"qkv_learner", "qkv_session", "qkv_instructor"} & set_names  # nobody was signed in
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


CASES: list[tuple[str, Callable[[Claims], None], int, str]] = [
    (
        "unknown issuer",
        lambda c: c.update(iss="https://other-lms.example"),
        403,
        "is not registered with this qkv server",
    ),
    (
        "wrong audience",
        lambda c: c.update(aud="someone-else", azp="someone-else"),
        403,
        "is meant for the audience 'someone-else'",
    ),
    (
        "several audiences without azp",
        lambda c: (c.update(aud=[CLIENT_ID, "other"]), c.pop("azp")),
        400,
        "no authorized party",
    ),
    (
        "azp of another tool",
        lambda c: c.update(aud=[CLIENT_ID, "other"], azp="other"),
        403,
        "authorized party ('azp') is 'other'",
    ),
    (
        "expired token",
        lambda c: c.update(exp=int(time.time()) - 600, iat=int(time.time()) - 900),
        401,
        "has expired",
    ),
    (
        "issued in the future",
        lambda c: c.update(iat=int(time.time()) + 600, exp=int(time.time()) + 900),
        401,
        "issued in the future",
    ),
    (
        "unknown deployment",
        lambda c: c.update({LTI + "deployment_id": "deployment-9"}),
        403,
        "The deployment 'deployment-9'",
    ),
    ("wrong LTI version", lambda c: c.update({LTI + "version": "1.1"}), 400, "LTI version '1.1'"),
    (
        "unknown message type",
        lambda c: c.update({LTI + "message_type": "LtiSubmissionReviewRequest"}),
        400,
        "'LtiSubmissionReviewRequest' message",
    ),
    (
        "deep linking request from a learner",
        lambda c: c.update({LTI + "message_type": "LtiDeepLinkingRequest"}),
        403,
        "only an instructor or administrator of the course picks",
    ),
    (
        "another login's nonce",
        lambda c: c.update(nonce="not-the-one-sent"),
        400,
        "nonce is not the one qkv sent",
    ),
    ("no subject", lambda c: c.pop("sub"), 400, "has no 'sub'"),
    (
        "target outside this server",
        lambda c: c.update({LTI + "target_link_uri": "https://evil.example/lessons/L4.1"}),
        400,
        "which is not on this qkv server",
    ),
    (
        "target that is no lesson",
        lambda c: c.update(
            {LTI + "target_link_uri": c[LTI + "target_link_uri"].replace("L4.1", "instructor")}
        ),
        400,
        "is not a lesson of this server",
    ),
]


@pytest.mark.parametrize(
    ("change", "status", "sentence"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_a_bad_claim_is_refused_with_a_sentence(
    lms: Any,
    lms_browser: LmsBrowser,
    caplog: pytest.LogCaptureFixture,
    change: Any,
    status: int,
    sentence: str,
) -> None:
    _assert_refused(_launch_with(lms, lms_browser, change), status, sentence, caplog)


def test_a_forged_signature_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform = lms[0]
    forger = SigningKey(platform.keys[0].kid, SigningKey.new().private)  # the real key's id, another key
    answer = _launch_with(lms, lms_browser, lambda c: None, key=forger)
    _assert_refused(answer, 403, "signature does not match the public keys", caplog)


def test_a_token_signed_with_a_symmetric_algorithm_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    import jwt

    platform, url, _app = lms
    login = lms_browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    claims = platform.claims_for("learner-1", f"{url}/lessons/L4.1", login.nonce)
    forged = jwt.encode(claims, "a shared secret of thirty-two bytes", algorithm="HS256")
    _assert_refused(lms_browser.post_launch(forged, login.state), 400, "signed with 'HS256'", caplog)


def test_a_token_that_is_no_jwt_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, _app = lms
    login = lms_browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    _assert_refused(
        lms_browser.post_launch("not.a.token", login.state), 400, "is not a JSON Web Token", caplog
    )


def test_a_replayed_launch_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, _app = lms
    login = lms_browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    token = platform.sign(platform.claims_for("learner-1", f"{url}/lessons/L4.1", login.nonce))
    assert lms_browser.post_launch(token, login.state).status_code == 200
    lms_browser.client.cookies.set(*_state_cookie(login.state))  # even with the cookie back
    _assert_refused(lms_browser.post_launch(token, login.state), 400, "was used already", caplog)


def test_a_replayed_nonce_with_a_fresh_state_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, _app = lms
    target = f"{url}/lessons/L4.1"
    first = lms_browser.begin(platform, target, "learner-1")
    token = platform.sign(platform.claims_for("learner-1", target, first.nonce))
    assert lms_browser.post_launch(token, first.state).status_code == 200
    second = lms_browser.begin(platform, target, "learner-1")
    _assert_refused(
        lms_browser.post_launch(token, second.state), 400, "nonce is not the one qkv sent", caplog
    )


def test_a_launch_without_the_state_cookie_is_refused(lms: Any, caplog: pytest.LogCaptureFixture) -> None:
    platform, url, _app = lms
    starter, stranger = LmsBrowser(url), LmsBrowser(url)  # the login began in another browser
    login = starter.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    token = platform.sign(platform.claims_for("learner-1", f"{url}/lessons/L4.1", login.nonce))
    _assert_refused(stranger.post_launch(token, login.state), 401, "did not bring back the cookie", caplog)
    starter.close(), stranger.close()


def test_an_unknown_state_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    lms_browser.client.cookies.set(*_state_cookie("made-up"))
    _assert_refused(lms_browser.post_launch("x.y.z", "made-up"), 400, "was never issued by qkv", caplog)


def test_a_login_from_an_unregistered_lms_or_for_another_server_is_refused(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, _app = lms
    outside = lms_browser.client.get(
        platform.login_url("https://evil.example/lessons/L4.1", "learner-1"), headers={"accept": "text/html"}
    )
    _assert_refused(outside, 400, "which is not on this qkv server", caplog)
    unknown = lms_browser.client.get(
        f"{url}/lti/login",
        params={"iss": "https://other.example", "login_hint": "x", "target_link_uri": f"{url}/lessons/L4.1"},
        headers={"accept": "text/html"},
    )
    _assert_refused(unknown, 403, "is not registered with this qkv server", caplog)


def test_a_rotated_platform_key_is_fetched_once_and_accepted(lms: Any, lms_browser: LmsBrowser) -> None:
    platform, url, _app = lms
    assert lms_browser.launch(platform, f"{url}/lessons/L4.1", "learner-1").status_code == 200
    fetches = platform.jwks_fetches
    platform.rotate()
    assert lms_browser.launch(platform, f"{url}/lessons/L4.1", "learner-1").status_code == 200
    assert platform.jwks_fetches == fetches + 1  # the unknown kid made the tool fetch the set once more
    assert lms_browser.launch(platform, f"{url}/lessons/L4.1", "learner-1").status_code == 200
    assert platform.jwks_fetches == fetches + 1  # and the new set is cached


def _state_cookie(state: str) -> tuple[str, str]:
    from qkv.web.lti.state_cookie import cookie_names

    return cookie_names(state)[1], "1"


def test_malformed_requests_get_sentences_not_errors(
    lms: Any, lms_browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    url, html = lms[1], {"accept": "text/html"}
    client = lms_browser.client
    _assert_refused(
        client.get(f"{url}/lti/login", headers=html), 400, "The login request has no 'iss'", caplog
    )
    _assert_refused(
        client.post(f"{url}/lti/launch", data={}, headers=html), 400, "The launch has no state", caplog
    )
    as_json = client.post(f"{url}/lti/launch", json={"state": "s", "id_token": "t"}, headers=html)
    assert as_json.status_code == 415 and "form" in as_json.text
    huge = client.post(f"{url}/lti/launch", data={"state": "s", "id_token": "x" * 200_000}, headers=html)
    assert huge.status_code == 413
    assert client.get(f"{url}/lti/launch", headers=html).status_code == 405
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
