"""The page while a program waits, in real Chromium with the real sandboxed grader: a program that outgrows
its first slice, a 429 or a 503 waited out by itself, and its place in line with an estimate of its wait."""

from __future__ import annotations

import itertools
import re
import threading
from typing import Any

import pytest

from tests.time_scale import scaled, wait_for
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


class _HeldLine:
    """The live server's grading line for one test: the real grader behind a gate the test opens a grading
    at a time. Programs the test puts in line itself (no suite) are not graded; the page's are, for real."""

    def __init__(self, live_server: LiveServer, capacity: int) -> None:
        from qkv.web.runs.local_queue import GradingQueue

        self.services = live_server.app.state.qkv
        self.permits = threading.Semaphore(0)
        self.queue = GradingQueue(self._grade, concurrency=1, reserved=0, capacity=capacity)
        self.original, self.services.queue = self.services.queue, self.queue

    def _grade(self, source: str, suite: Any, seed: int | None = None) -> Any:
        from qkv.grading.results import GradeResult, TestResult

        assert self.permits.acquire(timeout=scaled(90)), "the test never let the grading through"
        if suite is None:
            return GradeResult("pass", "Held by the test.", [TestResult("t", "pass", "Yes.")], 1, 1, "test")
        return self.services.grader.grade(source, suite, seed=seed)

    def hold(self, owner: str) -> None:
        """Put a program of another address in line (it runs first once a grader is free)."""
        self.queue.submit(f"# {owner}", None, owner=owner, client=f"elsewhere-{owner}")

    def allow(self, gradings: int = 1) -> None:
        self.permits.release(gradings)

    def close(self) -> None:
        self.permits.release(64)
        self.queue.close(timeout_s=scaled(30))
        self.services.queue = self.original


@pytest.mark.timeout(180)
def test_a_503_from_a_full_line_is_waited_out_and_ends_in_a_verdict(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    from tests.web.backend_fixtures import CORRECT_SOLUTION

    line = _HeldLine(live_server, capacity=0)  # one grader and no place to wait: a second program gets 503
    try:
        line.hold("blocker")
        wait_for(lambda: line.queue.admitted == 1, "the blocker on the only grader")
        page = new_page(chromium, page_errors)
        refusals: list[int] = []
        page.on("response", lambda answer: refusals.append(answer.status) if answer.status == 503 else None)
        page.goto(live_server.lesson_url)
        editor = page.locator(".code-exercise .cm-content")
        replace_editor_text(page, editor, CORRECT_SOLUTION)
        page.locator(".code-exercise button.run-code").press("Enter")
        running = page.locator(".code-exercise .grade-running")
        expect(running).to_contain_text(
            "The grader is busy: 1 program is being graded", timeout=scaled(30_000)
        )
        expect(running).to_contain_text(
            re.compile(r"Waiting to send your program again by itself in \d+ s\.")
        )
        screenshot(page, "code-waiting-after-503")
        assert "def param_count(d_model, d_k, d_v):" in editor.inner_text()  # the program is kept
        line.allow(2)  # the blocker ends; the page's next try is taken and graded for real
        results = page.locator(".code-exercise .grade-results")
        expect(results).to_contain_text(re.compile(r"All \d+ tests passed"), timeout=scaled(60_000))
        assert refusals and page_errors == [e for e in page_errors if "status of 503" in e]
        page.context.close()
    finally:
        line.close()


# Every poll of the line, timed in the page: when it was sent and when its answer came.
POLL_TIMES = """
(() => {
  const sent = (window.__queuePolls = []);
  const fetchFirst = window.fetch.bind(window);
  window.fetch = async (url, init) => {
    if (!String(url).endsWith("/code/queue")) return fetchFirst(url, init);
    const poll = { start: performance.now(), end: null };
    sent.push(poll);
    try { return await fetchFirst(url, init); } finally { poll.end = performance.now(); }
  };
})();
"""


@pytest.mark.timeout(180)
def test_a_waiting_program_shows_its_place_and_an_estimate_as_the_line_moves(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    from tests.web.backend_fixtures import CORRECT_SOLUTION

    line = _HeldLine(live_server, capacity=8)
    try:
        line.hold("warm-up")
        line.allow()  # one run finishes: the line has a measured pace
        wait_for(lambda: line.queue.finish_rate is not None, "the line's pace")
        line.hold("first")  # holds the grader
        line.hold("second")  # waits ahead of the page's program
        wait_for(lambda: line.queue.admitted == 2, "two programs of other addresses in line")
        page = new_page(chromium, page_errors)
        page.add_init_script(POLL_TIMES)
        page.goto(live_server.lesson_url)
        replace_editor_text(page, page.locator(".code-exercise .cm-content"), CORRECT_SOLUTION)
        page.locator(".code-exercise button.run-code").press("Enter")
        running = page.locator(".code-exercise .grade-running")
        pace = re.compile(r"done in about \d+ s at the line's pace")
        expect(running).to_contain_text("place 2 in line, 1 program ahead of yours", timeout=scaled(30_000))
        expect(running).to_contain_text(pace)
        screenshot(page, "code-waiting-place-and-estimate")
        line.allow()  # the first ends: the page's program moves up
        expect(running).to_contain_text("Waiting for a free grader (you are next)", timeout=scaled(30_000))
        expect(running).to_contain_text(pace)
        line.allow(2)  # the second, then the page's program, graded for real
        results = page.locator(".code-exercise .grade-results")
        expect(results).to_contain_text(re.compile(r"All \d+ tests passed"), timeout=scaled(60_000))
        polls = page.evaluate("window.__queuePolls")
        assert len(polls) >= 2 and all(poll["end"] is not None for poll in polls)
        # One poll at a time, each sent a second after the answer to the one before: at most one a second.
        assert all(later["start"] - earlier["end"] >= 990 for earlier, later in itertools.pairwise(polls))
        assert page_errors == []
        page.context.close()
    finally:
        line.close()
