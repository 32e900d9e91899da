"""The page while a program outgrows its first slice, in real Chromium with the real sandboxed grader."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.time_scale import scaled
from tests.web.browser_support import BROWSER, LiveServer, new_page, replace_editor_text, screenshot

pytestmark = BROWSER

ENDLESS = "def project_qkv(X, Wq, Wk, Wv):\n    while True:\n        pass\n"


@pytest.mark.timeout(120)
def test_a_program_that_outgrows_its_first_slice_says_it_is_taking_longer(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 375, "height": 800}, color_scheme="dark")
    page.goto(live_server.lesson_url)
    replace_editor_text(page, page.locator(".code-exercise .cm-content"), ENDLESS)
    page.locator(".code-exercise button.run-code").press("Enter")
    running = page.locator(".grade-running")
    # After its first slice (0.5 s of CPU) the loop finishes its time limit behind any other first run.
    expect(running).to_contain_text(
        "Still running — your program is taking longer than most", timeout=scaled(30_000)
    )
    screenshot(page, "code-taking-longer-mobile-dark")
    expect(page.locator(".code-exercise .grade-results")).to_contain_text(
        re.compile(r"time limit"), timeout=scaled(60_000)
    )
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_a_429_is_sent_again_by_itself_after_its_retry_after_saying_it_waits(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import Route, expect

    from tests.web.backend_fixtures import CORRECT_SOLUTION

    page = new_page(chromium, page_errors)
    refused: list[str] = []
    sentence = "Your network already has 64 programs waiting to be graded, the most one address may have."

    def refuse_the_first(route: Route) -> None:
        if route.request.method == "POST" and not refused:
            refused.append(route.request.url)  # as a flooded address's share would, once
            route.fulfill(
                status=429,
                headers={"Retry-After": "3", "Content-Type": "application/json"},
                body='{"detail": "' + sentence + '"}',
            )
        else:
            route.continue_()

    page.route(re.compile(r".*/api/lessons/L4\.1/code$"), refuse_the_first)
    page.goto(live_server.lesson_url)
    replace_editor_text(page, page.locator(".code-exercise .cm-content"), CORRECT_SOLUTION)
    page.locator(".code-exercise button.run-code").press("Enter")
    running = page.locator(".code-exercise .grade-running")
    expect(running).to_contain_text(sentence, timeout=scaled(30_000))
    expect(running).to_contain_text(re.compile(r"Waiting to send your program again by itself in [1-3] s\."))
    screenshot(page, "code-waiting-after-429")
    results = page.locator(".code-exercise .grade-results")
    expect(results).to_contain_text(re.compile(r"All \d+ tests passed|passed"), timeout=scaled(60_000))
    assert len(refused) == 1 and _besides_the_429(page_errors) == []
    page.context.close()


@pytest.mark.timeout(120)
def test_cancel_stops_the_wait_after_a_429(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import Route, expect

    page = new_page(chromium, page_errors)
    posts: list[str] = []

    def refuse(route: Route) -> None:
        posts.append(route.request.url)
        route.fulfill(
            status=429,
            headers={"Retry-After": "30", "Content-Type": "application/json"},
            body='{"detail": "Your previous program is still being graded."}',
        )

    page.route(re.compile(r".*/api/lessons/L4\.1/code$"), refuse)
    page.goto(live_server.lesson_url)
    page.locator(".code-exercise button.run-code").press("Enter")
    expect(page.locator(".code-exercise .grade-running")).to_contain_text(
        "by itself in", timeout=scaled(30_000)
    )
    page.locator(".code-exercise button.cancel-run").click()
    expect(page.locator(".code-exercise .grade-results")).to_contain_text("You stopped waiting")
    assert len(posts) == 1 and _besides_the_429(page_errors) == []
    page.context.close()


def _besides_the_429(errors: list[str]) -> list[str]:
    """The page's console errors but Chromium's own line for the refused request, which the test made."""
    return [error for error in errors if "status of 429 (Too Many Requests)" not in error]
