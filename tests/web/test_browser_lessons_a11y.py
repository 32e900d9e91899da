"""Every lesson of the catalog in Chromium, for the checks a learner walking it found wanting: axe-core with
no violation on each lesson page at 1280 and 375 px, light and dark (with feedback on screen), and the code
editor on a 375 px phone at horizontal scroll 0 from its first paint, also after the browser brings it on
screen or the keyboard focuses it, with the first column of every line clear of the line numbers.

axe-core is bundled under ``tests/web/vendor/axe-core`` and injected by Playwright (nothing is fetched).
Nothing here names a lesson: the ids come from the catalog.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from qkv.lessons import Lesson
from tests import lesson_contract as contract
from tests.web.browser_support import BROWSER, LiveServer, new_page, page_progress, screenshot
from tests.web.lesson_walk import _wrong_typed_answer, type_answer

pytestmark = BROWSER

LESSONS = contract.catalog().lessons
CODED = [lesson for lesson in LESSONS if any(ex.kind == "code" for ex in lesson.exercises.values())]
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}

# From before the page's first script: each animation frame, the largest sideways scroll any code editor
# has had so far, so that a scroll that came and went before the test looked is still seen.
WATCH_EDITOR_SCROLL = """
window.__editorScrollMax = 0;
(function watch() {
    for (const host of document.querySelectorAll('.cm-host')) {
        const scroller = host.shadowRoot && host.shadowRoot.querySelector('.cm-scroller');
        if (scroller) window.__editorScrollMax = Math.max(window.__editorScrollMax, scroller.scrollLeft);
    }
    requestAnimationFrame(watch);
})();
"""
# Each editor: its scroll, and how far its first line's text starts right of the line numbers' edge.
EDITOR_STATE = """() => [...document.querySelectorAll('.cm-host')].map((host) => {
    const root = host.shadowRoot;
    const scroller = root.querySelector('.cm-scroller');
    const gutter = root.querySelector('.cm-gutters').getBoundingClientRect();
    const line = root.querySelector('.cm-line');
    const textStart = line.getBoundingClientRect().left + parseFloat(getComputedStyle(line).paddingLeft);
    return {scrollLeft: scroller.scrollLeft, clearance: textStart - gutter.right};
})"""
# axe on the whole page, the code editors included: every rule, scrollable-region-focusable on CodeMirror's
# scroller too (its content carries tabindex 0, which axe counts as focusable; issue 43 found it failing).
RUN_AXE = """async () => {
    const brief = (v) => ({id: v.id, impact: v.impact, help: v.help,
                           nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))});
    // label-content-name-mismatch is one of axe's experimental rules, off unless asked for: a control's
    // accessible name must contain the text it shows (the mask grid's 0 and −∞).
    const all = await axe.run(document, {
        resultTypes: ['violations'], rules: {'label-content-name-mismatch': {enabled: true}},
    });
    // Each editor whose scroller scrolls (sideways, on a phone) was checked by that rule, and passed.
    const scrollers = await axe.run(document, {runOnly: ['scrollable-region-focusable']});
    const checked = scrollers.passes.flatMap((rule) => rule.nodes).map((n) => n.target.join(' '));
    const scrolling = [...document.querySelectorAll('.cm-host')].filter((host) => {
        const scroller = host.shadowRoot.querySelector('.cm-scroller');
        return scroller.scrollWidth > scroller.clientWidth || scroller.scrollHeight > scroller.clientHeight;
    }).length;
    const seen = checked.filter((target) => target.includes('.cm-scroller')).length;
    const missed = seen < scrolling ? [{id: 'editor-not-checked', impact: null, help: `${seen} of ${scrolling}`, nodes: []}] : [];
    return [...all.violations.map(brief), ...missed];
}"""


def _open(chromium: Any, url: str, errors: list[str], **options: Any) -> Any:
    page = new_page(chromium, errors, **options)
    page.goto(url)
    page.wait_for_selector("html.js-ready")
    page.wait_for_selector("[data-widget]:not([data-mounted])", state="detached")
    return page


def _feedback_on_screen(page: Any, lesson: Lesson) -> None:
    """A wrong answer and an unreadable one in the first typed exercise, so that their colours are checked."""
    from playwright.sync_api import expect

    typed = [ex for ex in lesson.exercises.values() if ex.kind in ("numeric", "letter")]
    if not typed:
        return
    seed = page_progress(page)["variant_seed"]
    text, message = _wrong_typed_answer(lesson, typed[0], seed)
    expect(type_answer(page, typed[0].id, text, "is-wrong")).to_contain_text(message[:60])
    # "Did this help?" answered No: its line and Send button are on screen too.
    helpful = page.locator(f'form[data-exercise-id="{typed[0].id}"] .helpful')
    helpful.get_by_role("button", name="No").click()
    expect(helpful.get_by_role("button", name="Send")).to_be_visible()
    if len(typed) > 1:
        type_answer(page, typed[1].id, "?" if typed[1].kind == "letter" else "one", "is-format")


@pytest.mark.content
@pytest.mark.timeout(180)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1280", "375"])
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_axe_finds_no_violations_on_every_lesson_page(
    chromium: Any,
    live_server: LiveServer,
    page_errors: list[str],
    lesson: Lesson,
    viewport: dict[str, int],
    scheme: str,
) -> None:
    # bypass_csp lets Playwright inject the bundled axe-core; the page's own scripts are unchanged.
    options = {"viewport": viewport, "color_scheme": scheme, "bypass_csp": True}
    page = _open(chromium, live_server.lesson(lesson.id), page_errors, **options)
    _feedback_on_screen(page, lesson)
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(RUN_AXE)
    screenshot(page, f"a11y-{lesson.id}-{viewport['width']}-{scheme}")
    assert violations == [], json.dumps(violations, indent=1)
    assert page_errors == []
    page.context.close()


@pytest.mark.content
@pytest.mark.timeout(120)
@pytest.mark.parametrize("lesson", CODED, ids=lambda lesson: lesson.id)
def test_the_code_editor_starts_at_its_first_column_on_a_phone(
    chromium: Any, live_server: LiveServer, page_errors: list[str], lesson: Lesson
) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport=PHONE, color_scheme="dark")
    context.add_init_script(WATCH_EDITOR_SCROLL)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.on("pageerror", lambda error: page_errors.append(f"page error: {error}"))
    page.goto(live_server.lesson(lesson.id))
    page.wait_for_selector("html.js-ready")
    content = page.locator(".code-exercise .cm-content").first
    expect(content).to_be_attached()
    page.evaluate("document.fonts.ready")
    # Two frames after the editor and the fonts are there: the watcher has seen every scroll until now.
    page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    assert page.evaluate("window.__editorScrollMax") == 0
    _assert_first_column_shows(page, "at first paint")
    # The browser brings the editing area on screen (a fragment, a tool, a focus): still column 0.
    content.scroll_into_view_if_needed()
    _assert_first_column_shows(page, "scrolled into view")
    content.focus()
    _assert_first_column_shows(page, "focused")
    page.locator(".code-exercise").first.screenshot(path=str(_artifact(f"editor-375-{lesson.id}")))
    assert page.evaluate("window.__editorScrollMax") == 0
    assert page_errors == []
    context.close()


def _assert_first_column_shows(page: Any, when: str) -> None:
    for editor in page.evaluate(EDITOR_STATE):
        assert editor["scrollLeft"] == 0, (when, editor)
        assert editor["clearance"] >= 0, (when, editor)  # the first character is not under the numbers


def _artifact(name: str) -> Path:
    from tests.web.browser_support import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9.-]', '-', name)}.png"
