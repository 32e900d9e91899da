"""The code exercise as a learner meets it, in Chromium: a keyboard-safe editor, failures that can be
repeated, drafts that survive leaving the page, and "Stuck?" help that opens step by step.

Uses the web tests' live server and Chromium (tests/web/fixtures.py; a server of its own for this module).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.time_scale import scaled
from tests.web.backend_fixtures import CORRECT_SOLUTION
from tests.web.browser_support import (
    BROWSER,
    DEEP_ACTIVE,
    LiveServer,
    new_page,
    screenshot,
    tab_to,
)

pytestmark = BROWSER

EDITOR = ".code-exercise .cm-content"
WRONG = CORRECT_SOLUTION.replace("return (n_q, d_v)", "return (n_k, d_v)")
STOPS_EARLY = (Path(__file__).parents[1] / "grading" / "hostile" / "exit_during_tests.py").read_text()
BROKEN = "import numpy as np\n\ndef project_qkv(X, Wq, Wk, Wv)\n    return X\n"
A_TRY = (  # defines every function and runs every test, all wrong: a try at the exercise
    "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n\ndef qkv_shapes(n, d_model, d_k, d_v):\n"
    "    return {}\n\ndef output_shape(n_q, n_k, d_v):\n    return (0, 0)\n\n"
    "def param_count(d_model, d_k, d_v):\n    return 0\n"
)

# A description of the focused element (inside shadow roots too) and where it is on screen.
FOCUS_STOP = f"""() => {{
    const el = ({DEEP_ACTIVE})();
    if (!el || el === document.body) return null;
    const rect = el.getBoundingClientRect();
    const bar = document.querySelector(".progress-panel").getBoundingClientRect();
    const host = el.getRootNode().host;
    return {{
        tag: el.tagName.toLowerCase(),
        text: (el.getAttribute("aria-label") || el.textContent || el.value || "").trim().slice(0, 40),
        inEditor: Boolean(host && host.classList.contains("cm-host")),
        inBar: Boolean(el.closest(".progress-panel")),
        top: rect.top,
        bottom: rect.bottom,
        barBottom: bar.bottom,
        barTop: bar.top,
    }};
}}"""


def _set_editor(page: Any, text: str) -> None:
    page.locator(EDITOR).click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    # insertText is one edit, without CodeMirror's auto-indent and bracket closing.
    page.keyboard.insert_text(text)


def _editor_text(page: Any) -> str:
    return str(page.locator(".code-exercise textarea").input_value())


def _run(page: Any) -> Any:
    results = page.locator(".code-exercise .grade-results")
    page.get_by_role("button", name="Run the tests").click()
    summary = results.locator(".grade-summary")
    summary.wait_for(timeout=scaled(60_000))
    return results


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_tab_goes_through_the_whole_page_editor_included(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 700})
    page.goto(live_server.lesson_url)
    expect(page.locator(EDITOR)).to_be_visible()
    # Every widget is live (their modules load after the page), so that its controls are in the list.
    expect(page.locator("[data-widget]:not([data-mounted])")).to_have_count(0)
    focusable = page.evaluate(
        """() => {
            const seen = new Set();  // a group of radio buttons is one tab stop
            return [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex="0"]')]
                .filter(el => !el.disabled && el.offsetParent !== null && el.tabIndex >= 0)
                .filter(el => {  // inside a closed <details>, only its summary takes focus
                    const closed = el.closest("details:not([open])");
                    return !closed || el === closed.querySelector(":scope > summary");
                })
                .filter(el => {
                    if (el.type !== "radio") return true;
                    const key = `${el.form ? [...document.forms].indexOf(el.form) : -1}/${el.name}`;
                    if (seen.has(key)) return false;
                    seen.add(key);
                    return true;
                }).map(el => (el.getAttribute("aria-label") || el.textContent || el.value || "").trim().slice(0, 40));
        }"""
    )
    stops: list[dict[str, Any]] = []
    in_editor = 0
    for _ in range(400):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUS_STOP)
        if stop is None:  # past the last element: focus went back to the browser
            break
        if stop["inEditor"]:
            in_editor += 1
            # Inside the editor, the page says how to leave it: on screen and as the editor's description.
            help_text = page.locator(".cm-keys-help").inner_text()
            assert "Escape, then Tab" in help_text
            described = page.locator(EDITOR).get_attribute("aria-describedby")
            assert described == "cm-keys-help"
            # Tab indents (it stays in the editor) ...
            page.keyboard.press("Tab")
            assert page.evaluate(FOCUS_STOP)["inEditor"]
            # ... and Escape then Tab leaves it.
            page.keyboard.press("Escape")
            page.keyboard.press("Tab")
            stop = page.evaluate(FOCUS_STOP)
            assert stop is not None and not stop["inEditor"], stop
        stops.append(stop)
        if stop["inBar"] or stop["barTop"] > 1:
            continue  # the bar is not stuck to the top here, or the element is in it
        # Nothing focused hides under the sticky progress bar.
        assert stop["top"] >= stop["barBottom"] - 1, (stop, len(stops))
    else:
        raise AssertionError("400 presses of Tab never left the page: a keyboard trap.")
    assert in_editor == 1, "Tab skipped the code editor, or came back into it"
    # Every focusable element of the page was reached once, in order, and then focus left the page.
    # (the editor is reached through its shadow root, which the list above does not see; its stop was
    # replaced by the one after it, the Run button, when the test left it)
    assert [stop["text"] for stop in stops] == focusable
    assert page.locator("textarea").count() == 1 and not page.locator(".code-exercise textarea").is_visible()
    # Back up the page with Shift+Tab: focus now scrolls elements in at the top, where the sticky bar is.
    back: list[dict[str, Any]] = []
    for _ in range(len(stops)):
        page.keyboard.press("Shift+Tab")
        stop = page.evaluate(FOCUS_STOP)
        assert stop is not None, [stop["text"] for stop in back]
        if stop["inEditor"]:
            page.keyboard.press("Escape")  # Escape then Shift+Tab leaves the editor backwards
            page.keyboard.press("Shift+Tab")
            stop = page.evaluate(FOCUS_STOP)
            assert stop is not None and not stop["inEditor"], stop
        back.append(stop)
        if not stop["inBar"] and stop["barTop"] <= 1:
            assert stop["top"] >= stop["barBottom"] - 1, ("under the bar going back", stop)
    assert [stop["text"] for stop in back] == focusable[::-1]
    screenshot(page, "editor-keyboard")
    assert page_errors == []
    page.context.close()


def assert_reproducible(text: str) -> None:
    """The block's call, run with WRONG's output_shape (n_k for n_q), gives its "Got"; the reference its "Expected"."""
    found = re.search(r"Call:\s*output_shape\((\d+), (\d+), (\d+)\)", text)
    assert found, text
    n_q, n_k, d_v = found.groups()
    assert re.search(rf"Expected:\s*\({n_q}, {d_v}\)", text), text
    assert re.search(rf"Got:\s*\({n_k}, {d_v}\)", text), text


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_failures_show_a_call_that_reproduces_what_was_got(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 390, "height": 844}, color_scheme="dark")
    page.goto(live_server.lesson_url)
    expect(page.locator(EDITOR)).to_be_visible()

    # A syntax error is marked on its line in the editor.
    _set_editor(page, BROKEN)
    results = _run(page)
    expect(results.locator(".grade-message")).to_contain_text("SyntaxError on line 3")
    marked = page.locator(".code-exercise .cm-lintRange-error")
    expect(marked).to_have_count(1)
    assert "def project_qkv(X, Wq, Wk, Wv)" in marked.inner_text()
    expect(page.locator(".code-exercise .cm-lint-marker-error")).to_have_count(1)

    # A wrong function: call, expected and got in a monospace block; the call gives back what was got.
    expect(page.locator(".code-exercise .code-limit")).to_contain_text("Every run draws new random inputs")
    _set_editor(page, WRONG)
    results = _run(page)
    expect(page.locator(".code-exercise .cm-lintRange-error")).to_have_count(0)
    block = results.locator('.test-group[data-function="output_shape"] .test-repro').first
    expect(block).to_be_visible()
    text = block.inner_text()
    assert_reproducible(text)
    font = block.locator("dd").first.evaluate("el => getComputedStyle(el).fontFamily")
    assert "mono" in font.lower(), font
    # On a phone each label goes above its value, so an array's rows get the block's whole width (beside
    # the labels, rows of 40 characters wrapped in the middle).
    _set_editor(
        page, CORRECT_SOLUTION.replace("return X @ Wq, X @ Wk, X @ Wv", "return X @ Wq / 3, X @ Wk, X @ Wv")
    )
    results = _run(page)
    widths = results.evaluate(
        """(root) => [...root.querySelectorAll('.test-repro')].filter((b) => b.offsetParent !== null)
            .map((b) => [b.clientWidth, Math.min(...[...b.querySelectorAll('dd')].map((dd) => dd.clientWidth))])"""
    )
    assert widths and all(value >= 0.85 * block for block, value in widths), widths
    screenshot(page, "failure-block-390px-dark")
    _set_editor(page, WRONG)
    results = _run(page)
    # Every run draws new inputs; whatever they are, the call shown is the one that gave what was got.
    assert_reproducible(
        results.locator('.test-group[data-function="output_shape"] .test-repro').first.inner_text()
    )

    # Tests that an earlier one stopped are "not run", not failures.
    _set_editor(page, STOPS_EARLY)
    results = _run(page)
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"^✗ \d+ of \d+ tests that ran passed; \d+ not run\.$")
    )
    expect(results.locator(".grade-message")).to_contain_text(
        re.compile(r"stopped inside \w+, so the other \d+ did not run")
    )
    assert results.locator(".test-not_run").count() > 0
    assert results.locator(".test-not_run .test-status").first.text_content() == "not run"
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    assert page_errors == []
    page.context.close()


@pytest.mark.timeout(120)
def test_a_draft_is_saved_as_the_learner_types_and_leaving_unsaved_warns(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    from playwright.sync_api import expect

    page = new_page(chromium, page_errors, viewport={"width": 1100, "height": 900})
    page.goto(live_server.lesson_url)
    expect(page.locator(EDITOR)).to_be_visible()
    draft = "import numpy as np\n\ndef output_shape(n_q, n_k, d_v):\n    return 'draft in progress'\n"
    _set_editor(page, draft)
    expect(page.locator(".draft-status")).to_have_text("Draft saved.")

    # To the index and back: the draft is there (from the server: a fresh page knows only the cookie).
    page.goto(live_server.url + "/")
    page.goto(live_server.lesson_url)
    expect(page.locator(EDITOR)).to_contain_text("draft in progress")
    assert _editor_text(page) == draft

    # Typing and leaving at once: the browser asks first.
    dialogs: list[str] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.locator(EDITOR).click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# more")
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]
    assert not page.is_closed()
    # Once saved, leaving is quiet.
    expect(page.locator(".draft-status")).to_have_text("Draft saved.")
    with page.expect_event("close"):
        page.close(run_before_unload=True)
    assert dialogs == ["beforeunload"]
    assert page_errors == []
    page.context.close()


IN_ITS_ROOT = "el => el.getRootNode().activeElement === el"  # focused, inside a shadow root too
NEXT = (
    "Hint {} of 3 opens after 1 more run of your own code that does not pass all the tests (a program you ran "
    "before does not count)."
)


def _keys_to(page: Any, target: Any, *, key: str = "Tab", limit: int = 300) -> None:
    """Press ``key`` (Tab, or Shift+Tab) until ``target`` (a locator) has the focus; the editor keeps Tab to
    indent, so inside it Escape comes first, as its help says."""
    editor = page.locator(EDITOR)
    for _ in range(limit):
        if target.evaluate(IN_ITS_ROOT):
            return
        if editor.evaluate(IN_ITS_ROOT):
            page.keyboard.press("Escape")
        page.keyboard.press(key)
    raise AssertionError(f"{limit} presses of {key} never reached {target}.")


def _type_and_run_by_keyboard(page: Any, text: str, note: str) -> None:
    """Back (Shift+Tab) to the editor, replace its text, run it with Control+Enter, and wait until "Stuck?"
    says ``note`` (each failed run of one's own changes what opens the next hint)."""
    from playwright.sync_api import expect

    editor = page.locator(EDITOR)
    for _ in range(300):
        if editor.evaluate(IN_ITS_ROOT):
            break
        page.keyboard.press("Shift+Tab")
    else:
        raise AssertionError("300 presses of Shift+Tab never reached the editor.")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)
    page.keyboard.press("Control+Enter")
    expect(page.locator(".code-exercise .hint-note")).to_have_text(note, timeout=scaled(60_000))


def _timeline_of_the_last_helped_learner(live_server: LiveServer, chromium: Any, errors: list[str]) -> Any:
    """An instructor signs in by keyboard and opens the timeline of the learner last shown a hint."""
    app = live_server.app
    learner_id = app.state.qkv.store.instructors.help_events()[-1].learner_id
    _, token = app.state.qkv.store.instructors.add("Grace Hints")
    staff = new_page(chromium, errors, viewport={"width": 1280, "height": 900})
    staff.goto(f"{live_server.url}/instructor/sign-in#token={token}")
    tab_to(staff, "el => el.tagName === 'BUTTON'", limit=60)
    staff.keyboard.press("Enter")
    staff.wait_for_url(re.compile(r"/instructor$"))
    staff.goto(f"{live_server.url}/instructor/learners/{learner_id}")
    return staff


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_stuck_says_what_earns_a_hint_a_failed_run_opens_it_and_the_timeline_shows_it(
    live_server: LiveServer, chromium: Any, page_errors: list[str]
) -> None:
    """Keyboard only: "Stuck?" first says what earns a hint; a failed run of one's own opens hint 1; each
    next hint takes one more; the instructor's timeline shows each hint read; the solution comes last."""
    from playwright.sync_api import expect

    from qkv.lessons import SOLUTION_AFTER_FAILED_RUNS, load_catalog

    texts = load_catalog().code_exercise("L4.1/functions").exercise.hints
    words = [max(re.split(r"[`*_\"&<>]", text), key=len).strip() for text in texts]  # plain text of each

    page = new_page(chromium, page_errors, viewport={"width": 390, "height": 844})
    page.goto(live_server.lesson_url)
    expect(page.locator(EDITOR)).to_be_visible()
    assert [word for word in words if word in page.content()] == []  # no hint's text before it is earned
    help_box = page.locator(".code-exercise details.code-help")
    _keys_to(page, help_box.locator("summary"))
    page.keyboard.press("Enter")
    note = help_box.locator(".hint-note")
    expect(note).to_have_text(
        "Hint 1 of 3 opens after a run of your own code that does not pass all the tests."
    )
    hints = help_box.locator("li.code-hint")
    expect(help_box.get_by_role("button", name=re.compile("Show hint"))).to_be_hidden()

    _type_and_run_by_keyboard(page, A_TRY, NEXT.format(2))
    _keys_to(page, page.get_by_role("button", name="Show hint 1 of 3"))
    page.keyboard.press("Enter")
    expect(hints).to_have_count(1)
    expect(hints.first).to_contain_text("Hint 1 of 3:")
    expect(hints.first).to_be_focused()
    assert words[0] in help_box.inner_text() and words[1] not in page.content()
    expect(help_box.get_by_role("button", name="Show hint 2 of 3")).to_be_hidden()
    screenshot(page, "stuck-hint-1-390px")

    staff = _timeline_of_the_last_helped_learner(live_server, chromium, page_errors)
    shown = staff.locator(".timeline-help")
    expect(shown).to_have_count(1)
    expect(shown).to_contain_text("Hint 1 shown")
    expect(shown).to_contain_text(re.compile(r"hint 1 at \d\d:\d\d"))
    staff.context.close()

    _type_and_run_by_keyboard(page, A_TRY + "# try 2\n", NEXT.format(3))
    _keys_to(page, page.get_by_role("button", name="Show hint 2 of 3"))
    page.keyboard.press("Enter")
    expect(hints).to_have_count(2)
    assert "`" not in help_box.inner_text() and help_box.locator("li.code-hint code").count() > 0

    # The page says when the solution opens; until then there is no button and no solution text.
    expect(help_box.locator(".solution-note")).to_contain_text(
        f"after {SOLUTION_AFTER_FAILED_RUNS} runs of your own code"
    )
    solution = page.get_by_role("button", name="Show the reference solution")
    expect(solution).to_be_hidden()
    assert SOLUTION_AFTER_FAILED_RUNS == 3  # the third try opens the last hint and the solution together
    _type_and_run_by_keyboard(page, A_TRY + "# try 3\n", "Every hint is open.")
    expect(solution).to_be_visible()
    # Before the button, the learner is told that reading it unsolved is counted, as the grid and LMS count it.
    expect(help_box.locator(".solution-note")).to_have_text(
        "You have earned the reference solution. Reading it before you solve the exercise is recorded: a solve "
        "after it is marked as one after the solution, for your instructor and in the gradebook."
    )
    _keys_to(page, solution)
    page.keyboard.press("Enter")
    expect(help_box.locator("pre.reference-solution")).to_contain_text("def param_count(")
    screenshot(page, "stuck-solution-390px")
    assert page_errors == []
    page.context.close()


# For each line number shown in an editor's gutter: [number, its top − its line's top] in CSS pixels.
GUTTER_GAPS = """() => [...document.querySelectorAll('.cm-host')].flatMap((host) => {
  const root = host.shadowRoot;
  const lines = [...root.querySelectorAll('.cm-content .cm-line')];
  return [...root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
    .filter((n) => getComputedStyle(n).visibility !== 'hidden')
    .map((n) => {
      const line = lines[Number(n.textContent) - 1];
      return [n.textContent, line ? n.getBoundingClientRect().top - line.getBoundingClientRect().top : null];
    });
})"""


# From before the page's first script, in every animation frame: how many frames have shown a gutter, and the
# first few frames in which a line number was more than 1 px off its line (those numbers with their gaps).
WATCH_GUTTER_GAPS = f"""
window.__gutterFrames = 0;
window.__gutterMisses = [];
(function watch() {{
    const gaps = ({GUTTER_GAPS})();
    if (gaps.length > 0) {{
        window.__gutterFrames += 1;
        const off = gaps.filter((g) => g[1] === null || Math.abs(g[1]) > 1);
        if (off.length > 0 && window.__gutterMisses.length < 3) {{
            window.__gutterMisses.push({{frame: window.__gutterFrames, off}});
        }}
    }}
    requestAnimationFrame(watch);
}})();
"""
# Resolves after n animation frames.
FRAMES = "(n) => new Promise((done) => { const next = (left) => left ? requestAnimationFrame(() => next(left - 1)) : done(); next(n); })"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_line_numbers_sit_on_their_lines_from_the_first_paint_on_a_phone(
    live_server: LiveServer, chromium: Any, page_errors: list[str], scheme: str
) -> None:
    """At 375 px the editor loads below the fold, where CodeMirror does not measure its lines: each number
    must sit on its line (within 1 px) in every frame from the first that shows the editor, and after the
    learner scrolls to it. The editor's stylesheet is held back for five frames, as a slow phone or network
    holds it: an editor shown before its styles (the gutter's rows at CodeMirror's guess, not one line
    high) had its numbers drift 8 px a line off their lines until the stylesheet came."""
    page = new_page(chromium, page_errors, viewport={"width": 375, "height": 812}, color_scheme=scheme)
    page.add_init_script(WATCH_GUTTER_GAPS)
    held: list[str] = []

    def hold_five_frames(route: Any) -> None:
        held.append(route.request.url)
        page.evaluate(FRAMES, 5)
        route.continue_()

    page.route("**/editor.css", hold_five_frames)
    page.goto(live_server.lesson_url)
    page.wait_for_selector(".cm-host .cm-lineNumbers .cm-gutterElement", state="attached")
    page.evaluate(FRAMES, 2)  # the watcher has seen the frames until now
    assert len(held) == 1, held
    assert page.evaluate("window.__gutterFrames") >= 2
    assert page.evaluate("window.__gutterMisses") == []
    for moment in ("right after load", "scrolled to"):
        if moment == "scrolled to":
            page.locator(EDITOR).scroll_into_view_if_needed()
        gaps = page.evaluate(GUTTER_GAPS)
        assert len(gaps) >= 5, gaps
        assert [gap for gap in gaps if gap[1] is None or abs(gap[1]) > 1] == [], (moment, gaps)
    screenshot(page, f"editor-gutter-phone-{scheme}")
    assert page_errors == []
    page.context.close()
