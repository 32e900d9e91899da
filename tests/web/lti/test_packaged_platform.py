"""A launch from a platform we did not write (the ``lti1p3platform`` package) opens the lesson signed in,
and the learner's score reaches its line item with a token the package issued against our client assertion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qkv.web.lti.deep_link_routes import offered_lessons
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


def _launch_link(platform: PackagedPlatform, url: str, link: str) -> LmsBrowser:
    browser = LmsBrowser(url)
    browser.client.follow_redirects = True
    login_page = browser.client.get(
        f"{platform.url}/start", params={"user": "emmy-1", "hint": f"link:{link}"}
    )
    form_page = browser.client.get(refresh_target(login_page))
    action, fields = posted_form(form_page)
    browser.open(browser.client.post(action, data=fields))
    return browser


def test_a_link_carrying_another_lessons_line_item_scores_into_the_lessons_own(
    packaged: tuple[PackagedPlatform, str, Any],
) -> None:
    """Two lessons' links on one line item (as Open edX keeps a block's): the package's launch of the
    second carries the first lesson's line item, and qkv finds or makes the second lesson's own."""
    platform, url, app = packaged
    offered = offered_lessons(app.state.qkv)
    first, second = offered["L4.1"], offered["L4.2"]
    shared = f"{platform.url}/lineitems/41"
    platform.line_items[shared] = {
        "id": shared,
        "label": f"{first.id} {first.title}",
        "resourceId": first.id,
        "scoreMaximum": first.points,
        "tag": "qkv-lesson",
    }
    for n, lesson in enumerate((first, second), start=1):
        custom = {"qkv_lesson": lesson.id}
        platform.links[f"link-{n}"] = {"url": f"{url}/lti/launch", "custom": custom, "lineitem": shared}
    _launch_link(platform, url, "link-1").close()
    wait_for(lambda: bool(platform.item_scores.get(shared)), "the first lesson's score")
    _launch_link(platform, url, "link-2").close()
    (own,) = [key for key, item in platform.line_items.items() if item.get("resourceId") == second.id]
    assert platform.line_items[own]["scoreMaximum"] == max(second.points, 1)
    wait_for(lambda: bool(platform.item_scores.get(own)), "the second lesson's score on its own column")
    assert {s["scoreMaximum"] for s in platform.item_scores[shared]} == {first.points}  # never the second's
