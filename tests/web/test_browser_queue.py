"""The page while a program outgrows its first slice, in real Chromium with the real sandboxed grader."""

from __future__ import annotations

import re
from typing import Any

import pytest

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
    expect(running).to_contain_text("Still running — your program is taking longer than most", timeout=30_000)
    screenshot(page, "code-taking-longer-mobile-dark")
    expect(page.locator(".code-exercise .grade-results")).to_contain_text(
        re.compile(r"time limit"), timeout=60_000
    )
    assert page_errors == []
    page.context.close()
