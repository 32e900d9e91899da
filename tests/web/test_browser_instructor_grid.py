"""The class grid at a desktop width in Chromium: it takes the window's width, so at 1280 px every lesson of
the built-in chapter, the total and the current exercise show without a scroll, and no name breaks inside a
word (issue 43 found it squeezed into a ~600 px column). Screenshot: ``test-artifacts/instructor-grid-1280.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.browser_support import BROWSER, new_page, screenshot, serve

pytestmark = BROWSER

NAMES = ("Wolfeschlegelsteinhausen", "Ada Lovelace", "Maximiliana Wolfeschlegelstein", "Ben")


@pytest.fixture(scope="module")
def grid_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    folder = tmp_path_factory.mktemp("instructor-grid")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}", secret_key="instructor-grid-browser", warm_spares=0
    )
    app = create_app(settings)
    store = app.state.qkv.store
    for number, name in enumerate(NAMES):
        learner = f"{number:x}" * 36
        store.learners.set_display_name(learner, name)
        store.progress.record_answer(learner, "L4.1", "q", "9, 9", correct=False, message="No.")
        if number < 2:  # two learners with the same program, as the similarity report groups them
            program = f"def param_count(d_model, d_k, d_v):\n    n{number} = d_model * (2 * d_k + d_v)\n    return n{number}\n"
            store.code.record(learner, "L4.1", "functions", program, {"status": "fail", "tests": []})
    with serve(app, name="instructor-grid-uvicorn") as url:
        yield url, app


@pytest.mark.timeout(120)
def test_the_grid_takes_the_page_width_at_1280_px(grid_server: tuple[str, Any], chromium: Any) -> None:
    url, app = grid_server
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1280, "height": 900})
    _, token = app.state.qkv_instructor.desk.add("Grace")
    page.goto(f"{url}/instructor/sign-in#token={token}")
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    page.goto(f"{url}/instructor/class")
    grid = page.locator("table.class-grid")
    assert grid.locator("tbody tr").count() == len(NAMES)
    sizes = page.evaluate(
        """() => {
            const scroller = document.querySelector('.class-grid').closest('.table-scroll');
            const total = [...document.querySelectorAll('.class-grid thead th')].find((th) => th.textContent === 'Total');
            return {
                grid: document.querySelector('.class-grid').getBoundingClientRect().width,
                scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth,
                totalRight: total.getBoundingClientRect().right, viewport: document.documentElement.clientWidth,
                pageScroll: document.documentElement.scrollWidth,
            };
        }"""
    )
    print(f"the grid at 1280 px: {sizes}")
    screenshot(page, "instructor-grid-1280")
    assert sizes["grid"] > 700, sizes  # more than the reading column it was squeezed into
    assert sizes["scrollWidth"] <= sizes["clientWidth"], sizes  # every column shows: no horizontal scroll
    assert sizes["totalRight"] <= sizes["viewport"] and sizes["pageScroll"] <= sizes["viewport"], sizes
    header = grid.locator("thead th").all_text_contents()
    assert [cell.split(" ")[0] for cell in header[1:7]] == [f"L4.{n}" for n in range(1, 7)]
    for name in NAMES:  # a name breaks between words only: one line per word at most
        lines = grid.get_by_role("link", name=name).evaluate("(a) => a.getClientRects().length")
        assert lines <= len(name.split(" ")), (name, lines)
    single = grid.get_by_role("link", name=NAMES[0]).evaluate("(a) => a.getClientRects().length")
    assert single == 1
    assert errors == []


@pytest.mark.timeout(120)
def test_the_similarity_report_shows_a_groups_programs_side_by_side(
    grid_server: tuple[str, Any], chromium: Any
) -> None:
    url, app = grid_server
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1280, "height": 900})
    _, token = app.state.qkv_instructor.desk.add("Hope")
    page.goto(f"{url}/instructor/sign-in#token={token}")
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    page.goto(f"{url}/instructor/lessons/L4.1/same-programs")
    figures = page.locator(".same-program")
    assert figures.count() == 2
    first, second = (figures.nth(i).bounding_box() for i in range(2))
    assert first is not None and second is not None
    assert first["y"] == second["y"] and second["x"] >= first["x"] + first["width"]  # side by side
    screenshot(page, "instructor-same-programs-1280")
    assert errors == []


@pytest.mark.timeout(120)
def test_on_a_phone_a_name_of_ordinary_words_keeps_each_word_whole(
    grid_server: tuple[str, Any], chromium: Any
) -> None:
    """At 375 px the name column was squeezed so narrow that "Lovelace" (and "anonymous" of an anonymous
    learner) broke inside the word; only a word too long for the column (a 24-letter surname) may break."""
    url, app = grid_server
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 375, "height": 800})
    _, token = app.state.qkv_instructor.desk.add("Grace on a phone")
    page.goto(f"{url}/instructor/sign-in#token={token}")
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    page.goto(f"{url}/instructor/class")
    grid = page.locator("table.class-grid")
    screenshot(page, "instructor-grid-375")
    for name in ("Ada Lovelace", "Ben"):
        lines = grid.get_by_role("link", name=name).evaluate("(a) => a.getClientRects().length")
        assert lines <= len(name.split(" ")), (name, lines)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # the table scrolls, not the page
    assert errors == []
