"""Driving launches without a browser: an httpx client with its own cookie jar plays the learner's browser,
following the tool's and the LMS's pages as a browser would (meta refresh, self-posting form); and the
helpers the score tests share."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from html import unescape
from typing import Any
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


def posted_form(page: httpx.Response) -> tuple[str, dict[str, str]]:
    """The action and fields of the self-posting form an LMS answers its auth request with."""
    action = _ACTION.search(page.text)
    assert action, f"the LMS's page has no launch form: {page.text[:300]}"
    return unescape(action.group(1)), {unescape(k): unescape(v) for k, v in _INPUT.findall(page.text)}


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

    def begin(
        self,
        platform: FakePlatform,
        target: str,
        sub: str,
        *,
        client_id: bool = True,
        hint: str | None = None,
    ) -> Login:
        """The LMS's login initiation, sent to the tool; the tool's answer read as a browser would."""
        page = self.client.get(platform.login_url(target, sub, client_id=client_id, hint=hint))
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
        self,
        platform: FakePlatform,
        target: str,
        sub: str,
        *,
        launch_url: str | None = None,
        hint: str | None = None,
    ) -> httpx.Response:
        """A whole launch: login, the LMS's auth page, its form posted to the tool; the tool's answer."""
        login = self.begin(platform, target, sub, hint=hint)
        form_page = self.client.get(login.auth_url)
        assert form_page.status_code == 200, form_page.text
        action, fields = posted_form(form_page)
        return self.post_launch(fields["id_token"], fields["state"], launch_url or action)

    def open(self, response: httpx.Response) -> httpx.Response:
        """Follow the tool's page on to where it sends the browser (a path on the tool)."""
        return self.client.get(self.tool_url + refresh_target(response), headers={"accept": "text/html"})


def page_form(page: httpx.Response, form_id: str) -> tuple[str, dict[str, str]]:
    """The action and hidden fields of the form ``form_id`` of one of the tool's pages."""
    found = re.search(rf'<form method="post" action="([^"]+)" id="{form_id}"', page.text)
    assert found, f"the page has no form {form_id!r}: {page.status_code} {page.text[:300]}"
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text)
    return unescape(found.group(1)), {unescape(k): unescape(v) for k, v in fields}


def solvable(app: Any) -> tuple[str, str]:
    """An exercise of L4.1 that counts toward its score, with its right answer (a letter or a choice)."""
    lesson = app.state.qkv.catalog.lesson("L4.1")
    counted = {part.id for part in lesson.parts if part.counts_toward_done}
    for exercise_id, exercise in lesson.exercises.items():
        if exercise.kind in {"choice", "letter"} and exercise.part in counted:
            assert lesson.check(exercise_id, exercise.answer).correct
            return exercise_id, exercise.answer
    raise AssertionError("L4.1 has no counted letter or choice exercise to solve")


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"waited 30 s for {what}"
        time.sleep(0.05)
