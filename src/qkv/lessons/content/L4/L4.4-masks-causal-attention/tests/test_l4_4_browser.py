"""Lesson L4.4 in a real browser: a learner walks it wrong-answer-first, by keyboard, on a phone, in the dark.

The server and Chromium are the web tests' fixtures (tests/web/fixtures.py: the real app on uvicorn, a temporary SQLite
database, the real grader). Every number the mask grid shows is compared with what ``qkv`` computes for
the mask the test has toggled. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from qkv import attention, causal_mask
from tests.time_scale import scaled
from tests.web.browser_support import (
    ARTIFACTS,
    BROWSER,
    DEEP_ACTIVE,
    LiveServer,
    new_page,
    page_progress,
    replace_editor_text,
    screenshot,
    tab_until,
)
from tests.web.lesson_walk import reload_and_check_answers

pytestmark = BROWSER

CORRECT = """import numpy as np

def causal_mask(n_q, n_k):
    return np.arange(n_k)[None, :] <= np.arange(n_q)[:, None]

def masked_attention(Q, K, V, mask):
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), (len(Q), len(K)))
    S = np.where(mask, Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)
    peak = np.where(mask.any(axis=1, keepdims=True), S.max(axis=1, keepdims=True), 0.0)
    E = np.where(mask, np.exp(np.where(mask, S - peak, 0.0)), 0.0)
    total = E.sum(axis=1, keepdims=True)
    A = E / np.where(total > 0, total, 1.0)
    return A @ V, A

def padding_mask(lengths, n_k):
    return np.arange(n_k)[None, :] < np.asarray(lengths)[:, None]
"""
# The classic slip: the softmax over every key, then the masked weights zeroed.
AFTER_SOFTMAX = CORRECT.replace(
    """    S = np.where(mask, Q @ K.T / np.sqrt(Q.shape[1]), -np.inf)
    peak = np.where(mask.any(axis=1, keepdims=True), S.max(axis=1, keepdims=True), 0.0)
    E = np.where(mask, np.exp(np.where(mask, S - peak, 0.0)), 0.0)
    total = E.sum(axis=1, keepdims=True)
    A = E / np.where(total > 0, total, 1.0)
""",
    """    S = Q @ K.T / np.sqrt(Q.shape[1])
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True) * mask
""",
)


def _lesson() -> Any:
    from qkv.lessons import load_catalog

    return load_catalog().lesson("L4.4")


def _six(values: Any) -> str:
    return "[" + ", ".join(f"{float(v):.6f}" for v in values) + "]"


def _grid_state(widget: Any) -> np.ndarray:
    pressed = widget.locator("button.mask-toggle").evaluate_all(
        "nodes => nodes.map(n => [Number(n.dataset.query), Number(n.dataset.key), n.getAttribute('aria-pressed')])"
    )
    n_q = 1 + max(i for i, _, _ in pressed)
    n_k = 1 + max(j for _, j, _ in pressed)
    mask = np.zeros((n_q, n_k), dtype=bool)
    for i, j, state in pressed:
        mask[i, j] = state == "true"
    return mask


def _assert_widget_is_qkv(widget: Any, config: dict[str, Any], policy: str = "zero") -> None:
    """The heatmap's weights and the outputs equal qkv's for the mask the grid shows now."""
    from playwright.sync_api import expect

    mask = _grid_state(widget)
    O, A = attention(config["Q"], config["K"], config["V"], mask=mask, all_masked=policy, return_weights=True)
    for i in range(len(mask)):
        if policy == "nan" and not mask[i].any():
            expect(widget.locator(f'[data-output="{i}"]')).to_have_text("[NaN, NaN]")
            continue
        expect(widget.locator(f'[data-output="{i}"]')).to_have_text(_six(O[i]))
        shown = widget.locator(f'rect.heat-cell[data-query="{i}"]').evaluate_all(
            "nodes => nodes.map(n => Number(n.dataset.weight))"
        )
        np.testing.assert_allclose(shown, A[i], rtol=1e-12, atol=1e-15)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_learner_walks_the_masks_lesson(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    lesson = _lesson()
    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.url + "/")
    page.get_by_role("link", name=re.compile("Masks and causal attention")).click()
    page.wait_for_url(re.compile(r"/lessons/L4\.4"))
    expect(page.locator("h1")).to_have_text(lesson.title)
    expect(page.locator("body")).to_contain_text(_lesson().place)
    seed = page_progress(page)["variant_seed"]
    variant = lesson.variant(seed)

    # Predict first: the wrong choice first, then the right one; it does not count toward done.
    predict = page.locator('form[data-exercise-id="predict"]')
    predict.locator('input[value="A"]').check()
    predict.get_by_role("button", name="Check").click()
    expect(page.locator("#feedback-predict")).to_have_class(re.compile("is-wrong"))
    predict.locator('input[value="B"]').check()
    predict.get_by_role("button", name="Check").click()
    expect(page.locator("#feedback-predict")).to_have_class(re.compile("is-correct"))

    # Part 1: wrong answers first, each named; then the right ones, typed and sent with Enter.
    wrong = [
        ("weights", _six(_after(variant)), "after the softmax"),
        ("weights", _six(_even(variant)), "evenly"),
        (
            "causal-row",
            "[" + ", ".join(str(1 - v) for v in variant["causal_row"]) + "]",
            "reverse of what was asked",
        ),
        # The right count of keys at the end of the row: named as such, not as a slip in the order of typing.
        (
            "causal-row",
            "[" + ", ".join(str(v) for v in variant["causal_row"][::-1]) + "]",
            "at the wrong end",
        ),
        ("masked-scores", "A", "multiplies the scores by the mask"),
    ]
    for exercise_id, answer, words in wrong:
        box = page.locator(f"#answer-{exercise_id}")
        box.fill(answer)
        box.press("Enter")
        feedback = page.locator(f"#feedback-{exercise_id}")
        expect(feedback).to_have_class(re.compile("is-wrong"))
        expect(feedback).to_contain_text(words)
        expect(feedback).not_to_contain_text("reverse order")
    right = {
        "weights": _six(variant["weights_causal"]),
        "output": _six(variant["output_causal"]),
        "causal-row": "[" + ", ".join(str(v) for v in variant["causal_row"]) + "]",
        "masked-scores": "B",
        "fully-masked": "[0, 0]",
    }
    for exercise_id, answer in right.items():
        box = page.locator(f"#answer-{exercise_id}")
        box.fill(answer)
        box.press("Enter")
        expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile("is-correct"))
    expect(page.locator('.progress-part[data-part="part1"]')).to_have_class(re.compile("is-done"))

    # The mask grid starts on the causal preset; its numbers are qkv's.
    widget = page.locator('[data-widget="mask-grid"]')
    config = json.loads(widget.get_attribute("data-config"))
    assert (_grid_state(widget) == causal_mask(4, 4)).all()
    _assert_widget_is_qkv(widget, config)
    # A mouse click masks key 0 for query 3; the weights and output follow.
    widget.locator('button.mask-toggle[data-query="3"][data-key="0"]').click()
    assert not _grid_state(widget)[3, 0]
    _assert_widget_is_qkv(widget, config)
    # The keyboard: arrows move between cells, Space toggles (query 3, key 1 off, then key 3 of query 2 on).
    widget.locator('button.mask-toggle[data-query="3"][data-key="0"]').focus()
    page.keyboard.press("ArrowRight")
    expect(widget.locator('button.mask-toggle[data-query="3"][data-key="1"]')).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(widget.locator('button.mask-toggle[data-query="2"][data-key="3"]')).to_be_focused()
    page.keyboard.press("Enter")
    state = _grid_state(widget)
    assert not state[3, 1] and state[2, 3]
    # The grid is one tab stop: only the focused cell takes Tab, and Tab leaves the grid.
    roving = widget.locator("button.mask-toggle").evaluate_all("(bs) => bs.map((b) => b.tabIndex)")
    assert sorted(roving) == [-1] * 15 + [0], roving
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('mask-toggle')") is False
    page.keyboard.press("Shift+Tab")
    expect(widget.locator('button.mask-toggle[data-query="2"][data-key="3"]')).to_be_focused()
    _assert_widget_is_qkv(widget, config)
    # The padding preset masks key 3 for every query.
    widget.get_by_role("button", name="Padding (length 3)").click()
    assert (_grid_state(widget) == (np.arange(4) < 3)).all()
    _assert_widget_is_qkv(widget, config)
    # The diagonal excluded leaves query 0 with no key: it is outlined, and each policy shows its result.
    widget.get_by_role("button", name="Diagonal excluded (a mistake)").click()
    expect(widget.locator('[data-dead-row="0"]')).to_have_count(1)
    expect(widget.locator('[data-dead-row="1"]')).to_have_count(0)
    _assert_widget_is_qkv(widget, config, "zero")
    expect(widget.locator('.mask-outputs tr.is-dead[data-query="0"]')).to_contain_text(
        "no key left: zero weights and output"
    )
    widget.get_by_label("NaN, the 0/0 itself").check()
    _assert_widget_is_qkv(widget, config, "nan")
    widget.get_by_label("raise an error").check()
    with pytest.raises(ValueError) as raised:
        attention(config["Q"], config["K"], config["V"], mask=_grid_state(widget), all_masked="raise")
    expect(widget.locator(".mask-error")).to_have_text(f"ValueError: {raised.value}")
    expect(widget.locator('[data-output="1"]')).to_have_text("none: the call raised")
    widget.get_by_label("−1e9 instead of −∞ (a common shortcut)").check()
    expect(widget.locator('[data-output="0"]')).to_have_text(_six(np.mean(config["V"], axis=0)))
    screenshot(page, "l44-widget-fill-desktop")

    # Part 2: masking after the softmax fails with its hint; the correct code passes every test.
    code_box = page.locator(".code-exercise")
    editor = code_box.locator(".cm-content")
    results = code_box.locator(".grade-results")
    replace_editor_text(page, editor, AFTER_SOFTMAX)
    page.keyboard.press("Control+Enter")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✗ \d+ of \d+ tests passed"), timeout=scaled(60_000)
    )
    expect(results.locator(".test-hint").first).to_contain_text("The mask was applied after the softmax")
    screenshot(page, "l44-code-wrong-desktop")
    replace_editor_text(page, editor, CORRECT)
    page.keyboard.press("Control+Enter")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✓ All \d+ tests passed"), timeout=scaled(60_000)
    )

    # The quiz: a wrong choice first, then the right ones.
    quiz = page.locator('form[data-exercise-id="quiz-order"]')
    quiz.locator('input[value="A"]').check()
    quiz.get_by_role("button", name="Check").click()
    expect(page.locator("#feedback-quiz-order")).to_have_class(re.compile("is-wrong"))
    for exercise_id, letter in (("quiz-order", "C"), ("quiz-policy", "A"), ("quiz-large-negative", "B")):
        form = page.locator(f'form[data-exercise-id="{exercise_id}"]')
        form.locator(f'input[value="{letter}"]').check()
        form.get_by_role("button", name="Check").click()
        expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile("is-correct"))

    # Predict first does not count: 9 exercises, all done.
    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*9 of 9 exercises done\s*$"))
    screenshot(page, "l44-done-desktop")

    # Reload: the answers, the code's result and the progress are kept.
    reload_and_check_answers(page, right)
    expect(page.locator(".code-exercise .grade-summary")).to_have_text(re.compile(r"✓ All \d+ tests passed"))
    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*9 of 9 exercises done\s*$"))
    assert page_errors == []
    page.context.close()


def _after(variant: dict[str, Any]) -> np.ndarray:
    """Query 1's weights over the three keys, masked after the softmax."""
    from qkv import attention_scores, softmax

    return softmax(attention_scores([variant["q"]], variant["K"]))[0] * causal_mask(3, 3)[1]


def _even(variant: dict[str, Any]) -> np.ndarray:
    """Query 1's two allowed keys sharing the weight evenly, with no softmax."""
    return causal_mask(3, 3)[1] / causal_mask(3, 3)[1].sum()


def _answers_shown(page: Any, variant: dict[str, Any]) -> set[float]:
    """The fractions of Part 1's weights and output that the live page (widgets drawn) holds anywhere."""
    markup = page.evaluate("document.documentElement.outerHTML")
    shown = {round(float(x), 6) + 0.0 for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", markup)}
    answers = (round(float(v), 6) + 0.0 for key in ("weights_causal", "output_causal") for v in variant[key])
    return {v for v in answers if v % 1} & shown


@pytest.mark.timeout(120)
def test_no_part1_answer_is_on_the_live_page_before_it_is_earned(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    """The chapter reference's explorer and the mask grid compute numbers live; none is a Part 1 answer, on the
    first numbers or after "Another variant", and Part 1 never claims to be the worked example."""
    from playwright.sync_api import expect

    lesson = _lesson()
    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.url + "/lessons/L4.4")
    expect(page.locator('[data-widget="mask-grid"] .mask-heatmap rect.heat-cell')).to_have_count(16)
    expect(page.locator('[data-widget="attention-explorer"]')).to_be_visible()
    variant = lesson.variant(page_progress(page)["variant_seed"])
    assert any(float(v) % 1 for v in variant["weights_causal"])  # a real softmax: fractions to look for
    assert _answers_shown(page, variant) == set()
    expect(page.locator("#part1")).not_to_contain_text("worked example")
    page.get_by_role("button", name="Another variant").click()
    expect(page.locator("#part1 .variant-status")).to_have_text("New numbers loaded.")
    seed = page.evaluate("fetch('/api/lessons/L4.4/progress').then(r => r.json())")["variant_seed"]
    assert isinstance(seed, int)
    variant = lesson.variant(seed)
    expect(page.locator("#part1")).to_contain_text(f"q = {_listed(variant['q'])}")
    expect(page.locator("#part1")).not_to_contain_text("worked example")
    assert _answers_shown(page, variant) == set()
    assert page_errors == []
    page.context.close()


def _listed(value: Any) -> str:
    return json.dumps(value).replace(",", ", ")


@pytest.mark.timeout(120)
def test_the_mask_grid_by_keyboard_alone(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.url + "/lessons/L4.4")
    widget = page.locator('[data-widget="mask-grid"]')
    expect(widget.locator(".mask-grid")).to_be_visible()
    first = widget.locator('button.mask-toggle[data-query="0"][data-key="0"]')
    tab_until(page, first, limit=120, focused=f"el => el === ({DEEP_ACTIVE})()")
    outline = page.evaluate(f"parseFloat(getComputedStyle(({DEEP_ACTIVE})()).outlineWidth)")
    assert outline >= 2
    page.keyboard.press("Space")  # query 0 loses its only key
    expect(first).to_have_attribute("aria-pressed", "false")
    expect(first).to_have_attribute("aria-label", "−∞: query 0, key 0, masked")  # what it shows first
    expect(widget.locator('[data-dead-row="0"]')).to_have_count(1)
    expect(widget.locator('[data-output="0"]')).to_have_text("[0.000000, 0.000000]")
    # The policy radios take the arrow keys.
    widget.get_by_label("zero weights, zero output (qkv's default, like PyTorch)").focus()
    page.keyboard.press("ArrowDown")
    expect(widget.get_by_label("NaN, the 0/0 itself")).to_be_checked()
    expect(widget.locator('[data-output="0"]')).to_have_text("[NaN, NaN]")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_masks_lesson_fits_a_phone(
    live_server: LiveServer, chromium: Any, page_errors: list[str], scheme: str
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 375, "height": 812}, color_scheme=scheme)
    page.goto(live_server.url + "/lessons/L4.4")
    widget = page.locator('[data-widget="mask-grid"]')
    expect(widget.locator(".mask-heatmap rect.heat-cell")).to_have_count(16)
    widget.get_by_role("button", name="Diagonal excluded (a mistake)").click()
    widget.get_by_label("raise an error").check()
    expect(widget.locator(".mask-error")).to_be_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == 375, f"The page is {widths[0]} px wide at a 375 px viewport."
    for selector in ("button.mask-toggle >> nth=15", ".mask-heatmap", ".mask-error", '[data-output="3"]'):
        box = widget.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375, (selector, box)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(22, 24, 28)") == (scheme == "dark"), background
    widget.scroll_into_view_if_needed()
    widget.screenshot(path=str(_artifacts() / f"l44-widget-375px-{scheme}.png"))
    part1 = page.locator("#part1")
    part1.scroll_into_view_if_needed()
    part1.screenshot(path=str(_artifacts() / f"l44-part1-375px-{scheme}.png"))
    screenshot(page, f"l44-lesson-375px-{scheme}")
    assert page_errors == []
    page.context.close()


def _artifacts() -> Any:

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
