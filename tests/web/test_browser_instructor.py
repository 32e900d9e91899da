"""The instructor's dashboard in Chromium: sign in by keyboard, read the class, phone width, dark mode, axe.

One uvicorn server serves the test chapter T1 on a SQLite file holding the seeded class of
``instructor_seed``. Screenshots go to ``test-artifacts/instructor-*.png`` (ignored by git).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser_support import BROWSER, new_page, screenshot, serve, tab_to
from tests.web.instructor_seed import BEN, LESSON_ID, catalog, seed_class

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"  # bundled; nothing is fetched

pytestmark = BROWSER


class Server:
    def __init__(self, url: str, app: Any) -> None:
        self.url = url
        self.app = app

    def sign_in_link(self, name: str) -> str:
        _, token = self.app.state.qkv_instructor.desk.add(name)
        return f"{self.url}/instructor/sign-in#token={token}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    folder = tmp_path_factory.mktemp("instructor-browser")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}", secret_key="instructor-browser", warm_spares=0
    )
    app = create_app(settings, catalog=catalog())
    seed_class(app.state.qkv.store)
    with serve(app, name="instructor-browser-uvicorn") as url:
        yield Server(url, app)


def _shot(page: Any, name: str) -> None:
    screenshot(page, f"instructor-{name}")


def _charts_match_their_tables(page: Any) -> int:
    """Every chart's table has one row per bar and the numbers the bars print; returns the chart count."""
    figures = page.locator("figure.chart-figure")
    for index in range(figures.count()):
        figure = figures.nth(index)
        assert figure.locator("svg[aria-hidden='true']").count() == 1
        values = figure.locator("svg .chart-value").all_text_contents()
        rows = figure.locator("table tbody tr")
        assert rows.count() == len(values)
        table_text = figure.locator("table").text_content() or ""
        for value in values:  # each bar's first number is in its table
            first = re.match(r"\d+", value)
            assert first and first.group(0) in table_text
        assert figure.locator("table caption").text_content() == figure.locator("figcaption").text_content()
    return int(figures.count())


@pytest.mark.timeout(240)
def test_an_instructor_signs_in_and_reads_the_class_by_keyboard(server: Server, chromium: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(server.sign_in_link("Grace"))
    tab_to(page, "el => el.tagName === 'BUTTON'", limit=60)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/instructor$"))
    expect(page.locator("h1")).to_have_text("Class dashboard")
    expect(page.locator(".lead")).to_contain_text("4 learners")
    row = page.locator("table.numbers tbody tr").first
    expect(row).to_contain_text("area")
    assert _charts_match_their_tables(page) == 1
    _shot(page, "dashboard-desktop")

    # Keyboard: the focused link is visibly outlined, and Enter opens the lesson's detail page.
    tab_to(
        page, "el => el.tagName === 'A' && el.getAttribute('href') === '/instructor/lessons/T1.1'", limit=60
    )
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/instructor/lessons/{re.escape(LESSON_ID)}$"))
    assert _charts_match_their_tables(page) == 4  # mistakes and variants; failing tests and hints
    expect(page.get_by_role("table", name="area: unmatched wrong answers")).to_contain_text("13")
    expect(page.locator("#exercise-shapes figure").first).to_contain_text("perimeter with fractional sides")
    _shot(page, "lesson-desktop")

    # One learner's timeline, from the grid of learners.
    page.goto(server.url + "/instructor/class")
    page.get_by_role("link", name="Ben").click()
    page.wait_for_url(re.compile(rf"/instructor/learners/{BEN}$"))
    expect(page.locator(".timeline-item")).to_have_count(4)
    _shot(page, "learner-desktop")

    # Signing out by keyboard ends the session.
    tab_to(page, "el => el.tagName === 'BUTTON' && el.textContent.includes('Sign out')", limit=60)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/instructor/sign-in$"))
    assert errors == []
    response = page.goto(server.url + "/instructor")
    assert response is not None and response.status == 401


@pytest.mark.timeout(240)
def test_the_dashboard_at_phone_width_in_dark_mode(server: Server, chromium: Any) -> None:
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": 375, "height": 800}, color_scheme="dark", is_mobile=True
    )
    page.goto(server.sign_in_link("Ada"))
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    for path, name in (
        ("/instructor", "dashboard-phone-dark"),
        (f"/instructor/lessons/{LESSON_ID}", "lesson-phone-dark"),
        (f"/instructor/learners/{BEN}", "learner-phone-dark"),
        ("/instructor/class", "class-phone-dark"),
        (f"/instructor/lessons/{LESSON_ID}/items", "items-phone-dark"),
    ):
        page.goto(server.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375, f"{path} is {width} px wide at a 375 px viewport"
        # The tables that hold whole messages fit the phone without scrolling sideways, and a message
        # gets the row's width (it was squeezed to 90 px beside a long mistake id).
        tables = page.evaluate(
            """() => [...document.querySelectorAll('.table-scroll table.stacks-when-narrow')].map(t => [
                t.parentElement.clientWidth, t.scrollWidth,
                Math.max(0, ...[...t.querySelectorAll('td')].map(td => td.getBoundingClientRect().width))])"""
        )
        assert tables or not path.startswith("/instructor/lessons/"), "the lesson page shows its mistakes"
        for scroll, table, cell in tables:
            assert table <= scroll and cell >= 0.8 * scroll, (path, scroll, table, cell)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        red, green, blue = (int(n) for n in re.findall(r"\d+", background)[:3])
        assert red + green + blue < 150, background  # dark mode is dark
        bar = page.locator("rect.chart-bar").first
        if bar.count():
            fill = bar.evaluate("el => getComputedStyle(el).fill")
            assert fill != background
        _shot(page, name)
    assert errors == []


@pytest.mark.timeout(240)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1100, 375], ids=["desktop", "phone"])
def test_axe_finds_no_violations_on_the_instructor_pages(
    server: Server, chromium: Any, width: int, scheme: str
) -> None:
    errors: list[str] = []
    # bypass_csp lets Playwright inject the bundled axe-core; the pages' own markup is unchanged.
    page = new_page(
        chromium, errors, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    page.goto(server.sign_in_link(f"Axe {width} {scheme}"))
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    for path in (
        "/instructor",
        "/instructor/class",
        "/instructor/class?sort=progress&order=desc&show=stuck&q=zz",  # the empty grid too
        f"/instructor/lessons/{LESSON_ID}",
        f"/instructor/lessons/{LESSON_ID}/items",
        f"/instructor/lessons/{LESSON_ID}/same-programs",
        f"/instructor/learners/{BEN}",
    ):
        page.goto(server.url + path)
        page.add_script_tag(path=str(AXE))
        violations = page.evaluate(
            """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(
                (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))"""
        )
        assert violations == [], f"{path}: {violations}"
    assert errors == []
