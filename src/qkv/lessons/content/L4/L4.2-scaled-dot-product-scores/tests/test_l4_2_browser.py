"""Lesson L4.2 in a real browser, walked as a learner: wrong answers first, then right; keyboard; phone; dark.

The server and Chromium are the web tests' fixtures (tests/web/fixtures.py), the helpers browser_support's; screenshots go to ``test-artifacts/l42-*.png``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import pytest

from qkv import attention_scores
from qkv.lessons import load_catalog
from tests.web.browser_support import (
    ARTIFACTS,
    BROWSER,
    LiveServer,
    compact,
    new_page,
    page_progress,
    screenshot,
    tab_until,
)
from tests.web.lesson_walk import (
    assert_predict_first_and_no_answer_shown,
    check_code,
    pick_choice,
    reload_and_check_answers,
    type_answer,
    typed_vector,
)

pytestmark = BROWSER
LESSON = load_catalog().lesson("L4.2")


def _url(server: LiveServer) -> str:
    return f"{server.url}/lessons/L4.2"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_learner_walks_lesson_l42(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.url + "/")
    page.get_by_role("link", name=re.compile("Scaled dot-product scores")).click()
    page.wait_for_url(re.compile(r"/lessons/L4\.2"))
    expect(page.locator("h1")).to_have_text(LESSON.title)
    expect(page.locator("body")).to_contain_text(LESSON.place)
    seed = page_progress(page)["variant_seed"]
    variant = LESSON.variant(seed)

    # Predict first: a wrong guess is explained, then the right one.
    pick_choice(page, "guess", "A", "is-wrong")
    expect(page.locator("#feedback-guess")).to_contain_text("square root")
    pick_choice(page, "guess", "B", "is-correct")

    # The widget: its numbers are qkv's, and the slider moves to another d_k.
    widget = page.locator('[data-widget="score-spread"]')
    config = json.loads(widget.get_attribute("data-config"))
    slider = widget.locator('input[type="range"]')
    for index in (2, 3, 4):
        row = config["rows"][index]
        rng = np.random.default_rng([0, row["d_k"]])
        Q, K = rng.standard_normal((16, row["d_k"])), rng.standard_normal((48, row["d_k"]))
        raw = attention_scores(Q, K, scale=1.0)
        expect(widget.locator('[data-spread="raw"]')).to_have_text(compact(float(raw.std()), 2))
        expect(widget.locator('[data-spread="scaled"]')).to_have_text(
            compact(float(attention_scores(Q, K).std()), 2)
        )
        expect(widget.locator("circle")).to_have_count(2 * 48)
        expect(widget.locator("rect")).to_have_count(2 * 48)
        slider.focus()
        page.keyboard.press("ArrowRight")
    widget.screenshot(path=str(ARTIFACTS / "l42-widget-desktop.png"))

    # Part 1: a named mistake first, then the right answers.
    feedback = type_answer(page, "scaled", typed_vector(variant["raw1"]), "is-wrong")
    expect(feedback).to_contain_text("unscaled")
    page.locator("#part1").screenshot(path=str(ARTIFACTS / "l42-part1-wrong.png"))
    assert page.locator("#answer-scaled").evaluate("el => el.closest('form').dataset.status") == "attempted"
    type_answer(page, "raw", typed_vector(variant["raw2"]), "is-wrong")
    expect(page.locator("#feedback-raw")).to_contain_text("scores of the second query")
    type_answer(page, "growth", str(variant["dk_to"] // variant["dk_from"]), "is-wrong")
    expect(page.locator("#feedback-growth")).to_contain_text("variance")
    type_answer(page, "growth", typed_vector([math.sqrt(variant["dk_to"])]).strip("[]"), "is-wrong")
    expect(page.locator("#feedback-growth")).to_contain_text("the spread itself")
    type_answer(page, "under-root", "A", "is-wrong")
    answers = {
        "raw": typed_vector(variant["raw1"]),
        "scaled": typed_vector(variant["scaled1"]),
        "second": typed_vector(variant["scaled2"]),
        "growth": typed_vector([variant["growth"]]).strip("[]"),
        "under-root": "B",
    }
    for exercise_id, answer in answers.items():
        type_answer(page, exercise_id, answer, "is-correct")
    expect(page.locator('.progress-part[data-part="part1"]')).to_have_class(re.compile("is-done"))

    # Part 2: a wrong program gets its hint and shows the call; then the reference passes.
    code = next(exercise for exercise in LESSON.exercises.values() if exercise.kind == "code")
    check_code(
        page, LESSON, code, wrong="by_dk.py", call="scaled_scores(", shot=ARTIFACTS / "l42-code-wrong.png"
    )

    # The quiz: wrong first, then right.
    pick_choice(page, "quiz", "A", "is-wrong")
    pick_choice(page, "quiz", "C", "is-correct")
    pick_choice(page, "order", "B", "is-wrong")
    pick_choice(page, "order", "A", "is-correct")
    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*(\d+) of \1 exercises done\s*$"))
    screenshot(page, "l42-done-desktop")

    # Reload: answers, feedback and progress come back.
    reload_and_check_answers(page, answers, ("part1", "part2", "quiz"))
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_l42_by_keyboard(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(_url(live_server))
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()

    tab_until(page, 'form[data-exercise-id="guess"] input[type="radio"]')
    page.keyboard.press("ArrowDown")  # B
    tab_until(page, 'form[data-exercise-id="guess"] button[type="submit"]')
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-guess")).to_have_class(re.compile("is-correct"))
    tab_until(page, '[data-widget="score-spread"] input[type="range"]')
    outline = page.evaluate("parseFloat(getComputedStyle(document.activeElement).outlineWidth)")
    assert outline >= 2
    page.keyboard.press("End")
    expect(page.locator('[data-widget="score-spread"] output')).to_have_text("512")
    tab_until(page, "#answer-raw")
    page.keyboard.type("one and zero")
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-raw")).to_have_class(re.compile("is-format"))
    page.keyboard.press("Control+A")
    page.keyboard.type(typed_vector(LESSON.variant(page_progress(page)["variant_seed"])["raw1"]))
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-raw")).to_have_class(re.compile("is-correct"))
    screenshot(page, "l42-keyboard")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_l42_fits_a_phone(
    live_server: LiveServer, chromium: Any, page_errors: list[str], scheme: str
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 375, "height": 812}, color_scheme=scheme)
    page.goto(_url(live_server))
    widget = page.locator('[data-widget="score-spread"]')
    expect(widget.locator("svg").first).to_be_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 375, widths
    for svg in widget.locator("svg").all():
        box = svg.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    # The dots keep their colours in both schemes (CSS variables, not black).
    fill = widget.locator("circle.dot-raw").first.evaluate("el => getComputedStyle(el).fill")
    assert fill not in ("rgb(0, 0, 0)", "none"), fill
    widget.screenshot(path=str(ARTIFACTS / f"l42-widget-375-{scheme}.png"))
    screenshot(page, f"l42-375px-{scheme}")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(90)
def test_l42_fresh_page_asks_first(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    """Predict first is above the idea, and no Part 1 answer is on the page before it is typed."""
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(_url(live_server))
    expect(page.locator("#predict")).to_be_visible()
    assert_predict_first_and_no_answer_shown(page, LESSON, ("raw1", "scaled1", "scaled2"))
    assert page_errors == []
    page.context.close()
