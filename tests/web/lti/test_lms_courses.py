"""The LMS features carried through courses: deep linking is an instructor's (or administrator's) action
and never a teaching assistant's; a lesson deep-linked in two courses gets a line item in each course's
own container; a framed launch's ticket opens the session on the launch's course; the scores an LMS
refused show on the LTI page of their own course only."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import httpx

from tests.web.lti.fake_platform import (
    CONTEXT_ID,
    DEEP_LINK_HINT,
    INSTRUCTOR,
    TEACHING_ASSISTANT,
    FakePlatform,
    posted_form_fields,
)
from tests.web.lti.launching import LmsBrowser, page_form, wait_for

OTHER = "course-b"
OTHER_TITLE = f"Attention {OTHER}"
FIRST_TITLE = "Attention, autumn term"


def _picker(browser: LmsBrowser, platform: FakePlatform, url: str, sub: str) -> httpx.Response:
    return browser.launch(platform, f"{url}/lti/launch", sub, hint=DEEP_LINK_HINT)


def _attr(page: httpx.Response, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', page.text)
    assert found, f"no {name} in {page.text[:400]}"
    return unescape(found.group(1))


def _deep_link(browser: LmsBrowser, platform: FakePlatform, url: str, sub: str, lesson: str) -> None:
    picker = _picker(browser, platform, url, sub)
    assert picker.status_code == 200, picker.text
    answer = browser.client.post(
        f"{url}/lti/deep-link", data={"pass": _attr(picker, 'name="pass" value'), f"lesson-{lesson}": lesson}
    )
    assert answer.status_code == 200, answer.text
    action, fields = page_form(answer, "lti-auto-post")
    assert browser.client.post(action, data=fields).status_code == 200


def test_a_teaching_assistant_may_not_deep_link(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    # Many LMSs send a TA both Instructor and its sub-role: the narrower role decides.
    platform.add_user("ta-1", "Alan Turing", roles=[INSTRUCTOR, TEACHING_ASSISTANT])
    refused = _picker(lms_browser, platform, url, "ta-1")
    assert refused.status_code == 403 and "a teaching assistant does not pick them" in refused.text
    assert f"frame-ancestors {platform.url}" in refused.headers["content-security-policy"]
    picker = _picker(LmsBrowser(url), platform, url, "teacher-1")
    assert picker.status_code == 200 and 'name="pass"' in picker.text


def test_a_lesson_deep_linked_in_two_courses_has_a_line_item_in_each(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    lesson = app.state.qkv.catalog.lessons[0].id
    platform.add_user("teacher-b", "Emmy Noether", roles=[INSTRUCTOR], context=OTHER)
    platform.add_user("learner-b", "Sofia Kovalevskaya", context=OTHER)
    platform.deep_linking["accept_lineitem"] = False  # the links carry no column: launches find or make it
    _deep_link(lms_browser, platform, url, "teacher-1", lesson)
    _deep_link(LmsBrowser(url), platform, url, "teacher-b", lesson)
    link_a, link_b = platform.links.values()
    for sub, link in (("learner-1", link_a), ("learner-b", link_b)):
        learner = LmsBrowser(url)
        opened = learner.open(learner.launch(platform, link.url, sub, hint=f"link:{link.id}"))
        assert opened.status_code == 200 and opened.url.path == f"/lessons/{lesson}"
        learner.close()
    # One column per course, each in its course's own container, though both name the same resourceId.
    assert sorted(platform.item_contexts.values()) == sorted([CONTEXT_ID, OTHER])
    links, courses = app.state.qkv_lti.links, app.state.qkv.store.courses
    titles = {course.id: course.title for course in courses.all()}
    for sub, context in (("learner-1", CONTEXT_ID), ("learner-b", OTHER)):
        account = app.state.qkv.store.accounts.find(platform.issuer, sub)
        assert account is not None, sub
        (item,) = links.line_items(account.learner_id, lesson)
        assert platform.context_of_item(item.lineitem_url) == context
        assert titles[item.course_id] == (FIRST_TITLE if context == CONTEXT_ID else OTHER_TITLE)
        item_id = item.lineitem_url.rsplit("/", 1)[-1]
        wait_for(lambda item_id=item_id: bool(platform.received(item_id)), f"the score of {sub}")


def _framed_staff_launch(platform: FakePlatform, url: str, sub: str) -> tuple[httpx.Response, LmsBrowser]:
    framed_browser = LmsBrowser(url)
    login = framed_browser.begin(platform, f"{url}/lessons/L4.1", sub)
    fields = posted_form_fields(framed_browser.client.get(login.auth_url).text)
    framed = framed_browser.client.post(
        f"{url}/lti/launch", data=fields, headers={"sec-fetch-dest": "iframe"}
    )
    framed_browser.close()
    assert framed.status_code == 200 and "Open the class in a new window" in framed.text
    window = LmsBrowser(url)
    opened = window.client.post(
        f"{url}/lti/continue", data={"ticket": _attr(framed, 'name="ticket" value')}, headers={"origin": url}
    )
    return opened, window


def test_a_framed_launch_opens_the_session_on_the_launch_course(lms: tuple[FakePlatform, str, Any]) -> None:
    platform, url, _app = lms
    platform.add_user("teacher-b", "Emmy Noether", roles=[INSTRUCTOR], context=OTHER)
    platform.add_user("ta-b", "Alan Turing", roles=[TEACHING_ASSISTANT], context=OTHER)
    LmsBrowser(url).launch(platform, f"{url}/lessons/L4.1", "teacher-1")  # course A is known too
    opened, window = _framed_staff_launch(platform, url, "teacher-b")
    assert opened.status_code == 303 and opened.headers["location"] == "/instructor/lti"
    page = window.client.get(f"{url}/instructor/lti")
    assert page.status_code == 200 and OTHER_TITLE in page.text and FIRST_TITLE not in page.text
    window.close()
    opened, window = _framed_staff_launch(platform, url, "ta-b")  # a TA has no LMS page: the class
    assert opened.status_code == 303 and opened.headers["location"] == "/instructor"
    assert window.client.get(f"{url}/instructor/lti").status_code == 403
    assert window.client.get(f"{url}/instructor").status_code == 200
    window.close()


def test_refused_scores_show_on_their_own_course_page_only(lms: tuple[FakePlatform, str, Any]) -> None:
    platform, url, app = lms
    tool = app.state.qkv_lti
    platform.add_user("teacher-b", "Emmy Noether", roles=[INSTRUCTOR], context=OTHER)
    platform.add_user("learner-b", "Sofia Kovalevskaya", context=OTHER)
    platform.refuse_next.append((422, "User not found in course or is not a student"))
    learner = LmsBrowser(url)
    learner.open(learner.launch(platform, f"{url}/lessons/L4.1", "learner-b"))
    learner.close()
    wait_for(lambda: len(tool.outbox.parked()) == 1, "the refused score parked")
    (parked,) = tool.outbox.parked()
    assert parked.course_id is not None
    assert tool.outbox.parked(course_id=parked.course_id) == [parked]
    pages = {}
    for sub in ("teacher-1", "teacher-b"):
        teacher = LmsBrowser(url)
        pages[sub] = teacher.open(teacher.launch(platform, f"{url}/lessons/L4.1", sub)).text
        teacher.close()
    assert "User not found in course" in pages["teacher-b"]
    assert (
        "User not found in course" not in pages["teacher-1"]
        and "Scores the LMS refused" in pages["teacher-1"]
    )
