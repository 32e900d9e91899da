"""In Chromium, an instructor with two courses switches between them with the course picker, and each
course's grid shows its own learners only. Screenshots: ``test-artifacts/courses-*.png``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from qkv.store import MembershipSource, StaffRole, parse_roster
from tests.web.browser_support import BROWSER, new_page, screenshot, serve

pytestmark = BROWSER


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    folder = tmp_path_factory.mktemp("courses-browser")
    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}", secret_key="courses-browser-secret", warm_spares=0
    )
    app = create_app(settings)
    with serve(app, name="courses-browser-uvicorn") as url:
        yield url, app


@pytest.mark.timeout(240)
def test_an_instructor_with_two_courses_switches_between_them(server: tuple[str, Any], chromium: Any) -> None:
    from playwright.sync_api import expect

    url, app = server
    store = app.state.qkv.store
    grace, token = store.instructors.add("Grace")
    for title, roster in (
        ("Attention, morning", "Ada Lovelace,m-1"),
        ("Attention, evening", "Alan Turing,e-1"),
    ):
        course = store.courses.create(title)
        store.courses.set_staff(course.id, grace.id, StaffRole.INSTRUCTOR)
        for record, _ in store.accounts.import_roster(parse_roster(f"name,external id\n{roster}\n")):
            store.courses.enrol(course.id, record.learner_id, MembershipSource.ROSTER)
    errors: list[str] = []
    page = new_page(chromium, errors, viewport={"width": 1100, "height": 900})
    page.goto(f"{url}/instructor/sign-in#token={token}")
    page.get_by_role("button", name="Sign in as instructor").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    evening, morning = store.courses.all()  # by title; the first is where a session starts
    expect(page.get_by_label("Course")).to_have_value(evening.id)
    page.goto(f"{url}/instructor/class")
    expect(page.locator("main")).to_contain_text("Alan Turing")
    expect(page.locator("main")).not_to_contain_text("Ada Lovelace")
    screenshot(page, "courses-evening")

    page.get_by_label("Course").select_option(label="Attention, morning")
    page.get_by_role("button", name="Switch").click()
    page.wait_for_url(re.compile(r"/instructor$"))
    expect(page.get_by_label("Course")).to_have_value(morning.id)
    page.goto(f"{url}/instructor/class")
    expect(page.locator("main")).to_contain_text("Ada Lovelace")
    expect(page.locator("main")).not_to_contain_text("Alan Turing")
    screenshot(page, "courses-morning")
    assert errors == []
