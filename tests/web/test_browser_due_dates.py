"""In Chromium, a learner sees a lesson's dates (issue 46): the chapter index and the lesson page show the
due date in the learner's own time zone and the time left, "late: counts at half", "closed" (said on the
lesson page before the learner starts). The browser's clock is the test's (Playwright's ``page.clock``);
the server's dates are set far enough before and after now to stand the same whatever the day."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from qkv.store import MembershipSource
from tests.web.browser_support import BROWSER, new_page, screenshot, serve

pytestmark = BROWSER
BROWSER_NOW = datetime(2030, 1, 1, 12, 0)  # the browser's clock, in UTC


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    folder = tmp_path_factory.mktemp("due-dates-browser")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}", secret_key="due-dates-browser-secret", warm_spares=0
    )
    app = create_app(settings)
    with serve(app, name="due-dates-browser-uvicorn") as url:
        yield url, app


def _school(app: Any) -> str:
    """Ada's course with three dated lessons: due in two days (by the browser's clock), late, closed."""
    store = app.state.qkv.store
    course = store.courses.create("Attention 101").id
    ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    store.courses.enrol(course, ada, MembershipSource.ROSTER)
    store.due_dates.set_due(course, "L4.1", BROWSER_NOW + timedelta(days=2, hours=10), late_credit=0.5)
    long_ago, far_ahead = datetime(2020, 1, 1), datetime(2099, 1, 1)
    store.due_dates.set_due(course, "L4.2", long_ago, close_at=far_ahead, late_credit=0.5)
    store.due_dates.set_due(course, "L4.3", long_ago, close_at=long_ago + timedelta(days=1), late_credit=0.5)
    return str(store.accounts.new_sign_in_token(ada))


@pytest.mark.timeout(240)
def test_a_learner_sees_due_late_and_closed_in_their_own_time_zone(
    server: tuple[str, Any], chromium: Any
) -> None:
    from playwright.sync_api import expect

    url, app = server
    token = _school(app)
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": 1100, "height": 900}, timezone_id="Asia/Tokyo", locale="en-GB"
    )
    page.clock.set_fixed_time(BROWSER_NOW.isoformat() + "Z")
    page.goto(f"{url}/sign-in#token={token}")
    page.get_by_role("button", name=re.compile("Sign in as Ada Lovelace")).click()
    expect(page.locator(".account-nav")).to_contain_text("Ada Lovelace")
    page.goto(url + "/")
    cards = page.locator(".lesson-card")
    due = cards.filter(has_text="L4.1").locator(".due-notice")
    # 2030-01-03 22:00 UTC is 2030-01-04 07:00 in Tokyo; two days and ten hours left by the browser's clock.
    expect(due).to_contain_text("4 Jan 2030, 07:00")
    expect(due).to_contain_text("(due in 2 days)")
    expect(due).to_contain_text("After it, late work counts at half.")
    late = cards.filter(has_text="L4.2").locator(".due-notice")
    expect(late).to_contain_text("Late: it was due 1 Jan 2020, 09:00; work now counts at half.")
    closed = cards.filter(has_text="L4.3").locator(".due-notice")
    expect(closed).to_contain_text("Closed since 2 Jan 2020, 09:00")
    expect(cards.filter(has_text="L4.4").locator(".due-notice")).to_have_count(0)  # no due date
    screenshot(page, "due-dates-index")
    page.goto(f"{url}/lessons/L4.3")
    header = page.locator(".lesson-header .due-notice")
    expect(header).to_contain_text(
        "your work is still saved and graded for practice, but it earns nothing now"
    )
    page.clock.set_fixed_time((BROWSER_NOW + timedelta(days=2, hours=9, minutes=30)).isoformat() + "Z")
    page.goto(f"{url}/lessons/L4.1")
    expect(page.locator(".lesson-header .due-left")).to_have_text("(due in 30 minutes)")
    assert errors == []
