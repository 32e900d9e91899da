"""LTI Dynamic Registration: a one-time URL from ``qkv lti registration-link``, opened by the fake LMS
with its openid_configuration and registration_token, registers the LMS (client id and deployment id from
its answer) and ends with the page that closes the LMS's dialog; strangers and reused links are refused."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from html import escape
from pathlib import Path
from typing import Any

import httpx
import pytest

from qkv.store.lti.registrations import RegistrationLinks
from qkv.web.lti.registration_attempts import FAILED
from tests.web.lti.conftest import served_platform, tool_server
from tests.web.lti.fake_platform import CLIENT_ID, DEPLOYMENT_ID, FakePlatform
from tests.web.lti.launching import LmsBrowser

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"


@pytest.fixture
def unregistered(tmp_path: Path) -> Iterator[tuple[FakePlatform, str, Any]]:
    """The fake LMS and a qkv tool that does not know it yet (and may fetch from loopback)."""
    database = f"sqlite:///{tmp_path / 'qkv.db'}"
    with served_platform() as platform, tool_server(database, allow_private_lms=True) as (url, app):
        platform.tool_url = url
        platform.add_user("learner-1", "Ada Lovelace")
        yield platform, url, app


def _link(app: Any, url: str) -> str:
    token = RegistrationLinks(app.state.qkv.store.database).issue(timedelta(hours=1))
    return f"{url}/lti/register/{token}"


def test_the_lms_registers_qkv_with_the_one_time_url(unregistered: tuple[FakePlatform, str, Any]) -> None:
    platform, url, app = unregistered
    page = httpx.get(platform.registration_start(_link(app, url)))
    assert page.status_code == 200, page.text
    assert "qkv is registered with" in page.text and '<script src="/static/lti-close.js">' in page.text
    assert f"frame-ancestors {platform.url}" in page.headers["content-security-policy"]
    (record,) = app.state.qkv_lti.platforms.all()
    assert (record.issuer, record.client_id, record.deployment_ids) == (
        platform.issuer,
        CLIENT_ID,
        (DEPLOYMENT_ID,),
    )
    assert (record.auth_url, record.token_url, record.jwks_url) == (
        f"{platform.url}/auth",
        f"{platform.url}/token",
        f"{platform.url}/jwks",
    )
    (sent,) = platform.registration_requests
    assert sent["initiate_login_uri"] == f"{url}/lti/login"
    assert sent["redirect_uris"] == [f"{url}/lti/launch"] and sent["jwks_uri"] == f"{url}/lti/jwks.json"
    assert set(sent["scope"].split()) >= {
        "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
        "https://purl.imsglobal.org/spec/lti-ags/scope/score",
        "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
    }
    tool = sent[TOOL_CONFIGURATION]
    assert [m["type"] for m in tool["messages"]] == ["LtiResourceLinkRequest", "LtiDeepLinkingRequest"]
    assert tool["target_link_uri"] == f"{url}/lti/launch" and "email" in tool["claims"]
    assert sent["client_name"] and sent["logo_uri"].startswith(url)
    learner = LmsBrowser(url)  # and the LMS so registered launches a learner
    opened = learner.open(learner.launch(platform, f"{url}/lessons/L4.1", "learner-1"))
    assert opened.status_code == 200 and "Ada Lovelace" in opened.text
    learner.close()


def test_registration_refusals_are_4xx_sentences(unregistered: tuple[FakePlatform, str, Any]) -> None:
    platform, url, app = unregistered
    stranger = httpx.get(platform.registration_start(f"{url}/lti/register/made-up-token"))
    assert stranger.status_code == 403 and "was not made by this qkv server" in stranger.text
    assert "frame-ancestors 'none'" in stranger.headers["content-security-policy"]
    link = _link(app, url)
    pasted_in_a_browser = httpx.get(link)
    assert (
        pasted_in_a_browser.status_code == 400 and "without openid_configuration" in pasted_in_a_browser.text
    )
    not_http = httpx.get(link, params={"openid_configuration": "javascript:alert(1)"})
    assert not_http.status_code == 400 and "is not an absolute http(s) URL" in not_http.text
    platform.config_issuer = "http://lms.elsewhere.example"
    other_issuer = httpx.get(platform.registration_start(link))
    assert (
        other_issuer.status_code == 502 and other_issuer.text.count(escape(FAILED)) == 1
    )  # the cause is logged
    assert app.state.qkv_lti.platforms.all() == [] and platform.registration_requests == []
    platform.config_issuer = None
    # Nothing fetched spent nothing, and one failed attempt of the few a link allows does not spend it.
    assert httpx.get(platform.registration_start(link)).status_code == 200
    reused = httpx.get(platform.registration_start(link))
    assert reused.status_code == 410 and "was used already" in reused.text
    assert len(app.state.qkv_lti.platforms.all()) == 1


def test_the_canvas_configuration_url_names_placements_that_all_work(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    config = httpx.get(f"{url}/lti/canvas.json").json()
    assert (config["oidc_initiation_url"], config["public_jwk_url"]) == (
        f"{url}/lti/login",
        f"{url}/lti/jwks.json",
    )
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in config["scopes"]
    placements = {p["placement"]: p for p in config["extensions"][0]["settings"]["placements"]}
    assert set(placements) == {"course_navigation", "assignment_selection", "link_selection"}
    # Course navigation: a resource link to the tool's launch URL opens the instructor's view.
    navigation = placements["course_navigation"]
    assert navigation["message_type"] == "LtiResourceLinkRequest" and navigation["visibility"] == "admins"
    opened = lms_browser.open(lms_browser.launch(platform, navigation["target_link_uri"], "teacher-1"))
    assert opened.status_code == 200 and opened.url.path == "/instructor/lti"
    # Assignment and link selection: deep linking, which opens the picker.
    for name in ("assignment_selection", "link_selection"):
        placement = placements[name]
        assert placement["message_type"] == "LtiDeepLinkingRequest"
        picker = lms_browser.launch(platform, placement["target_link_uri"], "teacher-1", hint="deep-link")
        assert picker.status_code == 200 and 'action="/lti/deep-link"' in picker.text
