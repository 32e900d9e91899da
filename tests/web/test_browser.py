"""The L4.1 page in a real browser: Debian's Chromium driven by Playwright against the real web app.

One uvicorn server (``qkv.web.app.create_app``, a temporary SQLite database, the real grader) and one
Chromium serve the whole module (the ``live_server`` and ``chromium`` fixtures of tests/web/fixtures.py);
each test opens its own browser context, so each is a new learner with its own cookie. Screenshots go to
``test-artifacts/`` at the repository root (ignored by git).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.time_scale import scaled
from tests.web.backend_fixtures import CORRECT_SOLUTION
from tests.web.browser_support import (
    BROWSER,
    DEEP_ACTIVE,
    LiveServer,
    compact_vector,
    new_page,
    page_progress,
    replace_editor_text,
    screenshot,
    tab_until,
)
from tests.web.lesson_walk import reload_and_check_answers

pytestmark = BROWSER

# The wrong solution makes the classic mistake of using the weights' rows as columns.
WRONG_SOLUTION = CORRECT_SOLUTION.replace(
    "return X @ Wq, X @ Wk, X @ Wv", "return X @ Wq.T, X @ Wk.T, X @ Wv.T"
)


def _lesson() -> Any:
    from qkv.lessons import load_catalog

    return load_catalog().lesson("L4.1")


def _right_answer(lesson: Any, exercise_id: str, candidates: list[str], seed: int | None) -> str:
    """The first candidate the lesson engine accepts: the engine, not this test, knows the answers."""
    for candidate in candidates:
        if lesson.check(exercise_id, candidate, variant_seed=seed).correct:
            return candidate
    raise AssertionError(f"None of {candidates} is accepted for {exercise_id!r}.")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_learner_does_the_whole_lesson_and_finds_it_restored(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    import qkv

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    lesson = _lesson()

    # The index lists the lesson; the lesson opens from it.
    page.goto(live_server.url + "/")
    page.get_by_role("link", name=re.compile("Queries, keys and values")).click()
    page.wait_for_url(re.compile(r"/lessons/L4\.1"))
    expect(page.locator("h1")).to_have_text(lesson.title)
    seed = page_progress(page)["variant_seed"]
    section_ids = page.locator("section.lesson-section").evaluate_all("nodes => nodes.map(n => n.id)")
    assert section_ids[:6] == ["predict-first", "idea", "part1", "one-query", "part2", "quiz"], section_ids
    assert section_ids[-1] == "reference"

    # Predict first: a choice, explained once the learner commits to it.
    predict = page.locator('form[data-exercise-id="predict"]')
    predict.locator('input[value="C"]').check()
    predict.get_by_role("button", name="Check").click()
    expect(page.locator("#feedback-predict")).to_have_class(re.compile("is-correct"))

    # Part 1's table keeps q hidden ("?") until q is solved, wherever the x[0] slider is.
    widget = page.locator('#part1 [data-widget="projection-sliders"]')
    config = json.loads(widget.get_attribute("data-config"))
    q_cell = widget.locator('[data-result="q"]')
    x0 = widget.get_by_label("hidden x[0]")
    expect(q_cell).to_have_text(re.compile(r"^\?"))
    x0.focus()
    page.keyboard.press("ArrowRight")
    step = float(x0.get_attribute("step"))
    moved = [float(config["x"][0]) + step, float(config["x"][1])]
    expect(widget.locator(".result-heading")).to_have_text(f"result for x = {compact_vector(moved)}")
    expect(q_cell).to_have_text(re.compile(r"^\?"))

    # Part 1: a wrong q first (counted, with a message), then the right one; then k, v and the letter.
    variant = lesson.variant(seed)
    answers = {
        "q": compact_vector(variant["q"]),
        "k": compact_vector(variant["k"]),
        "v": compact_vector(variant["v"]),
        "averaged": "V",
    }
    q_box = page.locator("#answer-q")
    q_box.fill(compact_vector(variant["k"]) if variant["k"] != variant["q"] else "[99, 99]")
    q_box.press("Enter")
    feedback_q = page.locator("#feedback-q")
    expect(feedback_q).to_have_class(re.compile("is-wrong"))
    expect(feedback_q).not_to_be_empty()
    assert page.locator("#answer-q").evaluate("el => el.closest('form').dataset.status") == "attempted"
    q_box.fill(answers["q"])
    q_box.press("Enter")
    expect(feedback_q).to_have_class(re.compile("is-correct"))
    # Once solved, q shows, and follows the slider: computed by the server's project_qkv.
    expected_q = qkv.project_qkv([moved], config["Wq"], config["Wk"], config["Wv"])[0][0]
    expect(q_cell).to_have_text(compact_vector(expected_q))
    for exercise_id in ("k", "v", "averaged"):
        box = page.locator(f"#answer-{exercise_id}")
        box.fill(answers[exercise_id])
        box.press("Enter")
        expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile("is-correct"))
    expect(page.locator('.progress-part[data-part="part1"]')).to_have_class(re.compile("is-done"))

    # One query to its output, on the variant's own numbers: a named mistake first (the raw scores),
    # then the right numbers.
    page.locator("#answer-scores").fill(compact_vector(lesson.hooks.namespace(variant)["one_raw_scores"]))
    page.locator("#answer-scores").press("Enter")
    expect(page.locator("#feedback-scores")).to_contain_text("divided by √d_k")
    for exercise_id in ("scores", "weights", "output"):
        answers[exercise_id] = compact_vector([round(v, 6) for v in variant[f"one_{exercise_id}"]])
        box = page.locator(f"#answer-{exercise_id}")
        box.fill(answers[exercise_id])
        box.press("Enter")
        expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile("is-correct"))

    # Part 2: the editor is CodeMirror, prefilled with the starter code.
    code_box = page.locator(".code-exercise")
    editor = code_box.locator(".cm-content")
    expect(editor).to_be_visible()
    code_exercise = next(ex for ex in lesson.exercises.values() if ex.kind == "code")
    starter = code_exercise.starter_code
    assert editor.inner_text().strip().splitlines()[0] == starter.strip().splitlines()[0]
    results = code_box.locator(".grade-results")

    # A wrong solution fails and shows a hint; Ctrl+Enter runs it from inside the editor.
    replace_editor_text(page, editor, WRONG_SOLUTION)
    page.keyboard.press("Control+Enter")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✗ \d+ of \d+ tests passed"), timeout=scaled(60_000)
    )
    expect(results.locator(".test-hint").first).to_be_visible()

    # The correct solution passes every test; the Run button shows a busy state while it runs.
    replace_editor_text(page, editor, CORRECT_SOLUTION)
    page.keyboard.press("Control+Enter")
    expect(code_box).to_have_attribute("aria-busy", "true")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✓ All \d+ tests passed"), timeout=scaled(60_000)
    )
    assert results.locator(".test-fail, .test-error, .test-timeout").count() == 0
    expect(code_box).not_to_have_attribute("aria-busy", "true")
    # Every function's group passed, so each is one folded line.
    expect(results.locator(".test-group.all-pass")).to_have_count(len(code_exercise.functions))
    expect(results.locator(".test-result:visible")).to_have_count(0)

    # The quiz: for each question, the answer the engine accepts.
    picked = {}
    for quiz in page.locator('#quiz form.exercise[data-kind="choice"]').all():
        quiz_id = quiz.get_attribute("data-exercise-id")
        letters = quiz.locator('input[type="radio"]').evaluate_all("nodes => nodes.map(n => n.value)")
        picked[quiz_id] = right = _right_answer(lesson, quiz_id, letters, seed)
        quiz.locator(f'input[type="radio"][value="{right}"]').check()
        quiz.get_by_role("button", name="Check").click()
        expect(page.locator(f"#feedback-{quiz_id}")).to_have_class(re.compile("is-correct"))
    assert len(picked) == 3

    # The explorer on the worked example: weights 0.669762 / 0.330238; the causal mask leaves only key 0.
    explorer = page.locator('[data-widget="attention-explorer"]')
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    expect(explorer.locator('[data-weight="0"]')).to_contain_text("0.669762")
    explorer.get_by_label("Apply the causal mask").check()
    expect(explorer.locator("[data-output-vector]")).to_have_text("[2.000000, 0.000000]")
    expect(explorer.locator('[data-masked="1"]')).to_contain_text("masked")
    expect(explorer.locator('tr[data-key="1"]')).to_have_class(re.compile("is-masked"))
    # Editing q changes the result (the server recomputes it).
    explorer.get_by_label("Apply the causal mask").uncheck()
    explorer.get_by_label("q component 1").fill("0")
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.000000, 1.000000]")

    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*(\d+) of \1 exercises done\s*$"))
    expect(page.locator("#lesson-complete")).to_be_visible()  # shown as soon as the last one is done
    screenshot(page, "lesson-done-desktop")

    # Reload: every answer, feedback, the editor's code, its results and the progress come back.
    reload_and_check_answers(page, answers)
    for quiz_id, right in picked.items():
        expect(page.locator(f'form[data-exercise-id="{quiz_id}"] input[value="{right}"]')).to_be_checked()
        expect(page.locator(f"#feedback-{quiz_id}")).to_have_class(re.compile("is-correct"))
    editor = page.locator(".code-exercise .cm-content")
    expect(editor).to_contain_text("return d_model * (2 * d_k + d_v)")  # the last line of the saved solution
    expect(page.locator(".code-exercise .grade-summary")).to_have_text(re.compile(r"✓ All \d+ tests passed"))
    for part in ("part1", "one-query", "part2", "quiz"):
        expect(page.locator(f'.progress-part[data-part="{part}"]')).to_have_class(re.compile("is-done"))
        expect(page.locator(f'.progress-part[data-part="{part}"] .part-status')).to_have_text("✓ done")
    screenshot(page, "lesson-restored-desktop")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def _panel_matches(page: Any, document: dict[str, Any]) -> None:
    """The progress panel shows exactly what the server's PROGRESS document says, part by part."""
    from playwright.sync_api import expect

    expect(page.locator("#progress-summary")).to_have_text(
        f"{document['done']} of {document['total']} exercises done"
    )
    listed = [part for part in document["parts"] if part["total"]]
    expect(page.locator(".progress-part")).to_have_count(len(listed))
    for part in listed:
        row = page.locator(f'.progress-part[data-part="{part["id"]}"]')
        expect(row.locator("a")).to_have_text(part["title"])
        expect(row.locator(".part-status")).to_have_text(
            "✓ done" if part["complete"] else f"{part['done']} of {part['total']}"
        )
        if part["complete"]:
            expect(row).to_have_class(re.compile(r"\bis-done\b"))
        else:
            expect(row).not_to_have_class(re.compile(r"\bis-done\b"))


def test_the_progress_panel_shows_the_servers_progress_document(
    chromium: Any, live_server: LiveServer, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.lesson_url)
    _panel_matches(page, page_progress(page))
    lesson = _lesson()
    first = next(ex for ex in lesson.exercises.values() if ex.kind == "numeric")
    variant = lesson.variant(page_progress(page)["variant_seed"])
    box = page.locator(f"#answer-{first.id}")
    box.fill(compact_vector(variant[first.answer]))
    box.press("Enter")
    expect(page.locator(f"#feedback-{first.id}")).to_have_class(re.compile("is-correct"))
    document = page.evaluate("fetch('/api/lessons/L4.1/progress').then(r => r.json())")
    assert document["exercises"][first.id]["done"] is True
    assert document["done"] == 1
    _panel_matches(page, document)  # updated in place from the answer's reply
    page.reload()
    _panel_matches(page, document)  # and rendered by the server the same way
    assert page_errors == []
    page.context.close()


def test_keyboard_alone_reaches_and_operates_the_lesson(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.lesson_url)
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()

    # The first Tab lands on the skip link, which becomes visible; Enter moves to the content.
    page.keyboard.press("Tab")
    skip = page.locator(".skip-link")
    expect(skip).to_be_focused()
    assert skip.bounding_box()["y"] >= 0
    page.keyboard.press("Enter")

    within = f"el => el.contains(({DEEP_ACTIVE})())"  # the editor's focus is inside its shadow root

    def outline_width() -> float:
        return float(page.evaluate(f"parseFloat(getComputedStyle(({DEEP_ACTIVE})()).outlineWidth)"))

    # A slider takes arrow keys; focus is visible on it.
    tab_until(page, '#part1 input[type="range"]', focused=within)
    assert outline_width() >= 2
    page.keyboard.press("ArrowLeft")

    # Part 1: type an answer in the box and press Enter; a format error does not cost an attempt.
    tab_until(page, "#answer-q", focused=within)
    assert outline_width() >= 2
    page.keyboard.type("three and two")
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-q")).not_to_be_empty()
    expect(page.locator("#feedback-q")).to_have_class(re.compile("is-format"))
    progress = page.evaluate("fetch('/api/lessons/L4.1/progress').then(r => r.json())")
    assert progress["exercises"]["q"]["attempts"] == 0

    # The code editor: Tab moves into it and typing works.
    tab_until(page, ".code-exercise .cm-content", focused=within)
    ring = page.locator(".code-exercise .cm-editor").evaluate("el => getComputedStyle(el).outlineWidth")
    assert float(ring.removesuffix("px")) >= 2, f"The focused editor's outline is {ring}."
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("x = 1")
    # Tab alone indents the line by four spaces; Escape then Tab leaves the editor.
    page.keyboard.press("Tab")
    expect(page.locator(".code-exercise .cm-content")).to_be_focused()
    assert page.locator(".code-exercise .cm-content").inner_text().rstrip("\n").endswith("\n    x = 1")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(page.locator(".code-exercise button.run-code")).to_be_focused()
    assert outline_width() >= 2

    # The quiz: arrow keys choose a radio button, Tab then Enter on Check submits it.
    tab_until(page, '#quiz form[data-kind="choice"] input[type="radio"]', focused=within)
    page.keyboard.press("ArrowDown")
    tab_until(page, '#quiz form[data-kind="choice"] button[type="submit"]', focused=within)
    page.keyboard.press("Enter")
    expect(page.locator('#quiz form[data-kind="choice"] .feedback').first).not_to_be_empty()

    # The explorer's causal toggle is a checkbox that Space flips.
    tab_until(page, '[data-widget="attention-explorer"] input[type="checkbox"]', focused=within)
    page.keyboard.press("Space")
    expect(page.locator('[data-widget="attention-explorer"] [data-output-vector]')).to_have_text(
        "[2.000000, 0.000000]"
    )
    screenshot(page, "lesson-keyboard")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_starter_code_results_open_at_each_functions_first_failure(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    code_exercise = next(ex for ex in _lesson().exercises.values() if ex.kind == "code")
    page = new_page(chromium, page_errors, viewport={"width": 390, "height": 844})
    page.goto(live_server.lesson_url)
    expect(page.locator(".code-exercise .cm-content")).to_be_visible()
    page.get_by_role("button", name="Run the tests").click()
    results = page.locator(".code-exercise .grade-results")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"^✗ 0 of \d+ tests passed\.$"), timeout=scaled(60_000)
    )
    total = int(results.locator(".grade-summary").inner_text().split()[3])

    # One group per function, in the lesson's order; together they hold every test.
    groups = results.locator(".test-group")
    assert groups.evaluate_all("nodes => nodes.map(n => n.dataset.function)") == list(code_exercise.functions)
    counts = [
        re.fullmatch(r"0 of (\d+) passed", text).group(1)  # type: ignore[union-attr]
        for text in results.locator(".test-group-count").all_inner_texts()
    ]
    assert sum(int(count) for count in counts) == total == results.locator(".test-result").count()

    # Only each group's first failure is open, with the hint; inside a group its name drops the function's.
    expect(results.locator(".test-result:visible")).to_have_count(len(code_exercise.functions))
    expect(results.locator(".test-hint:visible").first).to_be_visible()
    first = groups.first.locator(".test-result").first
    assert not first.locator(".test-name").inner_text().startswith(code_exercise.functions[0])
    assert first.locator(".test-name").get_attribute("title").startswith(code_exercise.functions[0])

    # The fold under the first group opens to the rest of its failures.
    more = groups.first.locator("details.more-failures")
    expect(more.locator("summary")).to_have_text(f"{int(counts[0]) - 1} more failing tests")
    more.locator("summary").click()
    expect(results.locator(".test-result:visible")).to_have_count(
        len(code_exercise.functions) + int(counts[0]) - 1
    )
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    screenshot(page, "code-results-390px")
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_phone_width_layout_has_no_horizontal_scroll(
    live_server: LiveServer, chromium: Any, page_errors: list[str], scheme: str
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 390, "height": 844}, color_scheme=scheme)
    for url, name in ((live_server.url + "/", "index"), (live_server.lesson_url, "lesson")):
        page.goto(url)
        if name == "lesson":
            expect(page.locator(".code-exercise .cm-content")).to_be_visible()
            expect(page.locator('[data-widget="attention-explorer"] [data-output-vector]')).to_be_visible()
        widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1] == 390, f"The {name} page is {widths[0]} px wide at a 390 px viewport."
        if name == "lesson":
            _assert_lesson_fits_a_phone(page)
        screenshot(page, f"{name}-390px-{scheme}")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(22, 24, 28)") == (scheme == "dark"), background
    # The editor follows the scheme too (its gutter uses the page's --surface-2 colour, not CodeMirror's grey).
    gutter = page.locator(".code-exercise .cm-gutters").evaluate("el => getComputedStyle(el).backgroundColor")
    assert gutter == ("rgb(37, 41, 50)" if scheme == "dark" else "rgb(242, 240, 234)"), gutter
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(60)
def test_without_javascript_the_lesson_reads_and_says_what_needs_it(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, java_script_enabled=False, viewport={"width": 1100, "height": 900})
    page.goto(live_server.lesson_url)
    expect(page.locator(".noscript-note")).to_contain_text("checking answers")
    # The server's static widgets carry the numbers: the projection table and the worked example.
    idea = _lesson().variant(None)["idea"]
    expect(page.locator('#idea [data-widget="projection-sliders"]')).to_contain_text(
        compact_vector(idea["q"])
    )
    # Part 1's results stay hidden: the page without JavaScript does not give them away either.
    expect(page.locator('#part1 [data-widget="projection-sliders"] tbody')).not_to_contain_text("[3, 2]")
    expect(page.locator('#part1 [data-widget="projection-sliders"] .hidden-result')).to_have_count(3)
    expect(page.locator('[data-widget="attention-explorer"]')).to_contain_text(
        "output = [1.339523, 0.660477]; with only the first key allowed: [2, 0]"
    )
    expect(page.locator(".code-exercise textarea")).to_be_visible()
    page.context.close()


def _assert_lesson_fits_a_phone(page: Any) -> None:
    """Nothing a learner must read hides behind a sideways scroll (code blocks may scroll)."""
    hidden = page.evaluate(
        """() => [...document.querySelectorAll('.widget-live .table-scroll, .math-display, .lesson-section p:not(.visually-hidden)')]
            .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
            .map((e) => `${e.className || e.tagName}: ${e.scrollWidth} > ${e.clientWidth}: ${e.textContent.slice(0, 40)}`)"""
    )
    assert hidden == [], hidden
    # The explorer's softmax weights and the projection roles are on screen, not clipped.
    for selector in ('[data-widget="attention-explorer"] [data-weight="1"]', "#part1 td.role >> nth=2"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, (selector, box)
    # A scrolling list item would clip its own bullet.
    assert page.locator("#idea li").first.evaluate("el => getComputedStyle(el).overflowX") == "visible"
    # An answer box keeps its Check button beside it.
    answer, check = (
        page.locator("#answer-q"),
        page.locator('form[data-exercise-id="q"] button[type="submit"]'),
    )
    assert abs(answer.bounding_box()["y"] - check.bounding_box()["y"]) < 10


@pytest.mark.timeout(120)
def test_another_variant_and_problems_are_explained_in_sentences(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    # The optional display name, saved from the lesson list, shows in the header of the next page.
    page.goto(live_server.url + "/")
    page.get_by_label(re.compile("^Display name")).fill("Ada")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#learner-feedback")).to_have_text("Saved. You appear as “Ada”.")
    page.goto(live_server.lesson_url)
    expect(page.locator(".site-header .learner-name")).to_have_text("Ada")
    lesson = _lesson()
    before = page.locator("#answer-q").evaluate("el => el.labels[0].textContent")

    # "Another variant" swaps Part 1 for new numbers, which the answer boxes are then checked against.
    page.get_by_role("button", name="Another variant").click()
    expect(page.locator("#part1 .variant-status")).to_have_text("New numbers loaded.")
    expect(page.get_by_role("button", name="Another variant")).to_be_focused()
    expect(page.get_by_role("button", name="Another variant")).to_have_count(1)
    seed = page.evaluate("fetch('/api/lessons/L4.1/progress').then(r => r.json())")["variant_seed"]
    assert isinstance(seed, int)
    variant = lesson.variant(seed)
    # The new x reads as the lesson writes vectors: whole numbers, no trailing zeros.
    label = page.locator("#answer-q").evaluate("el => el.labels[0].textContent")
    assert f"x = {compact_vector(variant['x'])}" in label, (before, label)
    page.locator("#answer-q").fill(compact_vector(variant["q"]))
    page.locator("#answer-q").press("Enter")
    expect(page.locator("#feedback-q")).to_have_class(re.compile("is-correct"))
    expect(page.locator('#part1 [data-widget="projection-sliders"] [data-result="q"]')).to_have_text(
        compact_vector(variant["q"])
    )

    # A 503 with Retry-After (a full line, the database away) is waited out, saying so with the server's
    # sentence (tests/web/test_browser_queue.py follows one to its verdict); Cancel stops the wait.
    page.route(
        "**/api/lessons/L4.1/code",
        lambda route: route.fulfill(
            status=503,
            headers={"Retry-After": "30"},
            content_type="application/json",
            body=json.dumps({"detail": "Every grading slot is taken; try again in a moment."}),
        ),
    )
    page.locator(".code-exercise button.run-code").click()
    expect(page.locator(".code-exercise .grade-running")).to_have_text(
        re.compile(r"Every grading slot is taken; try again in a moment\. Waiting to send your program again")
    )
    page.locator(".code-exercise button.cancel-run").click()
    expect(page.locator(".code-exercise .grade-results")).to_contain_text("You stopped waiting")
    page.unroute("**/api/lessons/L4.1/code")
    # A 503 without Retry-After (grading turned off on this server) shows the server's sentence as it is.
    page.route(
        "**/api/lessons/L4.1/code",
        lambda route: route.fulfill(
            status=503,
            content_type="application/json",
            body=json.dumps({"detail": "Code cannot be graded on this server."}),
        ),
    )
    page.locator(".code-exercise button.run-code").click()
    expect(page.locator(".code-exercise .grade-results")).to_have_text(
        "Code cannot be graded on this server."
    )
    page.unroute("**/api/lessons/L4.1/code")
    # A 503 without the server's sentence (a proxy in front, say) still reads as "busy".
    page.route("**/api/lessons/L4.1/code", lambda route: route.fulfill(status=503, body=""))
    page.locator(".code-exercise button.run-code").click()
    expect(page.locator(".code-exercise .grade-results")).to_have_text(
        "The grader is busy, retry in a moment."
    )
    page.unroute("**/api/lessons/L4.1/code")

    # The explorer names a field that is not a number, and recovers when it is fixed.
    explorer = page.locator('[data-widget="attention-explorer"]')
    explorer.get_by_label("key 1 component 2").fill("one")
    expect(explorer.locator(".widget-status")).to_have_text(
        "key 1 component 2 must be a number, but it is 'one'. "
        "The steps appear again once every box holds a number."
    )
    expect(explorer.locator(".widget-status")).to_have_class("widget-status is-error")
    explorer.get_by_label("key 1 component 2").fill("1")
    expect(explorer.locator(".widget-status")).to_have_class("widget-status visually-hidden")
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    # A third position (all zeros) takes part in the softmax; removing it restores the worked example.
    import qkv

    explorer.get_by_role("button", name="Add a position").click()
    expect(explorer.get_by_label("key 2 component 1")).to_have_value("0")
    expected = qkv.attention([[1, 0]], [[1, 0], [0, 1], [0, 0]], [[2, 0], [0, 2], [0, 0]])[0]
    expect(explorer.locator("[data-output-vector]")).to_have_text(f"[{expected[0]:.6f}, {expected[1]:.6f}]")
    explorer.get_by_role("button", name="Remove the last position").click()
    expect(explorer.get_by_role("button", name="Remove the last position")).to_be_focused()
    expect(explorer.locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    assert explorer.get_by_label("key 2 component 1").count() == 0

    # A lesson that does not exist gets the error page with the server's sentence, not a JSON dump.
    response = page.goto(live_server.url + "/lessons/L9.9")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Page not found")
    expect(page.locator(".error-message")).to_contain_text("'L9.9'")
    # The browser logs the refused requests (503, 404) itself; nothing else may appear.
    page_errors[:] = [e for e in page_errors if "status of 503" not in e and "status of 404" not in e]
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_a_learner_in_line_sees_their_place_and_can_cancel(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    # This server has one grader: the first learner's slow program holds it while the second one waits.
    # Both pages are ready before either presses Run, so the first is still running when the second does.
    first = new_page(chromium, page_errors)
    first.goto(live_server.lesson_url)
    slow = "import time\ntime.sleep(3)\n" + CORRECT_SOLUTION
    replace_editor_text(first, first.locator(".code-exercise .cm-content"), slow)
    second = new_page(chromium, page_errors, viewport={"width": 375, "height": 800}, color_scheme="dark")
    second.goto(live_server.lesson_url)
    replace_editor_text(second, second.locator(".code-exercise .cm-content"), CORRECT_SOLUTION)
    first.locator(".code-exercise button.run-code").click()
    expect(first.locator(".grade-running")).to_contain_text("Running the tests on your code")
    second.locator(".code-exercise button.run-code").press("Enter")
    waiting = second.locator(".grade-running")
    expect(waiting).to_contain_text("Waiting for a free grader (you are next)", timeout=scaled(10_000))
    expect(waiting).to_contain_text("Running again while you wait replaces this program.")
    screenshot(second, "code-waiting-in-line-mobile-dark")
    cancel = second.locator(".code-exercise button.cancel-run")
    cancel.focus()
    second.keyboard.press("Enter")
    expect(second.locator(".code-exercise .grade-results")).to_contain_text(
        "You cancelled this run before it was graded."
    )
    expect(cancel).to_have_count(0)
    expect(first.locator(".code-exercise .grade-summary")).to_have_text(
        re.compile(r"✓ All \d+ tests passed"), timeout=scaled(30_000)
    )
    # The cancelled request's 409 is the answer the page expects; Chromium logs it as a failed load.
    assert [error for error in page_errors if "409 (Conflict)" not in error] == []
    first.context.close()
    second.context.close()
