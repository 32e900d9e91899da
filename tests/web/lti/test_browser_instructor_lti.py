"""The instructor's "Classes from the LMS" page in Chromium: reached from an instructor's launch, the roster
pulled by keyboard, the waiting scores shown; axe finds nothing at desktop and phone width, light and dark."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.browser_support import BROWSER, new_page, tab_until
from tests.web.lti.fake_platform import FakePlatform

pytestmark = BROWSER
AXE = Path(__file__).parents[1] / "vendor" / "axe-core" / "axe.min.js"


def test_an_instructor_pulls_the_roster_by_keyboard(
    lms: tuple[FakePlatform, str, Any], chromium: Any, page_errors: list[str]
) -> None:
    platform, url, app = lms
    platform.add_user("learner-2", "Charles Babbage")
    page = new_page(chromium, page_errors)
    page.goto(platform.login_url(f"{url}/lessons/L4.1", "teacher-1"))
    page.wait_for_url(f"{url}/instructor/lti")
    expect(page.get_by_role("heading", name="Classes from the LMS")).to_be_visible()
    button = page.get_by_role("button", name="Pull the roster of Attention, autumn term")
    tab_until(page, button, limit=40)
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("Roster pulled: 2 learners in the class list.")
    names = {learner.display_name for learner in app.state.qkv.store.instructors.learners()}
    assert {"Ada Lovelace", "Charles Babbage"} <= names
    assert page_errors == []
    page.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1100, 375], ids=["desktop", "phone"])
def test_axe_finds_no_violations_on_the_lms_page(
    lms: tuple[FakePlatform, str, Any], chromium: Any, width: int, scheme: str
) -> None:
    platform, url, _app = lms
    platform.down = True  # so that a score waits and the table is on the page
    errors: list[str] = []
    learner = new_page(chromium, errors)
    learner.goto(platform.login_url(f"{url}/lessons/L4.2", "learner-1"))
    learner.wait_for_url(re.compile(r"/lessons/L4\.2$"))
    page = new_page(
        chromium, errors, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    page.goto(platform.login_url(f"{url}/lessons/L4.1", "teacher-1"))
    page.wait_for_url(f"{url}/instructor/lti")
    expect(page.locator("table.lti-waiting td").first).to_have_text("learner-1")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(
            (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))"""
    )
    assert violations == []
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the {width} px screen"
    assert errors == []
    learner.context.close(), page.context.close()
