"""The class's mistakes in Chromium: four learners make one mistake in four styles; the instructor reads the
group on "Mistakes of this class" (its message, an example beside the reference) and names it; a fifth
learner's program of the same behaviour shows the note first, marked as the instructor's, and another
mistake does not; the learner answers "Did this help?"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.class_mistakes import EXERCISE, LESSON, OTHERS, STYLES
from tests.time_scale import scaled
from tests.web.backend_fixtures import Browser
from tests.web.browser_support import BROWSER, LiveServer, live_app, new_page, replace_editor_text, screenshot
from tests.web.lesson_walk import pick_choice

pytestmark = BROWSER
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"  # bundled; nothing is fetched
LINE = "Say which size the square root takes."
ANSWER_LINE = "Tell me which of the two grows with d_k."
SENTENCE = "You divided by the square root of Q's whole size (n_q · d_k); the scale is √d_k alone."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_app(tmp_path_factory.mktemp("class-mistakes")) as live:
        for program in STYLES[:4]:  # four learners, one mistake, four styles
            learner = Browser(live.app, LESSON).open_lesson()
            assert learner.submit_code(program, EXERCISE).status_code == 200
        yield live


def _stored_lines(server: LiveServer) -> list[tuple[bool, str]]:
    """Every "Did this help?" kept: its yes or no and its line."""
    from sqlalchemy import text

    with server.app.state.qkv.store.mistakes.database.read() as conn:
        return [
            (bool(row[0]), row[1]) for row in conn.execute(text("SELECT helpful, line FROM message_feedback"))
        ]


def _wrong_answer_message(server: LiveServer, exercise: str) -> str:
    """The message of the latest wrong answer to ``exercise`` (what its learner read under the form)."""
    from sqlalchemy import text

    query = "SELECT message FROM answers WHERE exercise_id = :e AND NOT correct ORDER BY id DESC"
    with server.app.state.qkv.store.mistakes.database.read() as conn:
        return str(conn.execute(text(query), {"e": exercise}).scalars().first())


def _run(page: Any, server: LiveServer, program: str) -> Any:
    from playwright.sync_api import expect

    page.goto(server.lesson(LESSON))
    box = page.locator(f'.code-exercise[data-exercise-id="{EXERCISE}"]')
    replace_editor_text(page, box.locator(".cm-content"), program)
    page.keyboard.press("Control+Enter")
    results = box.locator(".grade-results")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✗ \d+ of \d+"), timeout=scaled(60_000)
    )
    return results


@pytest.mark.timeout(300)
def test_the_instructor_names_a_group_and_the_note_reaches_a_fifth_style(
    server: LiveServer, chromium: Any
) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    teacher = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    _, token = server.app.state.qkv_instructor.desk.add("Grace")
    teacher.goto(f"{server.url}/instructor/sign-in#token={token}")
    teacher.get_by_role("button").first.click()
    teacher.wait_for_url(re.compile(r"/instructor$"))
    teacher.get_by_role("link", name="Mistakes of this class").click()
    expect(teacher.locator("h1")).to_have_text("Mistakes of this class")
    group = teacher.locator("article.mistake-group").first
    expect(group.locator(".group-learners")).to_have_text("4")
    expect(group.locator(".group-message")).to_contain_text("The message learners got:")
    expect(group.locator("pre.diff").first).to_contain_text("--- reference")
    group.get_by_label("Your note for these learners (one sentence)").fill(SENTENCE)
    group.get_by_role("button", name="Name this group").click()
    expect(teacher.locator(".group-note").first).to_contain_text(SENTENCE)
    screenshot(teacher, "class-mistakes-named")

    learner = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    results = _run(learner, server, STYLES[4])
    first = results.locator(".test-result.test-fail").first
    expect(first.locator(".test-note")).to_have_text(f"Instructor's note: {SENTENCE}")
    order = first.evaluate(
        "el => [...el.children].map(child => child.className).filter(name => name.startsWith('test-'))"
    )
    assert order.index("test-note") < order.index("test-message"), "the note comes first"
    # "No" asks for the optional line, focused, and sends the two together (sent at the click, the line typed
    # after it was refused: the line's box was disabled once "No" had gone).
    helpful = first.locator(".helpful")
    expect(helpful.locator(".helpful-line")).to_be_hidden()
    helpful.get_by_role("button", name="No").click()
    line = helpful.get_by_role("textbox", name="What would have helped? (optional)")
    expect(line).to_be_focused()
    learner.keyboard.type(LINE)
    learner.keyboard.press("Enter")
    expect(first.locator(".helpful-said")).to_have_text("Thank you: noted.")
    assert _stored_lines(server) == [(False, LINE)]
    # The instructor reads the line on the group (it was kept and shown nowhere).
    teacher.reload()
    expect(teacher.locator("article.mistake-group:has(.group-note) .group-lines li")).to_have_text([LINE])
    screenshot(learner, "class-mistakes-note")

    other = _run(learner, server, OTHERS[0])
    expect(other.locator(".test-result.test-fail").first).to_be_visible()
    expect(other.locator(".test-note")).to_have_count(0)
    assert errors == []


def _sign_in(page: Any, server: LiveServer, name: str) -> None:
    _, token = server.app.state.qkv_instructor.desk.add(name)
    page.goto(f"{server.url}/instructor/sign-in#token={token}")
    page.get_by_role("button").first.click()
    page.wait_for_url(re.compile(r"/instructor$"))


@pytest.mark.timeout(300)
def test_every_failed_test_and_every_wrong_hand_answer_asks_did_this_help(
    server: LiveServer, chromium: Any
) -> None:
    """Under each failed test's message and under a wrong hand answer's, "Did this help?"; the marks are
    counted on the instructor's page per kind of message, and a hand answer's line is read there with the
    message it was given on."""
    from playwright.sync_api import expect

    errors: list[str] = []
    learner = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    results = _run(learner, server, OTHERS[0])
    failed = results.locator(".test-result.test-fail, .test-result.test-error")
    assert failed.count() >= 2
    expect(results.locator(".test-result .helpful")).to_have_count(failed.count())  # folded ones too
    first = failed.first
    expect(first.locator(".test-hint")).to_be_visible()  # a catalogued hint: the message marked
    first.locator(".helpful").get_by_role("button", name="Yes").click()
    expect(first.locator(".helpful-said")).to_have_text("Thank you: noted.")

    # A wrong hand answer: its message gets the same question, under the form's feedback.
    pick_choice(learner, "guess", "A", "is-wrong")
    form = learner.locator('form[data-exercise-id="guess"]')
    helpful = form.locator(".helpful")
    expect(helpful).to_be_visible()
    helpful.get_by_role("button", name="No").click()
    expect(helpful.get_by_role("textbox", name="What would have helped? (optional)")).to_be_focused()
    learner.keyboard.type(ANSWER_LINE)
    learner.keyboard.press("Enter")
    expect(helpful.locator(".helpful-said")).to_have_text("Thank you: noted.")
    pick_choice(learner, "guess", "B", "is-correct")
    expect(form.locator(".helpful")).to_have_count(0)  # a right answer is not asked about

    teacher = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    _sign_in(teacher, server, "Marks")
    teacher.goto(f"{server.url}/instructor/mistakes")
    rows = teacher.locator("table.mistakes-unhelpful tbody tr")
    expect(rows.filter(has_text="hand-answer message").locator("td")).to_have_text(["1 (100%)", "1"])
    expect(rows.filter(has_text="catalogued hint").locator("td")).to_have_text(["0 (0%)", "1"])
    said = teacher.locator(f'.exercise-lines[data-exercise="{LESSON}/guess"] li')
    expect(said.locator(".line-said")).to_have_text([ANSWER_LINE])
    expect(said.locator(".line-on")).to_have_text(f"On the message: {_wrong_answer_message(server, 'guess')}")
    screenshot(teacher, "class-mistakes-answer-lines")
    assert errors == []


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("width", "scheme"), [(1100, "light"), (375, "dark")], ids=["desktop", "phone-dark"])
def test_axe_finds_no_violations_on_the_mistakes_page(
    server: LiveServer, chromium: Any, width: int, scheme: str
) -> None:
    errors: list[str] = []
    page = new_page(
        chromium, errors, viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    _, token = server.app.state.qkv_instructor.desk.add(f"Axe {width} {scheme}")
    page.goto(f"{server.url}/instructor/sign-in#token={token}")
    page.get_by_role("button").first.click()
    page.wait_for_url(re.compile(r"/instructor$"))
    page.goto(f"{server.url}/instructor/mistakes")
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations.map(
            (v) => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))"""
    )
    assert violations == []
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, "the page fits the screen's width"
    screenshot(page, f"class-mistakes-{width}-{scheme}")
    assert errors == []
