"""The whole launch in Chromium: the LMS starts the login, qkv sends the browser to the LMS's auth page,
which posts the id token back; the lesson opens signed in; a solved exercise reaches the fake LMS as a score."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.web.browser_support import BROWSER, new_page
from tests.web.lti.fake_platform import FakePlatform
from tests.web.lti.launching import solvable, wait_for

pytestmark = BROWSER


def test_launch_solve_and_the_lms_receives_the_score(
    lms: tuple[FakePlatform, str, Any], chromium: Any, page_errors: list[str]
) -> None:
    platform, url, app = lms
    page = new_page(chromium, page_errors)
    page.goto(platform.login_url(f"{url}/lessons/L4.1", "learner-1"))
    page.wait_for_url(f"{url}/lessons/L4.1")
    expect(page.locator(".learner-name")).to_have_text("Ada Lovelace")
    exercise, right = solvable(app)
    kind = app.state.qkv.catalog.lesson("L4.1").exercises[exercise].kind
    form = page.locator(f'form[data-exercise-id="{exercise}"]')
    if kind == "choice":
        form.locator(f'input[value="{right}"]').check()
    else:
        page.locator(f"#answer-{exercise}").fill(right)
    form.get_by_role("button", name="Check").click()
    expect(page.locator(f"#feedback-{exercise}")).to_have_class(re.compile("is-correct"))
    wait_for(lambda: [s["scoreGiven"] for s in platform.received("L4.1")] == [0, 1], "the two scores")
    assert platform.received("L4.1")[1]["userId"] == "learner-1"
    assert page_errors == []
    page.context.close()
