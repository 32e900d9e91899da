"""L4.1 walked as a new learner would, in Chromium: no answer before it is earned, feedback a screen reader
hears, the goal's own exercise, an explorer that never shows stale numbers, a completion message, and
axe-core with zero violations on desktop and on a 375 px phone, light and dark.

The server and the browser are the web tests' fixtures (tests/web/fixtures.py), the helpers browser_support's. axe-core is bundled under
``tests/web/vendor/axe-core`` and injected into the page by Playwright; nothing is fetched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.backend_fixtures import CORRECT_SOLUTION
from tests.web.browser_support import (
    BROWSER,
    LiveServer,
    compact_vector,
    new_page,
    page_progress,
    screenshot,
)

pytestmark = BROWSER

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1100, "height": 900}
PHONE = {"width": 375, "height": 812}


def _lesson() -> Any:
    from qkv.lessons import load_catalog

    return load_catalog().lesson("L4.1")


def _onward() -> Any:
    """The lesson after L4.1 in the catalog, which its completion message points to."""
    from qkv.lessons import load_catalog

    ids = [lesson.id for lesson in load_catalog().lessons]
    return load_catalog().lessons[ids.index("L4.1") + 1]


def _open(chromium: Any, live_server: LiveServer, errors: list[str], **options: Any) -> Any:
    page = new_page(chromium, errors, **{"viewport": DESKTOP, **options})
    page.goto(live_server.lesson_url)
    page.wait_for_selector("html.js-ready")
    return page


def _results(widget: Any) -> dict[str, str]:
    return {name: widget.locator(f'[data-result="{name}"]').inner_text().strip() for name in ("q", "k", "v")}


def _decimals(value: list[float], decimals: int) -> str:
    return "[" + ", ".join(f"{component:.{decimals}f}" for component in value) + "]"


def _answer(page: Any, exercise_id: str, answer: str) -> None:
    box = page.locator(f"#answer-{exercise_id}")
    box.fill(answer)
    box.press("Enter")


@pytest.mark.timeout(120)
def test_a_result_solved_while_its_projection_was_on_its_way_is_shown(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    # The widget's first request leaves before k is solved and comes back after (the server withheld k
    # then): the widget must ask again rather than keep "?" for a solved result.
    from playwright.sync_api import expect

    page = _open(chromium, live_server, page_errors)
    variant = _lesson().variant(page_progress(page)["variant_seed"])
    held: list[Any] = []

    def hold_the_first(route: Any) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route("**/api/lessons/L4.1/project", hold_the_first)
    page.reload()
    page.wait_for_selector("html.js-ready")
    while not held:  # the widget's first request has left (and waits here)
        page.wait_for_timeout(50)
    _answer(page, "k", compact_vector(variant["k"]))
    expect(page.locator("#feedback-k")).to_have_class(re.compile("is-correct"))
    held[0].continue_()  # the answer to a request sent while k was unsolved: k withheld
    widget = page.locator('#part1 [data-widget="projection-sliders"]')
    config = json.loads(widget.get_attribute("data-config"))
    import qkv

    k = qkv.project_qkv([config["x"]], config["Wq"], config["Wk"], config["Wv"])[1][0]
    expect(widget.locator('[data-result="k"]')).to_have_text(compact_vector(k))


@pytest.mark.timeout(120)
def test_part1_shows_each_result_only_once_its_exercise_is_solved_in_every_variant(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    import qkv

    page = _open(chromium, live_server, page_errors)
    lesson = _lesson()
    seed = page_progress(page)["variant_seed"]
    variant = lesson.variant(seed)
    widget = page.locator('#part1 [data-widget="projection-sliders"]')
    config = json.loads(widget.get_attribute("data-config"))
    assert not {"q", "k", "v"} & set(config), "the page's JSON must not carry Part 1's answers"
    for name in ("q", "k", "v"):
        expect(widget.locator(f'[data-result="{name}"]')).to_have_text(re.compile(r"^\?"))
    # Nothing above the questions shows an answer: not Part 1's table, not the idea's illustration.
    above = page.evaluate(
        """() => {
            const form = document.querySelector('#answer-q').closest('form');
            const range = document.createRange();
            range.setStartBefore(document.querySelector('article.lesson'));
            range.setEndBefore(form);
            return range.toString();
        }"""
    )
    for matrix in ("Wq", "Wk", "Wv"):  # a row of a given matrix may look like an answer
        above = above.replace("[" + ", ".join(compact_vector(row) for row in variant[matrix]) + "]", "")
    for name in ("q", "k", "v"):
        assert compact_vector(variant[name]) not in above, name

    # The sliders do not give them away either: a result stays "?" wherever x is.
    x0 = widget.get_by_label("hidden x[0]")
    x0.focus()
    page.keyboard.press("ArrowRight")
    moved = [float(config["x"][0]) + float(x0.get_attribute("step")), float(config["x"][1])]
    expect(widget.locator(".result-heading")).to_have_text(f"result for x = {compact_vector(moved)}")
    assert all(text.startswith("?") for text in _results(widget).values())

    # Solving q shows q (for the sliders' x, computed by qkv on the server); k and v stay hidden.
    _answer(page, "q", compact_vector(variant["q"]))
    expect(page.locator("#feedback-q")).to_have_class(re.compile("is-correct"))
    moved_q = qkv.project_qkv([moved], config["Wq"], config["Wk"], config["Wv"])[0][0]
    expect(widget.locator('[data-result="q"]')).to_have_text(compact_vector(moved_q))
    assert _results(widget)["k"].startswith("?") and _results(widget)["v"].startswith("?")
    # The line under the table follows the table (it said "q = ?" until a slider moved again).
    expect(widget.locator(".widget-status")).to_have_text(f"q = {compact_vector(moved_q)}, k = ?, v = ?")

    # After a reload the solved result is still shown; after another variant, nothing is.
    page.reload()
    page.wait_for_selector("html.js-ready")
    widget = page.locator('#part1 [data-widget="projection-sliders"]')
    expect(widget.locator('[data-result="q"]')).to_have_text(compact_vector(variant["q"]))
    expect(widget.locator('[data-result="k"]')).to_have_text(re.compile(r"^\?"))
    page.get_by_role("button", name="Another variant").click()
    expect(page.locator(".variant-status")).to_have_text("New numbers loaded.")
    widget = page.locator('#part1 [data-widget="projection-sliders"]')
    for name in ("q", "k", "v"):
        expect(widget.locator(f'[data-result="{name}"]')).to_have_text(re.compile(r"^\?"))
    new = lesson.variant(_progress_now(page)["variant_seed"])
    _answer(page, "k", compact_vector(new["k"]))
    expect(widget.locator('[data-result="k"]')).to_have_text(compact_vector(new["k"]))
    expect(widget.locator('[data-result="q"]')).to_have_text(re.compile(r"^\?"))

    # The idea's illustration has numbers of its own, computed by qkv, shown in full.
    idea = page.locator('#idea [data-widget="projection-sliders"]')
    numbers = lesson.variant(None)["idea"]
    expect(idea.locator('[data-result="q"]')).to_have_text(compact_vector(numbers["q"]))
    screenshot(page, "walk-part1-hidden-results")
    assert page_errors == []
    page.context.close()


def _progress_now(page: Any) -> dict[str, Any]:
    return page.evaluate("fetch('/api/lessons/L4.1/progress').then(r => r.json())")  # type: ignore[no-any-return]


@pytest.mark.timeout(120)
def test_wrong_answers_are_marked_for_screen_readers_and_the_goal_is_exercised(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = _open(chromium, live_server, page_errors, color_scheme="dark")
    lesson = _lesson()
    names = lesson.hooks.namespace(lesson.variant(page_progress(page)["variant_seed"]))
    # No answer of "one query to its output" is on screen before it is typed: not in the section, not
    # in the chapter reference, not in the explorer that computes the reference's example live.
    expect(page.locator('[data-widget="attention-explorer"] [data-output-vector]')).to_be_visible()
    shown = page.locator("body").inner_text()
    for exercise_id in ("scores", "weights", "output"):
        for decimals in (6, 3):
            for component in names[f"one_{exercise_id}"]:
                if not float(component).is_integer():
                    assert f"{abs(component):.{decimals}f}" not in shown, (exercise_id, component)
    box = page.locator("#answer-weights")
    feedback = page.locator("#feedback-weights")
    # The scaled scores typed as weights: a common mistake, named (on the variant's own numbers).
    _answer(page, "weights", compact_vector(names["one_scores"]))
    expect(feedback).to_contain_text("Scores are not weights before normalization")
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(feedback.locator(".visually-hidden")).to_have_text("Incorrect. ")
    assert feedback.locator(".feedback-mark").get_attribute("aria-hidden") == "true"
    _answer(page, "weights", _decimals(names["one_unscaled_weights"], 3))  # named at three decimals too
    expect(feedback).to_contain_text("you forgot to divide by √d_k")
    _answer(page, "weights", compact_vector(names["one_weights"]))
    expect(feedback).to_have_class(re.compile("is-correct"))
    expect(box).not_to_have_attribute("aria-invalid", "true")
    _answer(page, "output", compact_vector(names["one_keys_mixed"]))
    expect(page.locator("#feedback-output")).to_contain_text("the weights applied to the keys")
    _answer(page, "output", _decimals(names["one_output"], 3))
    expect(page.locator("#feedback-output")).to_have_class(re.compile("is-correct"))

    # Predict first: its explanation appears only once the learner commits, and it is not counted.
    predict = page.locator('form[data-exercise-id="predict"]')
    expect(page.locator("#feedback-predict")).to_be_empty()
    predict.locator('input[value="B"]').check()
    expect(page.locator("#feedback-predict")).to_be_empty()
    predict.get_by_role("button", name="Check").click()
    expect(page.locator("#feedback-predict")).to_contain_text("A fair guess")
    expect(predict.locator('input[value="B"]')).to_have_attribute("aria-invalid", "true")
    total = _progress_now(page)["total"]
    assert total == sum(1 for ex in _lesson().exercises.values() if ex.part != "predict-first")
    screenshot(page, "walk-goal-dark")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_the_explorer_never_shows_a_stale_result_and_counts_its_keys(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = _open(chromium, live_server, page_errors)
    explorer = page.locator('[data-widget="attention-explorer"]')
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    explorer.get_by_label("q component 1").fill("one")
    expect(explorer.locator(".widget-status")).to_contain_text("q component 1 must be a number")
    expect(explorer.locator("[data-output-vector]")).to_be_hidden()
    explorer.get_by_label("q component 1").fill("1")
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    explorer.get_by_role("button", name="Remove the last position").click()
    expect(explorer.locator(".steps-note")).to_contain_text("One query against 1 key;")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(180)
def test_a_finished_lesson_says_so_and_points_onward(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = _open(chromium, live_server, page_errors)
    expect(page.locator("#lesson-complete")).to_be_hidden()
    lesson = _lesson()
    seed = page_progress(page)["variant_seed"]
    names = lesson.variant(seed)
    token = page.locator('meta[name="csrf-token"]').get_attribute("content")
    post = """async ([path, body, token]) => {
        const r = await fetch(path, {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': token}, body: JSON.stringify(body)});
        return r.status;
    }"""
    for exercise in lesson.exercises.values():
        if exercise.kind == "code":
            body = {"exercise_id": exercise.id, "code": CORRECT_SOLUTION}
            assert page.evaluate(post, ["/api/lessons/L4.1/code", body, token]) == 200
        elif exercise.part != "predict-first":
            answer = exercise.answer if exercise.kind != "numeric" else compact_vector(names[exercise.answer])
            body = {"exercise_id": exercise.id, "answer": answer}
            assert page.evaluate(post, ["/api/lessons/L4.1/answers", body, token]) == 200
    page.reload()
    complete = page.locator("#lesson-complete")
    expect(complete).to_be_visible()
    expect(complete).to_contain_text("✓ Lesson complete: every exercise is done.")
    onward = _onward()
    expect(complete).to_contain_text(f"Next: {onward.place}, {onward.title}.")
    expect(complete.get_by_role("link", name=f"{onward.place}, {onward.title}")).to_have_attribute(
        "href", f"/lessons/{onward.id}"
    )
    progress = page_progress(page)
    assert progress["done"] == progress["total"]
    screenshot(page, "walk-complete")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_axe_finds_no_violations(
    chromium: Any, live_server: LiveServer, page_errors: list[str], viewport: dict[str, int], scheme: str
) -> None:
    from playwright.sync_api import expect

    # bypass_csp lets Playwright inject the bundled axe-core; the page's own scripts are unchanged.
    page = _open(chromium, live_server, page_errors, viewport=viewport, color_scheme=scheme, bypass_csp=True)
    # Feedback of every kind on screen, so that its colours are checked too.
    _answer(page, "q", "[1000, 1000]")
    expect(page.locator("#feedback-q")).to_have_class(re.compile("is-wrong"))
    _answer(page, "k", "one")
    expect(page.locator("#feedback-k")).to_have_class(re.compile("is-format"))
    lesson = _lesson()
    scores = lesson.variant(page_progress(page)["variant_seed"])["one_scores"]
    _answer(page, "scores", compact_vector(scores))
    expect(page.locator("#feedback-scores")).to_have_class(re.compile("is-correct"))
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => {
            const brief = (v) => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
            });
            // Every rule on the whole page, the editor's scroller included (its content has tabindex 0).
            const all = await axe.run(document, {resultTypes: ['violations']});
            return all.violations.map(brief);
        }""",
    )
    screenshot(page, f"walk-axe-{'phone' if viewport == PHONE else 'desktop'}-{scheme}")
    assert violations == [], json.dumps(violations, indent=1)
    assert page_errors == []
    page.context.close()
