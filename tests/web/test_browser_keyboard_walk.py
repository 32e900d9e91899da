"""Every lesson walked as a learner on a phone in dark mode, with the keyboard alone and wrong answers
first (``lesson_walk.keyboard_walk``): each wrong answer gets the sentence the engine has for it, each
right one is accepted, the code exercise's wrong program gets its hint, every part ends done, nothing
sticks out sideways, no console error. Nothing here names a lesson."""

from __future__ import annotations

from typing import Any

import pytest

from qkv.lessons import Lesson, load_catalog
from tests.web.browser_support import BROWSER, LiveServer, new_page, screenshot
from tests.web.lesson_walk import assert_fits_a_phone, keyboard_walk

pytestmark = BROWSER

PHONE_375 = {"width": 375, "height": 812}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lesson", load_catalog().lessons, ids=lambda lesson: lesson.id)
def test_every_lesson_by_keyboard_on_a_dark_phone_wrong_first(
    live_server: LiveServer, chromium: Any, lesson: Lesson
) -> None:
    errors: list[str] = []
    page = new_page(chromium, errors, viewport=PHONE_375, color_scheme="dark")
    keyboard_walk(page, live_server.url, lesson)
    assert_fits_a_phone(page, PHONE_375["width"])
    screenshot(page, f"keyboard-walk-{lesson.id}")
    assert errors == []
    page.context.close()
