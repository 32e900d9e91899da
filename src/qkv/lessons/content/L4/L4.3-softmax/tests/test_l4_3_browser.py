"""Lesson L4.3 in a real browser, walked as a learner: wrong answers first, then right; keyboard; phone; dark.

The server and Chromium are the web tests' fixtures (tests/web/fixtures.py), the helpers browser_support's; screenshots go to ``test-artifacts/l43-*.png``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from qkv import softmax
from qkv.lessons import load_catalog
from tests.web.browser_support import (
    ARTIFACTS,
    BROWSER,
    LiveServer,
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
LESSON = load_catalog().lesson("L4.3")


def _six(values: Any) -> str:
    """format.js formatNumber: six decimals."""
    return "[" + ", ".join(f"{float(v):.6f}" for v in values) + "]"


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_learner_walks_lesson_l43(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.url + "/")
    page.get_by_role("link", name=re.compile("Softmax: from scores to weights")).click()
    page.wait_for_url(re.compile(r"/lessons/L4\.3"))
    expect(page.locator("h1")).to_have_text(LESSON.title)
    expect(page.locator("body")).to_contain_text(LESSON.place)
    variant = LESSON.variant(page_progress(page)["variant_seed"])

    pick_choice(page, "guess", "B", "is-wrong")
    expect(page.locator("#feedback-guess")).to_contain_text("differences")
    pick_choice(page, "guess", "C", "is-correct")

    # The widget starts from qkv's numbers; moving a score recomputes weights and output equal to qkv's.
    widget = page.locator('[data-widget="softmax-bars"]')
    config = json.loads(widget.get_attribute("data-config"))
    V = np.array(config["V"])
    expect(widget.locator("[data-weights]")).to_have_text(_six(softmax(config["scores"])))
    expect(widget.locator("[data-output]")).to_have_text(_six(softmax(config["scores"]) @ V))
    first = widget.locator('input[type="range"]').first
    first.focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    scores = [float(s.input_value()) for s in widget.locator('input[type="range"]').all()]
    assert scores[0] != config["scores"][0]
    expect(widget.locator("[data-weights]")).to_have_text(_six(softmax(scores)))
    expect(widget.locator("[data-output]")).to_have_text(_six(softmax(scores) @ V))
    expect(widget.locator("rect")).to_have_count(3)
    # + 1000: the plain formula is NaN, the stable weights do not move.
    widget.get_by_label("Add 1000 to every score").check()
    expect(widget.locator("[data-plain]")).to_contain_text("NaN")
    expect(widget.locator("[data-weights]")).to_have_text(_six(softmax(np.array(scores) + 1000)))
    widget.screenshot(path=str(ARTIFACTS / "l43-widget-desktop.png"))

    # Part 1: named mistakes first, then the right answers.
    feedback = type_answer(page, "weights", typed_vector(variant["scaled"]), "is-wrong")
    expect(feedback).to_contain_text("Scores are not yet weights")
    type_answer(page, "output", typed_vector(variant["weights"]), "is-wrong")
    expect(page.locator("#feedback-output")).to_contain_text("weighted sum of the rows of V")
    page.locator("#part1").screenshot(path=str(ARTIFACTS / "l43-part1-wrong.png"))
    answers = {
        "weights": typed_vector(variant["weights"]),
        "output": typed_vector(variant["output"]),
        "shifted": typed_vector(variant["shifted_weights"]),
        "sharper": typed_vector(variant["sharper_weights"]),
    }
    for exercise_id, answer in answers.items():
        type_answer(page, exercise_id, answer, "is-correct")
    expect(page.locator('.progress-part[data-part="part1"]')).to_have_class(re.compile("is-done"))

    # Part 2: the textbook softmax overflows and is told so; the reference passes.
    code = next(exercise for exercise in LESSON.exercises.values() if exercise.kind == "code")
    check_code(page, LESSON, code, wrong="no_max.py", call="softmax(", shot=ARTIFACTS / "l43-code-wrong.png")

    pick_choice(page, "quiz", "A", "is-wrong")
    pick_choice(page, "quiz", "B", "is-correct")
    pick_choice(page, "underflow", "B", "is-wrong")
    pick_choice(page, "underflow", "A", "is-correct")
    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*(\d+) of \1 exercises done\s*$"))
    screenshot(page, "l43-done-desktop")

    reload_and_check_answers(page, answers, ("part1", "part2", "quiz"))
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_l43_by_keyboard(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.3")
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()

    tab_until(page, '[data-widget="softmax-bars"] input[type="range"]')
    assert page.evaluate("parseFloat(getComputedStyle(document.activeElement).outlineWidth)") >= 2
    page.keyboard.press("End")  # the first score to its maximum, 4
    widget = page.locator('[data-widget="softmax-bars"]')
    scores = [float(s.input_value()) for s in widget.locator('input[type="range"]').all()]
    assert scores[0] == 4
    expect(widget.locator("[data-weights]")).to_have_text(_six(softmax(scores)))
    tab_until(page, '[data-widget="softmax-bars"] input[type="checkbox"]')
    page.keyboard.press("Space")
    expect(widget.locator("[data-plain]")).to_contain_text("NaN")
    tab_until(page, "#answer-weights")
    page.keyboard.type("0.67, 0.33, 0")
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-weights")).to_have_class(re.compile("is-format"))
    page.keyboard.press("Control+A")
    weights = LESSON.variant(page_progress(page)["variant_seed"])["weights"]
    page.keyboard.type(", ".join(f"{w:.4f}" for w in weights))
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-weights")).to_have_class(re.compile("is-correct"))
    screenshot(page, "l43-keyboard")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_l43_fits_a_phone(
    live_server: LiveServer, chromium: Any, page_errors: list[str], scheme: str
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 375, "height": 812}, color_scheme=scheme)
    page.goto(f"{live_server.url}/lessons/L4.3")
    widget = page.locator('[data-widget="softmax-bars"]')
    expect(widget.locator("svg")).to_be_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 375, widths
    box = widget.locator("svg").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, box
    fill = widget.locator("rect").first.evaluate("el => getComputedStyle(el).fill")
    assert fill not in ("rgb(0, 0, 0)", "none"), fill
    widget.get_by_label("Add 1000 to every score").check()
    widget.screenshot(path=str(ARTIFACTS / f"l43-widget-375-{scheme}.png"))
    screenshot(page, f"l43-375px-{scheme}")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(90)
def test_l43_fresh_page_asks_first(live_server: LiveServer, chromium: Any, page_errors: list[str]) -> None:
    """Predict first is above the idea, and no Part 1 answer is on the page before it is typed."""
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{live_server.url}/lessons/L4.3")
    expect(page.locator("#predict")).to_be_visible()
    assert_predict_first_and_no_answer_shown(
        page, LESSON, ("weights", "output", "shifted_weights", "sharper_weights")
    )
    assert page_errors == []
    page.context.close()
