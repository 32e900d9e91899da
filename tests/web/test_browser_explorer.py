"""The chapter's attention explorer, on every lesson page, gives no Part 1 answer away before it is earned.

For every lesson, each input set of its Part 1 is typed into the explorer (numbers the explorer takes: a
query, keys and values of two components; a set in four dimensions is typed as the same scaled scores in
two). Before the learner has typed the answer, the explorer shows no step, says which question holds it
back, and no answer of the page is on the screen (an answer of whole numbers only, like raw scores
[3, 2], is not held back, as no page check guards one); once the answers are typed, the same numbers
show every step, and the output is qkv's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from qkv import attention, attention_scores
from qkv.lessons import Lesson
from tests import lesson_contract as contract
from tests.web.browser_support import BROWSER, PHONE, LiveServer, new_page, page_progress
from tests.web.lesson_walk import answer_text, assert_no_answer_on_screen, type_answer

pytestmark = BROWSER

CATALOG = contract.catalog()


@dataclass(frozen=True)
class InputSet:
    """Numbers a learner types into the explorer, and the exercises whose answers they would show."""

    q: list[float]
    K: list[list[float]]
    V: list[list[float]]
    guards: tuple[str, ...]
    causal_position: int | None = None


def as_two_dimensions(q: list[float], K: list[list[float]], guards: tuple[str, ...], **more: Any) -> InputSet:
    """The same scaled scores with a query of two components: q = [1, 0] and key j = [s_j·√2, 0]."""
    scaled = attention_scores([q], K)[0]
    keys = [[round(float(s) * math.sqrt(2), 6), 0.0] for s in scaled]
    V = more.pop("V", [[0.0, 0.0] for _ in K])
    return InputSet([1.0, 0.0], keys, V, guards, **more)


def l41(v: dict[str, Any]) -> list[InputSet]:
    return [InputSet(v["one_q"], v["one_K"], v["one_V"], ("scores", "weights", "output"))]


def l42(v: dict[str, Any]) -> list[InputSet]:
    zeros = [[0.0, 0.0] for _ in v["K"]]
    raw = InputSet([1.0, 0.0], [[float(r), 0.0] for r in v["raw1"]], zeros, ("raw",))
    return [
        raw,
        as_two_dimensions(v["q1"], v["K"], ("scaled",)),
        as_two_dimensions(v["q2"], v["K"], ("second",)),
    ]


def l43(v: dict[str, Any]) -> list[InputSet]:
    sharper = [value * v["factor"] for value in v["q"]]
    return [
        InputSet(v["q"], v["K"], v["V"], ("weights", "output", "shifted")),
        InputSet(sharper, v["K"], v["V"], ("sharper",)),
    ]


def l44(v: dict[str, Any]) -> list[InputSet]:
    return [as_two_dimensions(v["q"], v["K"], ("weights", "output"), V=v["V"], causal_position=v["position"])]


def l45(v: dict[str, Any]) -> list[InputSet]:
    d = len(v["Q"][0]) // 2  # head 1 holds the second half of each row
    head = [row[d:] for row in v["K"]]
    return [InputSet(v["Q"][0][d:], head, [row[d:] for row in v["V"]], ("head-weights", "head-output"))]


def nothing_to_compute(v: dict[str, Any]) -> list[InputSet]:
    """A lesson whose Part 1 asks for nothing the explorer computes (shapes, counts, a layer norm, or a
    lesson added since): the explorer is checked on its page all the same, with no set to type."""
    return []


# The lessons whose Part 1 the explorer could give away; every other lesson, a new one too, has none.
INPUT_SETS: dict[str, Callable[[dict[str, Any]], list[InputSet]]] = {
    "L4.1": l41,
    "L4.2": l42,
    "L4.3": l43,
    "L4.4": l44,
    "L4.5": l45,
}


def test_every_lesson_with_input_sets_is_in_the_catalog() -> None:
    assert set(INPUT_SETS) <= {lesson.id for lesson in CATALOG.lessons}


def explorer(page: Any) -> Any:
    return page.locator('[data-widget="attention-explorer"]')


def type_into_explorer(page: Any, numbers: InputSet) -> None:
    """Set the number of positions with the buttons, then type every number and set the mask."""
    box = explorer(page)
    rows = box.locator(".kv-table tbody tr")
    while rows.count() < len(numbers.K):
        box.get_by_role("button", name="Add a position").click()
    while rows.count() > len(numbers.K):
        box.get_by_role("button", name="Remove the last position").click()
    for j, value in enumerate(numbers.q):
        box.get_by_label(f"q component {j + 1}", exact=True).fill(str(value))
    for i, (key, value) in enumerate(zip(numbers.K, numbers.V, strict=True)):
        for j, number in enumerate(key):
            box.get_by_label(f"key {i} component {j + 1}", exact=True).fill(str(number))
        for j, number in enumerate(value):
            box.get_by_label(f"value {i} component {j + 1}", exact=True).fill(str(number))
    causal = box.get_by_label("Apply the causal mask")
    causal.set_checked(numbers.causal_position is not None)
    if numbers.causal_position is not None:
        box.get_by_label("The query sits at position").select_option(str(numbers.causal_position))


def expected_output(numbers: InputSet) -> str:
    mask = None
    if numbers.causal_position is not None:
        mask = [[i <= numbers.causal_position for i in range(len(numbers.K))]]
    output = attention([numbers.q], numbers.K, numbers.V, mask=mask)[0]
    return "[" + ", ".join(f"{value:.6f}" for value in output) + "]"


def guarded(lesson: Lesson, numbers: InputSet, seed: int | None) -> list[str]:
    """The exercises of the set whose answers the explorer must hold back: those with a fraction (an
    answer of whole numbers, such as raw scores [3, 2], is not guarded, as no page check guards it)."""
    variant = lesson.variant(seed)
    return [
        guard
        for guard in numbers.guards
        if any(
            value != round(value)
            for value in np.ravel(np.asarray(variant[lesson.exercise(guard).answer], float))
        )
    ]


def assert_withheld(page: Any, lesson: Lesson, numbers: InputSet, seed: int | None) -> None:
    from playwright.sync_api import expect

    box = explorer(page)
    if not guarded(lesson, numbers, seed):
        assert_shown(page, numbers)
        return
    status = box.locator(".widget-status")
    expect(status).to_have_class(re.compile("is-withheld"))
    for exercise_id in guarded(lesson, numbers, seed):
        expect(status).to_contain_text(f"'{exercise_id}'")
    expect(box.locator(".explorer-steps")).to_be_hidden()
    assert_no_answer_on_screen(page, lesson, seed)


def assert_shown(page: Any, numbers: InputSet) -> None:
    from playwright.sync_api import expect

    box = explorer(page)
    expect(box.locator("[data-output-vector]")).to_have_text(expected_output(numbers))
    expect(box.locator(".explorer-steps")).to_be_visible()
    expect(box.locator(".widget-status")).not_to_have_class(re.compile("is-withheld"))


@pytest.mark.content
@pytest.mark.timeout(240)
@pytest.mark.parametrize("lesson", CATALOG.lessons, ids=lambda lesson: lesson.id)
def test_no_part1_answer_from_the_explorer_before_it_is_earned(
    live_server: LiveServer, chromium: Any, lesson: Lesson
) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = new_page(chromium, errors, viewport=PHONE, color_scheme="dark")
    page.goto(live_server.lesson(lesson.id))
    page.wait_for_selector("html.js-ready")
    # Its own numbers (the chapter's worked example) show every step on every page.
    expect(explorer(page).locator("[data-output-vector]")).to_have_text("[1.339523, 0.660477]")
    seed = page_progress(page)["variant_seed"]
    sets = INPUT_SETS.get(lesson.id, nothing_to_compute)(lesson.variant(seed))
    for numbers in sets:
        type_into_explorer(page, numbers)
        assert_withheld(page, lesson, numbers, seed)
    names = lesson.hooks.namespace(lesson.variant(seed))
    for exercise_id in dict.fromkeys(guard for numbers in sets for guard in numbers.guards):
        type_answer(page, exercise_id, answer_text(names[lesson.exercise(exercise_id).answer]), "is-correct")
    for numbers in sets:
        type_into_explorer(page, numbers)
        assert_shown(page, numbers)
    assert errors == []
