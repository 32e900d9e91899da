"""L4.5 in Chromium: the whole lesson walked (wrong answers first), the heads widget by keyboard, a phone in dark mode."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.web.browser_support import ARTIFACTS, BROWSER, LiveServer, new_page, page_progress, screenshot
from tests.web.lesson_walk import answer_text, assert_fits_a_phone, check_code, pick_choice, type_answer, walk

pytestmark = BROWSER


def _lesson() -> Any:
    from qkv.lessons import load_catalog

    return load_catalog().lesson("L4.5")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_learner_walks_the_whole_lesson(live_server: LiveServer, chromium: Any) -> None:
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    walk(page, live_server.url, _lesson(), "l45-done-desktop")
    assert errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_the_heads_widget_by_keyboard(live_server: LiveServer, chromium: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.5")
    widget = page.locator('[data-widget="head-heatmaps"]')
    config = json.loads(widget.get_attribute("data-config"))
    expect(widget.locator("svg.heatmap")).to_have_count(2)
    # The cells show the server's numbers for two heads, rounded to two decimals.
    two = next(v for v in config["views"] if v["h"] == 2 and not v["causal"])
    first_cell = widget.locator("svg.heatmap").first.locator("text.heatmap-value").first
    expect(first_cell).to_have_text(f"{two['weights'][0][0][0]:.2f}".rstrip("0").rstrip("."))
    expect(widget.locator("li[data-shape]").nth(1)).to_have_text("Q = X·Wq, split (2, 4, 2)")

    # Arrow keys move between the numbers of heads; Space toggles the causal mask.
    widget.get_by_label("2 heads").focus()
    page.keyboard.press("ArrowRight")
    expect(widget.get_by_label("4 heads")).to_be_checked()
    expect(widget.locator("svg.heatmap")).to_have_count(4)
    expect(widget.locator("li[data-shape]").nth(1)).to_have_text("Q = X·Wq, split (4, 4, 1)")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(widget.get_by_label("1 head", exact=True)).to_be_checked()
    expect(widget.locator("svg.heatmap")).to_have_count(1)
    widget.get_by_label("Causal mask in every head").focus()
    page.keyboard.press("Space")
    one_causal = next(v for v in config["views"] if v["h"] == 1 and v["causal"])
    label = widget.locator("svg.heatmap").first.get_attribute("aria-label")
    assert label is not None and label.startswith("head 0: the attends 1 to the, 0 to cat")
    assert one_causal["weights"][0][0] == [1.0, 0.0, 0.0, 0.0]
    screenshot(page, "l45-widget-keyboard")
    assert errors == []
    page.context.close()


def _before_part1(page: Any) -> str:
    return " ".join(
        (page.locator("#predict").inner_text() + " " + page.locator("#idea").inner_text()).split()
    )


@pytest.mark.timeout(180)
def test_part1_answers_are_not_given_away_and_its_new_mistakes_are_named(
    live_server: LiveServer, chromium: Any
) -> None:
    from playwright.sync_api import expect

    lesson = _lesson()
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.5")
    seed = page_progress(page)["variant_seed"]
    names = lesson.hooks.namespace(lesson.variant(seed))

    def given_away(text: str) -> list[str]:
        found = [
            str(names[key])
            for key in ("d_head", "params")
            if re.search(rf"(?<![\d.]){names[key]}(?![\d.])", text)
        ]
        return found + [formula for formula in ("d_model²", "d_model^2") if formula in text]

    assert given_away(_before_part1(page)) == []
    # Every feedback of the predict-first question explains the idea without Part 1's numbers.
    for choice in lesson.exercises["guess"].choices:
        pick_choice(page, "guess", choice.letter, "is-correct" if choice.correct else "is-wrong")
        expect(page.locator("#feedback-guess")).to_contain_text(choice.feedback[:40])
        assert given_away(_before_part1(page)) == [], choice.letter
    # The text over the heatmaps says where head 1 sends the first token, with the box off and on.
    assert "head 1 sends it round to the last token instead" in _before_part1(page)
    # Typing h, or d_model·h, for d_head is named as that mistake.
    for mistake in ("d_head_is_h", "d_head_times_h"):
        feedback = type_answer(page, "d-head", answer_text(names[mistake]), "is-wrong")
        expect(feedback).to_contain_text(lesson.exercises["d-head"].mistakes[mistake])
    # A program that never merges its heads is told to merge them.
    page.locator("#predict").screenshot(path=str(_artifact("l45-predict-feedback")))
    check_code(
        page,
        lesson,
        lesson.exercises["functions"],
        wrong="heads_not_merged.py",
        call="multi_head_attention(",
        shot=_artifact("l45-heads-not-merged"),
    )
    assert errors == []
    page.context.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_in_either_scheme(live_server: LiveServer, chromium: Any, scheme: str) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 375, "height": 800}, color_scheme=scheme)
    page.goto(f"{live_server.url}/lessons/L4.5")
    expect(page.locator('[data-widget="head-heatmaps"] svg.heatmap')).to_have_count(2)
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()
    assert_fits_a_phone(page, 375)
    # No answer is on the page before it is earned: the variant's head weights and output, to 6, 3 or
    # 2 decimals and in either order, appear nowhere in what the learner sees, nor its weight count.
    lesson = _lesson()
    v = lesson.variant(page_progress(page)["variant_seed"])
    seen = page.locator("main").inner_text()
    for value in v["head_weights"] + v["head_output"]:
        for written in {f"{abs(value):.{d}f}".rstrip("0") for d in (6, 3, 2)} - {"0.", "1.", "2."}:
            assert not re.search(rf"(?<![\d.]){re.escape(written)}(?!\d)", seen), (written, v)
    assert not re.search(rf"(?<![\d.]){v['params']}(?![\d.])", seen)
    page.locator("#idea").screenshot(path=str(_artifact(f"l45-idea-375px-{scheme}")))
    screenshot(page, f"l45-375px-{scheme}")
    assert errors == []
    page.context.close()


def _artifact(name: str) -> Any:

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / f"{name}.png"
