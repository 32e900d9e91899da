"""End to end in Chromium, as an LMS administrator, a teacher and a learner would, with each LMS (the
project's fake and the ``lti1p3platform`` package): the LMS (on
``localhost``, another site than qkv's ``127.0.0.1``, so qkv's cookies in its iframes are third-party and
blocked) registers qkv dynamically in an iframe, a teacher deep-links two lessons from inside an iframe of
the course page (the login tied to the browser through the LMS's postMessage storage), and a learner
launched from the course page opens the lesson in a new window, solves an exercise, and the score lands
(the fake's Moodle-like gradebook stores it as a number)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from qkv.store.lti.registrations import RegistrationLinks
from tests.web.browser_support import BROWSER, CHROMIUM, CHROMIUM_ARGS, new_page, screenshot, serve
from tests.web.lti.conftest import tool_server
from tests.web.lti.fake_platform import CLIENT_ID, DEPLOYMENT_ID, FakePlatform, platform_app
from tests.web.lti.launching import solvable, wait_for
from tests.web.lti.packaged_platform import PackagedPlatform, packaged_app

pytestmark = BROWSER
CHAIN_MS = 60_000  # a frame's chain crosses both servers several times (login, auth, launch, storage)


@contextmanager
def chromium_without_third_party_cookies() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            # Frames stay in their page's process: a frame swapped to another process mid-chain (LMS site,
            # then qkv's) sometimes left Playwright with a stale frame; isolation is not what is tested here.
            args=[
                *CHROMIUM_ARGS,
                "--test-third-party-cookie-phaseout",
                "--disable-site-isolation-trials",
                "--disable-features=IsolateOrigins,site-per-process",
            ],
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def cross_site_lms(tmp_path: Path) -> Iterator[tuple[FakePlatform, str, Any]]:
    """The fake LMS on http://localhost:PORT, qkv on http://127.0.0.1:PORT; nothing registered yet."""
    platform = FakePlatform(mode="moodle")
    with (
        serve(platform_app(platform), name="fake-lms") as lms_url,
        tool_server(f"sqlite:///{tmp_path / 'qkv.db'}", allow_private_lms=True) as (url, app),
    ):
        platform.url = lms_url.replace("127.0.0.1", "localhost")
        platform.tool_url = url
        platform.add_user("learner-1", "Ada Lovelace")
        platform.add_user(
            "teacher-1",
            "Grace Hopper",
            roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"],
        )
        yield platform, url, app


def test_register_deep_link_in_frames_and_a_learners_score_lands_as_a_number(
    cross_site_lms: tuple[FakePlatform, str, Any],
) -> None:
    platform, url, app = cross_site_lms
    errors: list[str] = []
    first, second = [lesson.id for lesson in app.state.qkv.catalog.lessons][:2]
    with chromium_without_third_party_cookies() as chromium:
        # 1. The administrator pastes qkv's one-time URL; the LMS opens it in its iframe.
        token = RegistrationLinks(app.state.qkv.store.database).issue(timedelta(hours=1))
        admin = new_page(chromium, errors)
        admin.goto(f"{platform.url}/admin/register?tool={url}/lti/register/{token}")
        expect(admin.locator("#status")).to_have_text(
            "closed", timeout=CHAIN_MS
        )  # qkv's page posted the close message
        expect(admin.frame_locator("#tool").locator("h1")).to_have_text("qkv: registered")
        (record,) = app.state.qkv_lti.platforms.all()
        assert (record.issuer, record.client_id, record.deployment_ids) == (
            platform.issuer,
            CLIENT_ID,
            (DEPLOYMENT_ID,),
        )
        admin.context.close()
        # 2. The teacher picks two lessons inside the course page's iframe.
        teacher = new_page(chromium, errors)
        teacher.goto(f"{platform.url}/course?sub=teacher-1&hint=deep-link")
        picker = teacher.frame_locator("#tool")
        picker.get_by_role("button", name="Add to the course").wait_for(timeout=CHAIN_MS)
        for lesson in (first, second):
            picker.locator(f'input[value="{lesson}"]').check()
        screenshot(teacher, "lti-deep-linking-picker-in-lms-frame")
        picker.get_by_role("button", name="Add to the course").click()
        wait_for(lambda: len(platform.links) == 2, "the two links the LMS made from qkv's answer")
        assert "lti.put_data state_" in teacher.locator("#log").text_content()  # the login used storage
        assert "lti.get_data state_" in teacher.locator("#log").text_content()  # its cookie was dropped
        teacher.context.close()
        links = list(platform.links.values())
        assert [link.custom["qkv_lesson"] for link in links] == [first, second]
        # 3. The learner opens the first link from the course page, in a new window, and solves.
        learner = new_page(chromium, errors)
        learner.goto(f"{platform.url}/course?sub=learner-1&hint=link:{links[0].id}")
        with learner.expect_popup() as opened:
            learner.frame_locator("#tool").get_by_role(
                "button", name="Open the lesson in a new window"
            ).click()
        lesson_page = opened.value
        lesson_page.wait_for_url(f"{url}/lessons/{first}")
        expect(lesson_page.locator(".learner-name")).to_have_text("Ada Lovelace")
        _solve(lesson_page, app, first)
        item = str(links[0].lineitem)
        wait_for(lambda: platform.grade(item, "learner-1") == 1.0, "the solved exercise's score as a number")
        learner.context.close()
    assert [s["gradingProgress"] for s in platform.received(item)] == ["FullyGraded", "FullyGraded"]
    unexpected = [e for e in errors if "Content Security Policy" not in e and "favicon" not in e]
    assert unexpected == []


def _solve(page: Any, app: Any, lesson_id: str) -> None:
    exercise, right = solvable(app)
    kind = app.state.qkv.catalog.lesson(lesson_id).exercises[exercise].kind
    form = page.locator(f'form[data-exercise-id="{exercise}"]')
    if kind == "choice":
        form.locator(f'input[value="{right}"]').check()
    else:
        page.locator(f"#answer-{exercise}").fill(right)
    form.get_by_role("button", name="Check").click()
    expect(page.locator(f"#feedback-{exercise}")).to_have_class(re.compile("is-correct"))


@pytest.fixture
def cross_site_packaged(tmp_path: Path) -> Iterator[tuple[PackagedPlatform, str, Any]]:
    """The lti1p3platform LMS on http://localhost:PORT, qkv on http://127.0.0.1:PORT; nothing registered."""
    platform = PackagedPlatform()
    with (
        serve(packaged_app(platform), name="packaged-lms") as lms_url,
        tool_server(f"sqlite:///{tmp_path / 'qkv.db'}", allow_private_lms=True) as (url, app),
    ):
        platform.url, platform.tool_url = lms_url.replace("127.0.0.1", "localhost"), url
        platform.teachers.add("sofia-1")
        yield platform, url, app


def test_the_packaged_lms_registers_deep_links_in_a_frame_and_gets_the_score(
    cross_site_packaged: tuple[PackagedPlatform, str, Any],
) -> None:
    platform, url, app = cross_site_packaged
    errors: list[str] = []
    first, second = [lesson.id for lesson in app.state.qkv.catalog.lessons][:2]
    with chromium_without_third_party_cookies() as chromium:
        token = RegistrationLinks(app.state.qkv.store.database).issue(timedelta(hours=1))
        admin = new_page(chromium, errors)
        admin.goto(f"{platform.url}/admin/register?tool={url}/lti/register/{token}")
        expect(admin.locator("#status")).to_have_text("closed", timeout=CHAIN_MS)
        (record,) = app.state.qkv_lti.platforms.all()
        assert (record.client_id, record.deployment_ids) == (platform.client_id, (platform.deployment_id,))
        admin.context.close()
        teacher = new_page(chromium, errors)
        teacher.goto(f"{platform.url}/course?user=sofia-1&hint=deep-link")
        picker = teacher.frame_locator("#tool")
        picker.get_by_role("button", name="Add to the course").wait_for(timeout=CHAIN_MS)
        for lesson in (first, second):
            picker.locator(f'input[value="{lesson}"]').check()
        picker.get_by_role("button", name="Add to the course").click()
        wait_for(lambda: len(platform.links) == 2, "the two links the packaged LMS made")
        teacher.context.close()
        (items,) = platform.deep_link_answers
        assert [item["custom"]["qkv_lesson"] for item in items] == [first, second]
        learner = new_page(chromium, errors)
        learner.goto(f"{platform.url}/course?user=emmy-1&hint=link:link-1")
        with learner.expect_popup() as opened:
            learner.frame_locator("#tool").get_by_role(
                "button", name="Open the lesson in a new window"
            ).click()
        lesson_page = opened.value
        lesson_page.wait_for_url(f"{url}/lessons/{first}")
        expect(lesson_page.locator(".learner-name")).to_have_text("Emmy Noether")
        _solve(lesson_page, app, first)
        item = str(platform.links["link-1"]["lineitem"])
        wait_for(lambda: [s["scoreGiven"] for s in platform.item_scores.get(item, [])] == [0, 1], "scores")
        learner.context.close()
    unexpected = [e for e in errors if "Content Security Policy" not in e and "favicon" not in e]
    assert unexpected == []
