"""An instructor watches a class in Chromium while three learners work: the grid fills live, a stuck learner
appears in "stuck now", and axe-core finds no violation on any instructor page at desktop and 375 px.

The learners work through the real HTTP API of the same server (their own cookies and CSRF tokens); the
instructor's pages are never reloaded while they do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.time_scale import scaled
from tests.web.browser_support import BROWSER, new_page, screenshot, serve
from tests.web.instructor_seed import LESSON_ID, catalog
from tests.web.test_browser_instructor import AXE

pytestmark = BROWSER
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)">')


class Learner:
    """A learner's browser, driven through the HTTP API."""

    def __init__(self, url: str, name: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=30)
        page = self.client.get(f"/lessons/{LESSON_ID}", headers={"accept": "text/html"})
        found = CSRF.search(page.text)
        assert found, "the lesson page carries a CSRF token"
        self.headers = {"X-CSRF-Token": found.group(1)}
        response = self.client.post("/api/learner", json={"display_name": name}, headers=self.headers)
        assert response.status_code == 200, response.text

    def answer(self, text: str) -> None:
        response = self.client.post(
            f"/api/lessons/{LESSON_ID}/answers",
            json={"exercise_id": "area", "answer": text},
            headers=self.headers,
        )
        assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    folder = tmp_path_factory.mktemp("instructor-live")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}",
        secret_key="instructor-live-browser",
        warm_spares=0,
        stuck_attempts=3,
    )
    app = create_app(settings, catalog=catalog())
    with serve(app, name="instructor-live-uvicorn") as url:
        yield url, app


def _signed_in_page(chromium: Any, url: str, app: Any, name: str, errors: list[str], **options: Any) -> Any:
    page = new_page(chromium, errors, **options)
    _, token = app.state.qkv_instructor.desk.add(name)
    page.goto(f"{url}/instructor/sign-in#token={token}")
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    return page


@pytest.mark.timeout(240)
def test_the_grid_and_the_stuck_list_fill_live_while_three_learners_work(
    server: tuple[str, Any], chromium: Any
) -> None:
    from playwright.sync_api import expect

    url, app = server
    errors: list[str] = []
    grid = _signed_in_page(chromium, url, app, "Live grid", errors, viewport={"width": 1100, "height": 900})
    dashboard = grid.context.new_page()
    dashboard.goto(f"{url}/instructor")
    grid.goto(f"{url}/instructor/class?sort=name")
    expect(grid.locator(".live-region")).to_contain_text("No learner matches")
    expect(dashboard.locator(".stuck .live-region")).to_contain_text("Nobody is stuck right now.")
    stamp = grid.locator("[data-live-status] time").text_content()

    ann, ben, cy = (Learner(url, name) for name in ("Ann", "Ben", "Cy"))
    ann.answer("12")  # right at once
    ben.answer("14")  # the perimeter: a named mistake
    cy.answer("13")

    rows = grid.locator("table.class-grid tbody tr")
    expect(rows).to_have_count(3, timeout=scaled(20_000))  # no reload: the script fetched the grid again
    expect(rows.nth(0)).to_contain_text("Ann")
    expect(dashboard.locator(".lead")).to_have_text("3 learners with saved work.", timeout=scaled(20_000))
    expect(dashboard.locator("table.numbers tbody tr").first).to_contain_text("1", timeout=scaled(20_000))
    # T1.1 has two exercises that count; each cell says its state in words too.
    expect(rows.nth(0).locator("td.cell")).to_have_text("1/2 in progress")
    expect(rows.nth(1).locator("td.cell")).to_have_text("0/2 in progress")
    assert grid.locator("[data-live-status] time").text_content() != stamp  # it says when it last updated
    expect(grid.locator("[data-live-status]")).to_contain_text("Updates by itself")

    for text in ("15", "16"):  # Cy's third wrong answer makes Cy stuck (3 failed attempts)
        cy.answer(text)
    stuck = dashboard.locator(".stuck-item")
    expect(stuck).to_have_count(1, timeout=scaled(20_000))
    expect(stuck).to_contain_text("Cy")
    expect(stuck).to_contain_text("3 failed attempts")
    stuck.locator("summary").click()  # one click to the latest wrong answer, with its question
    expect(stuck.locator(".latest-failure")).to_contain_text("16")
    expect(stuck.locator(".question .literal").first).to_be_visible()
    expect(dashboard.locator("[data-live-announce]")).to_have_text("1 learner is stuck now.")
    expect(grid.locator("tr.row-stuck")).to_contain_text("Cy", timeout=scaled(20_000))
    screenshot(dashboard, "instructor-live-stuck")
    screenshot(grid, "instructor-live-grid")

    # Keyboard focus survives a live update of the grid.
    grid.locator("table.class-grid a", has_text="Ben").focus()
    ben.answer("12")
    expect(rows.nth(1).locator("td.cell")).to_have_text("1/2 in progress", timeout=scaled(20_000))
    assert grid.evaluate("document.activeElement.textContent") == "Ben"
    assert errors == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("width", [1100, 375], ids=["desktop", "phone"])
def test_axe_finds_no_violation_on_any_instructor_page(
    server: tuple[str, Any], chromium: Any, width: int
) -> None:
    url, app = server
    errors: list[str] = []
    page = _signed_in_page(
        chromium,
        url,
        app,
        f"Axe live {width}",
        errors,
        viewport={"width": width, "height": 900},
        bypass_csp=True,
    )
    worker = Learner(
        url, f"Axe {width}"
    )  # a stuck learner, so the stuck list and its details are checked too
    for text in ("1", "2", "3"):
        worker.answer(text)
    learner = next(
        s.id for s in app.state.qkv.store.class_view.standings({}) if s.display_name == f"Axe {width}"
    )
    for path in (
        "/instructor",
        "/instructor/class",
        "/instructor/class?show=stuck",
        f"/instructor/lessons/{LESSON_ID}",
        f"/instructor/lessons/{LESSON_ID}/items",
        f"/instructor/learners/{learner}",
        f"/instructor/learners/{learner}?exercise={LESSON_ID}/area",
    ):
        page.goto(url + path)
        for details in page.locator("details").all():
            details.evaluate("el => { el.open = true; }")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(
            """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(
                (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))"""
        )
        assert violations == [], f"{path}: {violations}"
    assert errors == []
