"""A learner's walk through any lesson page in Chromium: wrong answers first, then the right ones.

Used by the browser tests of the later lessons. The lesson engine, not this file, knows the answers: a
numeric exercise's right answer is the variant's value it names, its wrong answer the value of its first
named mistake; a choice's wrong answer is any letter the engine rejects. Code exercises are walked with the
lesson's corpora (a wrong program first, whose hint must show, then a correct one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.lesson_contract import corpus_of, expected_hint, no_answer_in
from tests.time_scale import scaled
from tests.web.browser_support import DESKTOP, PHONE, new_page, page_progress, replace_editor_text, screenshot

TESTS = Path(__file__).parents[1]


def answer_text(value: Any) -> str:
    return json.dumps(value)


def typed_vector(values: list[float]) -> str:
    """A vector as a learner types it: ``[0.7071, 0]``, four decimals at most."""
    return "[" + ", ".join(f"{v:.4f}".rstrip("0").rstrip(".") for v in values) + "]"


def pick_choice(page: Any, exercise_id: str, letter: str, outcome: str) -> None:
    """Pick one letter of a choice exercise with the mouse, press Check, and wait for ``outcome``."""
    from playwright.sync_api import expect

    form = page.locator(f'form[data-exercise-id="{exercise_id}"]')
    form.locator(f'input[type="radio"][value="{letter}"]').check()
    form.get_by_role("button", name="Check").click()
    expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile(outcome))


def type_answer(page: Any, exercise_id: str, text: str, outcome: str) -> Any:
    """Type an answer, press Enter, wait for ``outcome``; returns the feedback element."""
    from playwright.sync_api import expect

    box = page.locator(f"#answer-{exercise_id}")
    box.fill(text)
    box.press("Enter")
    feedback = page.locator(f"#feedback-{exercise_id}")
    expect(feedback).to_have_class(re.compile(outcome))
    return feedback


def check_choice(page: Any, lesson: Any, exercise: Any, seed: int | None, wrong_first: bool = True) -> None:
    from playwright.sync_api import expect

    form = page.locator(f'form.exercise[data-exercise-id="{exercise.id}"]')
    feedback = page.locator(f"#feedback-{exercise.id}")
    letters = [choice.letter for choice in exercise.choices]
    right = next(letter for letter in letters if lesson.check(exercise.id, letter, variant_seed=seed).correct)
    if wrong_first:
        wrong = next(letter for letter in letters if letter != right)
        form.locator(f'input[type="radio"][value="{wrong}"]').check()
        form.get_by_role("button", name="Check").click()
        expect(feedback).to_have_class(re.compile("is-wrong"))
        expect(feedback).to_contain_text(lesson.check(exercise.id, wrong, variant_seed=seed).message[:40])
    # The keyboard: focus the right radio and press Enter in the form.
    radio = form.locator(f'input[type="radio"][value="{right}"]')
    radio.focus()
    page.keyboard.press("Space")
    form.get_by_role("button", name="Check").focus()
    page.keyboard.press("Enter")
    expect(feedback).to_have_class(re.compile("is-correct"))


def check_numeric(page: Any, lesson: Any, exercise: Any, seed: int | None) -> str:
    """A named mistake first (its sentence must show), then the right answer; returns what was typed."""
    from playwright.sync_api import expect

    names = lesson.hooks.namespace(lesson.variant(seed))
    box = page.locator(f"#answer-{exercise.id}")
    feedback = page.locator(f"#feedback-{exercise.id}")
    if exercise.mistakes:
        mistake = next(iter(exercise.mistakes))
        box.fill(answer_text(names[mistake]))
        box.press("Enter")
        expect(feedback).to_have_class(re.compile("is-wrong"))
        told = lesson.check(exercise.id, answer_text(names[mistake]), variant_seed=seed).message
        expect(feedback).to_contain_text(told)
    right = answer_text(names[exercise.answer])
    box.fill(right)
    box.press("Enter")
    expect(feedback).to_have_class(re.compile("is-correct"))
    return right


def check_code(
    page: Any,
    lesson: Any,
    exercise: Any,
    *,
    wrong: str | None = None,
    call: str | None = None,
    shot: Path | None = None,
) -> None:
    """Run a wrong corpus program (the first, or the one named) and see its hint, then a correct one pass.

    ``call`` is the start of the failing call the results must show; ``shot`` a screenshot of the results.
    """
    from playwright.sync_api import expect

    folder = corpus_of(lesson) / exercise.id
    wrong_file = folder / "wrong" / wrong if wrong else sorted((folder / "wrong").glob("*.py"))[0]
    correct = sorted((folder / "correct").glob("*.py"))[0]
    box = page.locator(f'.code-exercise[data-exercise-id="{exercise.id}"]')
    editor = box.locator(".cm-content")
    results = box.locator(".grade-results")
    replace_editor_text(page, editor, wrong_file.read_text())
    page.keyboard.press("Control+Enter")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✗ \d+ of \d+ tests passed"), timeout=scaled(60_000)
    )
    expect(results.locator(".test-hint").first).to_be_visible()
    expect(results).to_contain_text(expected_hint(lesson, wrong_file)[:50])
    if call:
        expect(results.locator(".test-repro").first).to_contain_text(call)
    if shot:
        results.screenshot(path=str(shot))
    replace_editor_text(page, editor, correct.read_text())
    page.keyboard.press("Control+Enter")
    expect(results.locator(".grade-summary")).to_have_text(
        re.compile(r"✓ All \d+ tests passed"), timeout=scaled(60_000)
    )


def reload_and_check_answers(page: Any, answers: dict[str, str], parts: tuple[str, ...] = ()) -> None:
    """Reload the page: each typed answer of ``answers`` (exercise id: text) is back in its box and marked
    correct, and each part of ``parts`` is marked done."""
    from playwright.sync_api import expect

    page.reload()
    for exercise_id, answer in answers.items():
        expect(page.locator(f"#answer-{exercise_id}")).to_have_value(answer)
        expect(page.locator(f"#feedback-{exercise_id}")).to_have_class(re.compile("is-correct"))
    for part in parts:
        expect(page.locator(f'.progress-part[data-part="{part}"]')).to_have_class(re.compile("is-done"))


def walk(page: Any, base_url: str, lesson: Any, shot_name: str) -> dict[str, str]:
    """Do every exercise of the lesson (wrong first) and check that the progress panel says done."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/lessons/{lesson.id}")
    expect(page.locator("h1")).to_have_text(lesson.title)
    seed = page_progress(page)["variant_seed"]
    typed: dict[str, str] = {}
    for exercise in lesson.exercises.values():
        if exercise.kind == "choice":
            check_choice(page, lesson, exercise, seed)
        elif exercise.kind in ("numeric", "letter"):
            typed[exercise.id] = check_numeric(page, lesson, exercise, seed)
        elif exercise.kind == "code":
            check_code(page, lesson, exercise)
    for part in lesson.parts:
        expect(page.locator(f'.progress-part[data-part="{part.id}"]')).to_have_class(re.compile("is-done"))
    expect(page.locator("#progress-summary")).to_have_text(re.compile(r"^\s*(\d+) of \1 exercises done\s*$"))
    screenshot(page, shot_name)
    reload_and_check_answers(page, typed)  # the answers and their feedback come back
    return typed


def keyboard_walk(page: Any, base_url: str, lesson: Any) -> None:
    """Every exercise of the lesson with the keyboard alone, wrong first: each wrong answer (every wrong
    letter of a choice, a typed answer's first named mistake, a code exercise's first wrong corpus
    program) must get the engine's own sentence for it, then the right one is accepted. Focus is moved to
    each control directly (a Tab walk of the page is tested elsewhere); everything else is keys."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/lessons/{lesson.id}")
    page.wait_for_selector("html.js-ready")
    seed = page_progress(page)["variant_seed"]
    names = lesson.hooks.namespace(lesson.variant(seed))
    for exercise in lesson.exercises.values():
        feedback = page.locator(f"#feedback-{exercise.id}")
        if exercise.kind == "choice":
            letters = [choice.letter for choice in exercise.choices]
            right = next(
                letter for letter in letters if lesson.check(exercise.id, letter, variant_seed=seed).correct
            )
            for letter in [*(letter for letter in letters if letter != right), right]:
                told = lesson.check(exercise.id, letter, variant_seed=seed).message
                _keyboard_choice(page, exercise.id, letter)
                expect(feedback).to_contain_text(told[:60])
        elif exercise.kind in ("numeric", "letter"):
            if exercise.kind == "letter":  # a letter's named mistakes are keyed by the wrong letter
                wrong = next(iter(exercise.mistakes), None) or next(
                    letter for letter in "ABCDQKV" if letter != exercise.answer
                )
            else:
                wrong = _wrong_typed_answer(lesson, exercise, seed)[0]
            tries = [wrong]
            tries.append(
                answer_text(names[exercise.answer]) if exercise.kind == "numeric" else exercise.answer
            )
            for text in tries:
                told = lesson.check(exercise.id, text, variant_seed=seed).message
                page.locator(f"#answer-{exercise.id}").focus()
                page.keyboard.press("Control+a")
                page.keyboard.type(text)
                page.keyboard.press("Enter")
                expect(feedback).to_contain_text(told[:60])
            expect(feedback).to_have_class(re.compile("is-correct"))
        elif exercise.kind == "code":
            _keyboard_code(page, lesson, exercise)
    for part in lesson.parts:
        expect(page.locator(f'.progress-part[data-part="{part.id}"]')).to_have_class(re.compile("is-done"))


def _keyboard_choice(page: Any, exercise_id: str, letter: str) -> None:
    form = page.locator(f'form.exercise[data-exercise-id="{exercise_id}"]')
    form.locator(f'input[type="radio"][value="{letter}"]').focus()
    page.keyboard.press("Space")
    form.get_by_role("button", name="Check").focus()
    page.keyboard.press("Enter")


def _keyboard_code(page: Any, lesson: Any, exercise: Any) -> None:
    from playwright.sync_api import expect

    folder = corpus_of(lesson) / exercise.id
    if (folder / "graded-in.txt").is_file():
        folder = TESTS / (folder / "graded-in.txt").read_text().split()[0]
    box = page.locator(f'.code-exercise[data-exercise-id="{exercise.id}"]')
    results = box.locator(".grade-results")
    wrong = sorted((folder / "wrong").glob("*.py"))[0]
    correct = sorted((folder / "correct").glob("*.py"))[0]
    for program, summary in ((wrong, r"✗ \d+ of \d+ tests passed"), (correct, r"✓ All \d+ tests passed")):
        box.locator(".cm-content").focus()
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(program.read_text())  # one edit: no auto-indent
        page.keyboard.press("Control+Enter")
        expect(results.locator(".grade-summary")).to_have_text(re.compile(summary), timeout=scaled(90_000))
        if program is wrong and "# expected hint:" in program.read_text():
            hint = expected_hint(lesson, program)
            expect(results).to_contain_text(hint[:50])


def assert_fits_a_phone(page: Any, width: int) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1] == width, f"The page is {widths[0]} px wide at a {width} px viewport."
    hidden = page.evaluate(
        """() => [...document.querySelectorAll('.widget-live, .widget-live svg, .math-display, .lesson-section p:not(.visually-hidden)')]
            .filter((e) => e.offsetParent !== null && e.getBoundingClientRect().right > window.innerWidth + 1)
            .map((e) => `${e.className.baseVal ?? e.className}: ${e.getBoundingClientRect().right}`)"""
    )
    assert hidden == [], hidden


def assert_predict_first_and_no_answer_shown(page: Any, lesson: Any, keys: tuple[str, ...]) -> None:
    """On a fresh page predict-first comes before the idea, and none of the variant's answers ``keys``
    is in the page's text: not to 2, 3 or 6 decimals, not as typed, not one component alone."""
    order = page.evaluate(
        "[...document.querySelectorAll('section.lesson-section')].map(s => s.id).slice(0, 3)"
    )
    assert order == ["predict", "idea", "part1"], order
    variant = lesson.variant(page_progress(page)["variant_seed"])
    text = " ".join(page.locator("main").inner_text().split())
    for key in keys:
        for decimals in (2, 3, 6):
            written = ", ".join(f"{value:.{decimals}f}" for value in variant[key])
            assert written not in text, (key, written)
        assert typed_vector(variant[key]) not in text, key
        for value in variant[key]:
            if round(value, 2) != value:  # a component specific enough to mean something
                assert f"{value:.6f}" not in text and f"{value:.3f}" not in text, (key, value)


def _wrong_typed_answer(lesson: Any, exercise: Any, seed: int | None) -> tuple[str, str]:
    """An answer the engine rejects for a typed exercise, and the feedback class it must get: a named
    mistake when the exercise names one (its sentence must show), else a value off by one."""
    import numpy as np

    names = lesson.hooks.namespace(lesson.variant(seed))
    if exercise.mistakes:
        text = answer_text(names[next(iter(exercise.mistakes))])
    elif exercise.kind == "letter":
        text = next(letter for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if letter != exercise.answer)
    else:
        text = answer_text((np.asarray(names[exercise.answer], dtype=float) + 1).tolist())
    result = lesson.check(exercise.id, text, variant_seed=seed)
    assert not result.correct, (lesson.id, exercise.id, text)
    return text, result.message


def assert_no_answer_on_screen(page: Any, lesson: Any, seed: int | None) -> None:
    """No numeric answer with a fraction is on the live page (widgets drawn) in a form a learner could copy."""
    no_answer_in(lesson, seed, " ".join(page.locator("main").inner_text().split()))


def smoke_walk(chromium: Any, base_url: str, lesson: Any, shot_name: str) -> None:
    """The smoke walk of one lesson page, for any lesson: at phone width and on a desktop, no console error,
    every widget mounts, nothing sticks out sideways on the phone, no answer shows before it is earned; on
    the desktop a wrong typed answer gets its feedback and Run on each code exercise's starter code shows
    its results."""
    from playwright.sync_api import expect

    for label, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        errors: list[str] = []
        page = new_page(chromium, errors, viewport=viewport)
        page.goto(f"{base_url}/lessons/{lesson.id}")
        page.wait_for_selector("html.js-ready")
        expect(page.locator("h1")).to_have_text(lesson.title)
        widgets = page.locator("[data-widget]")
        expect(page.locator("[data-widget]:not([data-mounted])")).to_have_count(0)
        seed = page_progress(page)["variant_seed"]
        assert_no_answer_on_screen(page, lesson, seed)
        if label == "phone":
            assert_fits_a_phone(page, PHONE["width"])
        else:
            typed = [ex for ex in lesson.exercises.values() if ex.kind in ("numeric", "letter")]
            if typed:
                text, message = _wrong_typed_answer(lesson, typed[0], seed)
                feedback = type_answer(page, typed[0].id, text, "is-wrong")
                expect(feedback).to_contain_text(message[:60])
            for exercise in (ex for ex in lesson.exercises.values() if ex.kind == "code"):
                box = page.locator(f'.code-exercise[data-exercise-id="{exercise.id}"]')
                expect(box.locator(".cm-content")).to_be_visible()
                box.locator("button.run-code").click()
                expect(box.locator(".grade-results .grade-summary")).to_have_text(
                    re.compile(r"^✗ \d+ of \d+ tests passed"), timeout=scaled(60_000)
                )
            assert_no_answer_on_screen(page, lesson, seed)  # a wrong answer and a run give nothing away
        screenshot(page, f"{shot_name}-{label}")
        assert widgets.count() == page.locator("[data-widget][data-mounted]").count()
        assert errors == [], (lesson.id, label, errors)
        page.context.close()
