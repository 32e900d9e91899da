"""L4.6 in Chromium: the whole lesson walked (wrong answers first), the block widget by keyboard, a phone in both schemes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.web.browser_support import (
    ARTIFACTS,
    BROWSER,
    LiveServer,
    compact,
    new_page,
    page_progress,
    screenshot,
)
from tests.web.lesson_walk import answer_text, assert_fits_a_phone, type_answer, walk

pytestmark = BROWSER


def _lesson() -> Any:
    from qkv.lessons import load_catalog

    return load_catalog().lesson("L4.6")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_learner_walks_the_whole_lesson_and_the_index_says_complete(
    live_server: LiveServer, chromium: Any
) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    lesson = _lesson()
    walk(page, live_server.url, lesson, "l46-done-desktop")
    page.goto(live_server.url + "/")
    card = page.locator(".lesson-card", has=page.locator(f'a[href="/lessons/{lesson.id}"]'))
    expect(card).to_contain_text("✓ complete")
    assert errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_the_block_widget_by_keyboard(live_server: LiveServer, chromium: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.6")
    widget = page.locator('[data-widget="residual-block"]')
    config = json.loads(widget.get_attribute("data-config"))
    views = {(v["scale"], v["residual"], v["norm"]): v for v in config["views"]}

    def shows(view: dict[str, Any]) -> None:
        for i, (norm, cosine) in enumerate(zip(view["row_norms"], view["cosines"], strict=True)):
            expect(widget.locator(f'[data-norm="{i}"]')).to_have_text(compact(norm))
            expect(widget.locator(f'[data-cosine="{i}"]')).to_have_text(compact(cosine))

    expect(widget.locator("svg.block-diagram")).to_be_visible()
    shows(views[1, True, True])
    assert "(4, 16)" in widget.locator("svg.block-diagram").inner_html()
    widget.get_by_role("checkbox", name="Residual connections").focus()
    page.keyboard.press("Space")
    shows(views[1, False, True])
    expect(widget.locator(".block-arrow.is-off").first).to_be_visible()
    page.keyboard.press("Tab")
    expect(widget.get_by_role("checkbox", name="Layer norms")).to_be_focused()
    page.keyboard.press("Space")
    shows(views[1, False, False])
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    shows(views[10, False, False])
    screenshot(page, "l46-widget-keyboard")
    assert errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_the_new_hand_mistakes_are_named(live_server: LiveServer, chromium: Any) -> None:
    """Weights for activations, a sum for a mean, summed squares for the variance, σ² for σ: each is named."""
    from playwright.sync_api import expect

    lesson = _lesson()
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.6")
    names = lesson.hooks.namespace(lesson.variant(page_progress(page)["variant_seed"]))
    for exercise_id, mistake in (
        ("hidden-shape", "hidden_w1"),
        ("row-mean", "mean_is_sum"),
        ("row-var", "var_sum"),
        ("row-normed", "normed_by_var"),
    ):
        typed = answer_text(names[mistake])
        feedback = type_answer(page, exercise_id, typed, "is-wrong")
        expect(feedback).to_contain_text(lesson.exercises[exercise_id].mistakes[mistake])
        assert "Almost" not in feedback.inner_text(), (exercise_id, typed)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#part1").screenshot(path=str(ARTIFACTS / "l46-new-mistakes.png"))
    assert errors == []
    page.context.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_in_either_scheme(live_server: LiveServer, chromium: Any, scheme: str) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 375, "height": 800}, color_scheme=scheme)
    page.goto(f"{live_server.url}/lessons/L4.6")
    expect(page.locator('[data-widget="residual-block"] svg.block-diagram')).to_be_visible()
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()
    assert_fits_a_phone(page, 375)
    # No answer is on the page before it is earned.
    part1 = page.locator("#part1").inner_text()
    assert "3150336" not in part1 and not re.search(r"1\.60\d", part1)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#idea").screenshot(path=str(ARTIFACTS / f"l46-idea-375px-{scheme}.png"))
    screenshot(page, f"l46-375px-{scheme}")
    assert errors == []
    page.context.close()
