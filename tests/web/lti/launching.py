"""Driving launches without a browser: an httpx client with its own cookie jar plays the learner's browser,
following the tool's and the LMS's pages as a browser would (meta refresh, self-posting form)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.web.lti.fake_platform import FakePlatform

_REFRESH = re.compile(r'<meta http-equiv="refresh" content="0;url=([^"]+)">')
_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
_ACTION = re.compile(r'<form id="launch" method="post" action="([^"]+)">')


def refresh_target(page: httpx.Response) -> str:
    found = _REFRESH.search(page.text)
    assert found, f"the page sends the browser nowhere: {page.status_code} {page.text[:300]}"
    return unescape(found.group(1))


@dataclass
class Login:
    """A login the tool began: the auth request it sent the browser to."""

    auth_url: str
    state: str
    nonce: str
    redirect_uri: str


class LmsBrowser:
    """One person's browser between an LMS and qkv."""

    def __init__(self, tool_url: str) -> None:
        self.tool_url = tool_url
        self.client = httpx.Client(follow_redirects=False, timeout=30.0)

    def close(self) -> None:
        self.client.close()

    def begin(self, platform: FakePlatform, target: str, sub: str, *, client_id: bool = True) -> Login:
        """The LMS's login initiation, sent to the tool; the tool's answer read as a browser would."""
        page = self.client.get(platform.login_url(target, sub, client_id=client_id))
        assert page.status_code == 200, page.text
        auth_url = refresh_target(page)
        query = {k: v[0] for k, v in parse_qs(urlsplit(auth_url).query).items()}
        return Login(auth_url, query["state"], query["nonce"], query["redirect_uri"])

    def post_launch(self, id_token: str, state: str, url: str | None = None) -> httpx.Response:
        return self.client.post(
            url or f"{self.tool_url}/lti/launch",
            data={"id_token": id_token, "state": state},
            headers={"accept": "text/html"},
        )

    def launch(
        self, platform: FakePlatform, target: str, sub: str, *, launch_url: str | None = None
    ) -> httpx.Response:
        """A whole launch: login, the LMS's auth page, its form posted to the tool; the tool's answer."""
        login = self.begin(platform, target, sub)
        form_page = self.client.get(login.auth_url)
        assert form_page.status_code == 200, form_page.text
        fields = dict(_INPUT.findall(form_page.text))
        action = unescape(_ACTION.search(form_page.text).group(1))  # type: ignore[union-attr]
        return self.post_launch(unescape(fields["id_token"]), unescape(fields["state"]), launch_url or action)

    def open(self, response: httpx.Response) -> httpx.Response:
        """Follow the tool's page on to where it sends the browser (a path on the tool)."""
        return self.client.get(self.tool_url + refresh_target(response), headers={"accept": "text/html"})
