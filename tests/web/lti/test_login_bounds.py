"""``/lti/login`` is open to anyone, so it is bounded: a rate and pending logins per address, pending logins
server-wide, a target of at most 2 KiB, a small stored state; and junk launches naming unknown key ids
make qkv fetch the LMS's key set again at most once a minute. On SQLite and on PostgreSQL."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qkv.web.lti.login_limits import LoginLimits
from tests.web.lti.conftest import served_platform, tool_server
from tests.web.lti.fake_platform import FakePlatform
from tests.web.lti.launching import LmsBrowser

HTML = {"accept": "text/html"}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def lms_on(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FakePlatform, str, Any]]:
    """The fake LMS registered with a qkv tool, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        database = f"sqlite:///{tmp_path / 'qkv.db'}"
    else:
        database = str(request.getfixturevalue("postgres_url"))
    with served_platform() as platform, tool_server(database) as (url, app):
        platform.tool_url = url
        platform.register_with(app.state.qkv_lti.platforms)
        platform.add_user("learner-1", "Ada Lovelace")
        yield platform, url, app


@pytest.fixture
def browser(lms_on: tuple[FakePlatform, str, Any]) -> Iterator[LmsBrowser]:
    opened = LmsBrowser(lms_on[1])
    yield opened
    opened.close()


def _no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_a_target_over_2_kib_is_refused_with_its_size_and_nothing_is_stored(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, app = lms_on
    caplog.set_level(logging.INFO)
    target = f"{url}/lessons/L4.1?" + "a" * 3000
    answer = browser.client.get(platform.login_url(target, "learner-1"), headers=HTML)
    assert answer.status_code == 400, answer.text
    size = len(target.encode())
    assert (
        f"The login&#39;s target_link_uri is {size:,} bytes; qkv accepts at most 2,048 bytes" in answer.text
    )
    long_issuer = browser.client.get(f"{url}/lti/login", params={"iss": "https://x.example/" + "i" * 3000})
    assert long_issuer.status_code == 400
    assert long_issuer.json()["detail"] == "The login's iss has 3,018 characters; qkv accepts at most 255."
    assert app.state.qkv_lti.logins.pending() == 0
    _no_tracebacks(caplog)


def test_the_stored_state_keeps_only_what_the_target_names(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser
) -> None:
    platform, url, app = lms_on
    target = f"{url}/lessons/L4.1?" + "q" * 1900  # under 2 KiB: accepted, but its query is not kept
    login = browser.begin(platform, target, "learner-1")
    assert app.state.qkv_lti.logins.pending() == 1
    assert app.state.qkv_lti.logins.consume(login.state).target_link_uri == f"{url}/lessons/L4.1"


def test_one_address_may_begin_only_so_many_logins_a_minute(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser
) -> None:
    platform, url, app = lms_on
    app.state.qkv_lti_login_limits = LoginLimits(per_minute=5, pending=100)
    for _ in range(5):
        browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    refused = browser.client.get(platform.login_url(f"{url}/lessons/L4.1", "learner-1"))
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.json()["detail"].startswith("This address has begun 5 LTI logins in the last minute")
    assert app.state.qkv_lti.logins.pending() == 5


def test_pending_logins_are_bounded_per_address_and_a_launch_frees_one(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser
) -> None:
    platform, url, app = lms_on
    app.state.qkv_lti_login_limits = LoginLimits(per_minute=100, pending=3)
    target = f"{url}/lessons/L4.1"
    logins = [browser.begin(platform, target, "learner-1") for _ in range(3)]
    refused = browser.client.get(platform.login_url(target, "learner-1"))
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("This address has 3 LTI logins begun and not yet completed")
    claims = platform.claims_for("learner-1", target, logins[0].nonce)
    assert browser.post_launch(platform.sign(claims), logins[0].state).status_code == 200
    browser.begin(platform, target, "learner-1")  # the launch ended one: a place is free again


def test_pending_logins_are_bounded_server_wide(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser, caplog: pytest.LogCaptureFixture
) -> None:
    platform, url, app = lms_on
    logins = app.state.qkv_lti.logins
    logins.begin = functools.partial(logins.begin, max_pending=2)
    for _ in range(2):
        browser.begin(platform, f"{url}/lessons/L4.1", "learner-1")
    full = browser.client.get(platform.login_url(f"{url}/lessons/L4.1", "learner-1"))
    assert full.status_code == 503 and full.headers["retry-after"] == "60"
    assert full.json()["detail"] == (
        "2 LTI logins are waiting for their launch, the most this server keeps. "
        "Launch again from the LMS in a minute."
    )
    _no_tracebacks(caplog)


def test_junk_launches_with_unknown_key_ids_refetch_the_key_set_at_most_once_a_minute(
    lms_on: tuple[FakePlatform, str, Any], browser: LmsBrowser
) -> None:
    platform, url, app = lms_on
    app.state.qkv_lti_login_limits = LoginLimits(per_minute=1000, pending=1000)
    target = f"{url}/lessons/L4.1"
    assert browser.launch(platform, target, "learner-1").status_code == 200
    fetched = platform.jwks_fetches
    for number in range(200):
        login = browser.begin(platform, target, "learner-1")
        claims = platform.claims_for("learner-1", target, login.nonce)
        junk = browser.post_launch(platform.sign(claims, headers={"kid": f"junk-{number}"}), login.state)
        assert junk.status_code == 403 and f"the key id &#39;junk-{number}&#39;" in junk.text
    assert platform.jwks_fetches - fetched <= 1
    # The platform's own key still works, with no fetch more.
    assert browser.launch(platform, target, "learner-1").status_code == 200
    assert platform.jwks_fetches - fetched <= 1
