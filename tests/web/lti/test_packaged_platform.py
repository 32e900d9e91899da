"""A launch from a platform we did not write (the ``lti1p3platform`` package) opens the lesson signed in,
and the learner's score reaches its line item with a token the package issued against our client assertion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser_support import serve
from tests.web.lti.conftest import tool_server
from tests.web.lti.launching import LmsBrowser, posted_form, refresh_target, wait_for
from tests.web.lti.packaged_platform import PackagedPlatform, packaged_app


@pytest.fixture
def packaged(tmp_path: Path) -> Iterator[tuple[PackagedPlatform, str, Any]]:
    platform = PackagedPlatform()
    with (
        serve(packaged_app(platform), name="packaged-lms") as lms_url,
        tool_server(f"sqlite:///{tmp_path / 'qkv.db'}") as (url, app),
    ):
        platform.url, platform.tool_url, platform.target = lms_url, url, f"{url}/lessons/L4.5"
        platform.register_with(app.state.qkv_lti.platforms)
        yield platform, url, app


def test_a_launch_from_the_packaged_platform_opens_the_lesson_and_sends_the_score(
    packaged: tuple[PackagedPlatform, str, Any],
) -> None:
    platform, url, _app = packaged
    browser = LmsBrowser(url)
    browser.client.follow_redirects = True
    login_page = browser.client.get(
        f"{platform.url}/start", params={"user": "emmy-1"}
    )  # the package redirects to /lti/login
    assert login_page.status_code == 200, login_page.text
    form_page = browser.client.get(refresh_target(login_page))
    assert form_page.status_code == 200, form_page.text
    action, fields = posted_form(form_page)
    launched = browser.client.post(action, data=fields)
    assert launched.status_code == 200, launched.text
    lesson = browser.open(launched)
    assert lesson.url.path == "/lessons/L4.5" and "Emmy Noether" in lesson.text
    wait_for(lambda: bool(platform.scores), "the launch's score")
    assert platform.scores[0]["userId"] == "emmy-1" and platform.scores[0]["scoreGiven"] == 0
    browser.close()
