"""Every lesson's widgets on a phone: their tables of numbers fit the screen without scrolling sideways.

The server and Chromium are the web tests' fixtures (tests/web/fixtures.py); screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

from typing import Any

import pytest

from qkv.lessons import load_catalog
from tests.web.browser_support import ARTIFACTS, BROWSER, LiveServer, new_page

pytestmark = BROWSER


@pytest.mark.timeout(240)
def test_widget_tables_fit_a_phone_in_every_lesson(chromium: Any, live_server: LiveServer) -> None:
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": 375, "height": 800}, color_scheme="dark", is_mobile=True
    )
    checked = 0
    ARTIFACTS.mkdir(exist_ok=True)
    for lesson in load_catalog().lessons:
        page.goto(f"{live_server.url}/lessons/{lesson.id}")
        page.wait_for_selector("html.js-ready")
        page.wait_for_load_state("networkidle")
        tables = page.evaluate(
            """() => [...document.querySelectorAll('[data-widget] .table-scroll')]
                .filter((e) => e.offsetParent !== null)
                .map((e) => [e.closest('[data-widget]').dataset.widget, e.scrollWidth, e.clientWidth])"""
        )
        checked += len(tables)
        wide = [(lesson.id, *table) for table in tables if table[1] > table[2] + 1]
        for index, table in enumerate(page.locator("[data-widget] .table-scroll").all()):
            if table.is_visible():
                table.screenshot(path=str(ARTIFACTS / f"widget-table-{lesson.id}-{index}-phone-dark.png"))
        assert wide == [], f"widget tables wider than their box (lesson, widget, width, box): {wide}"
    assert checked >= 3  # the projection, attention-explorer and residual-block tables at least
    assert errors == []
