"""Deep Linking 2.0: an instructor's LtiDeepLinkingRequest opens a picker; qkv answers with a signed
LtiDeepLinkingResponse the fake LMS checks as a platform must; the links it makes open their lesson by the
custom claim and grade into their line item; the same lesson twice in a course makes no second column."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html import unescape
from typing import Any

import httpx
import jwt
import pytest

from tests.term_clock import term_clock
from tests.web.lti.fake_platform import (
    CONTEXT_ID,
    DEEP_LINK_HINT,
    DEPLOYMENT_ID,
    DL,
    LINEITEM_SCOPE,
    LTI,
    SCORE_SCOPE,
    FakePlatform,
)
from tests.web.lti.launching import LmsBrowser, page_form, solvable, wait_for


def _lessons(app: Any) -> list[str]:
    return [lesson.id for lesson in app.state.qkv.catalog.lessons]


def _picker(browser: LmsBrowser, platform: FakePlatform, url: str, sub: str = "teacher-1") -> httpx.Response:
    return browser.launch(platform, f"{url}/lti/launch", sub, hint=DEEP_LINK_HINT)


def _choose(browser: LmsBrowser, url: str, picker: httpx.Response, lessons: list[str]) -> httpx.Response:
    assert picker.status_code == 200, picker.text
    picker_pass = re.search(r'name="pass" value="([^"]+)"', picker.text)
    assert picker_pass
    form = {"pass": unescape(picker_pass.group(1))} | {f"lesson-{lesson}": lesson for lesson in lessons}
    return browser.client.post(f"{url}/lti/deep-link", data=form)


def _deep_link(
    browser: LmsBrowser, platform: FakePlatform, url: str, lessons: list[str]
) -> tuple[httpx.Response, dict[str, Any]]:
    answer = _choose(browser, url, _picker(browser, platform, url), lessons)
    assert answer.status_code == 200, answer.text
    action, fields = page_form(answer, "lti-auto-post")
    assert action == f"{platform.url}/deep-link-return"
    back = browser.client.post(action, data=fields)
    assert back.status_code == 200, back.text
    return answer, platform.deep_link_answers[-1]


def test_an_instructor_picks_two_lessons_and_the_lms_gets_a_signed_response(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first, second = _lessons(app)[:2]
    picker = _picker(lms_browser, platform, url)
    assert picker.status_code == 200, picker.text
    assert all(f"<strong>{lesson}</strong>" in picker.text for lesson in _lessons(app))
    assert re.search(r"counts \d+ points?", picker.text)  # what each lesson counts
    assert 'type="checkbox"' in picker.text  # accept_multiple
    csp = picker.headers["content-security-policy"]
    assert f"frame-ancestors {platform.url}" in csp and "x-frame-options" not in picker.headers
    answer, claims = _deep_link(lms_browser, platform, url, [first, second])
    assert f"form-action 'self' {platform.url}" in answer.headers["content-security-policy"]
    assert '<script src="/static/lti-auto-post.js">' in answer.text
    request_data = claims[DL + "data"]
    assert request_data.startswith("csrf-")  # echoed unchanged (the fake made it random)
    assert (claims["iss"], claims["aud"], claims[LTI + "message_type"]) == (
        "qkv-client",
        platform.issuer,
        "LtiDeepLinkingResponse",
    )
    assert claims[LTI + "deployment_id"] == "deployment-1" and claims[LTI + "version"] == "1.3.0"
    assert claims["exp"] > claims["iat"] and claims["nonce"]
    items = claims[DL + "content_items"]
    assert [item["custom"]["qkv_lesson"] for item in items] == [first, second]
    assert [item["url"] for item in items] == [f"{url}/lessons/{first}", f"{url}/lessons/{second}"]
    assert [item["lineItem"]["resourceId"] for item in items] == [first, second]
    assert all(item["lineItem"]["scoreMaximum"] >= 1 and item["lineItem"]["tag"] for item in items)
    assert all(item["type"] == "ltiResourceLink" and item["title"] for item in items)
    assert len(platform.line_items) == 2
    # The response is signed with the tool's published key (the fake LMS checked it; check again here).
    header = jwt.get_unverified_header(answer_jwt(answer))
    published = httpx.get(f"{url}/lti/jwks.json").json()["keys"]
    assert header["kid"] in {key["kid"] for key in published}


def answer_jwt(answer: httpx.Response) -> str:
    return page_form(answer, "lti-auto-post")[1]["JWT"]


def test_a_deep_linked_link_opens_its_lesson_and_grades_into_its_line_item(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    second = _lessons(app)[1]
    _deep_link(lms_browser, platform, url, [second])
    (link,) = platform.links.values()
    learner = LmsBrowser(url)
    # The link's URL is the lesson's, but the custom claim decides: point the target at the tool's launch.
    link.url = f"{url}/lti/launch"
    opened = learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
    assert opened.status_code == 200 and opened.url.path == f"/lessons/{second}"
    wait_for(lambda: bool(platform.received(str(link.lineitem))), "the launch's score on the link's item")
    assert platform.grade(str(link.lineitem), "learner-1") == 0.0
    learner.close()


def test_the_same_lesson_twice_in_a_course_makes_no_second_column(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first = _lessons(app)[0]
    _, once = _deep_link(lms_browser, platform, url, [first])
    _, twice = _deep_link(lms_browser, platform, url, [first])
    assert "lineItem" in once[DL + "content_items"][0]
    assert "lineItem" not in twice[DL + "content_items"][0]  # the course has its column already
    assert len(platform.line_items) == 1
    learner = LmsBrowser(url)
    second_link = list(platform.links.values())[1]
    assert second_link.lineitem is None
    learner.open(learner.launch(platform, second_link.url, "learner-1", hint=f"link:{second_link.id}"))
    (item_id,) = platform.line_items
    wait_for(lambda: bool(platform.received(item_id)), "the score on the existing column")
    assert len(platform.line_items) == 1
    learner.close()


def test_links_without_a_line_item_find_or_make_one_column_per_lesson(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    third = _lessons(app)[2]
    platform.deep_linking["accept_lineitem"] = False
    _, first_answer = _deep_link(lms_browser, platform, url, [third])
    _deep_link(lms_browser, platform, url, [third])
    assert "lineItem" not in first_answer[DL + "content_items"][0]
    assert platform.line_items == {}
    learner = LmsBrowser(url)
    for link in list(platform.links.values()):
        learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
    (item_id,) = platform.line_items  # made once, by the first launch; found by the second
    made = platform.line_items[item_id]
    assert (made["resourceId"], made["tag"]) == (third, "qkv-lesson")
    wait_for(lambda: bool(platform.received(item_id)), "the score on the made column")
    learner.close()


def test_deep_linking_refusals_are_4xx_sentences(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first = _lessons(app)[0]
    learner = LmsBrowser(url)
    refused = _picker(learner, platform, url, sub="learner-1")
    assert refused.status_code == 403 and "only an instructor or administrator" in refused.text
    # The sentence shows inside the LMS's iframe: its page may be framed by the LMS, and only by it.
    assert f"frame-ancestors {platform.url}" in refused.headers["content-security-policy"]
    learner.close()
    platform.deep_linking["deep_link_return_url"] = None
    refused = _picker(lms_browser, platform, url)
    assert refused.status_code == 400 and "has no deep_link_return_url" in refused.text
    platform.deep_linking.clear()
    picker = _picker(lms_browser, platform, url)
    assert _choose(lms_browser, url, picker, []).status_code == 400
    assert _choose(lms_browser, url, picker, ["L9.9"]).status_code == 400
    assert _choose(lms_browser, url, picker, [first]).status_code == 200
    again = _choose(lms_browser, url, picker, [first])  # the same pass twice
    assert again.status_code == 400 and "sent to the LMS already" in again.text
    forged = lms_browser.client.post(f"{url}/lti/deep-link", data={"pass": "x.y.z", "lesson": first})
    assert forged.status_code == 400 and "not one qkv signed" in forged.text


def test_one_lesson_at_a_time_when_the_lms_takes_one(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first, second = _lessons(app)[:2]
    platform.deep_linking["accept_multiple"] = False
    picker = _picker(lms_browser, platform, url)
    assert 'type="radio"' in picker.text and 'type="checkbox"' not in picker.text
    refused = _choose(lms_browser, url, picker, [first, second])
    assert refused.status_code == 400 and "takes one lesson at a time" in refused.text
    answer = lms_browser.client.post(
        f"{url}/lti/deep-link", data={"pass": _attr_pass(picker), "lesson": second}
    )
    assert answer.status_code == 200, answer.text
    (item,) = jwt.decode(answer_jwt(answer), options={"verify_signature": False})[DL + "content_items"]
    assert item["custom"]["qkv_lesson"] == second


def _attr_pass(picker: httpx.Response) -> str:
    found = re.search(r'name="pass" value="([^"]+)"', picker.text)
    assert found
    return unescape(found.group(1))


def _sharing_links(
    browser: LmsBrowser, platform: FakePlatform, url: str, lessons: list[str]
) -> tuple[Any, Any]:
    """Two lessons deep-linked, then put on one line item as Open edX does (every link of a block has the
    block's line item): the second link's launch carries the first lesson's line item."""
    _deep_link(browser, platform, url, lessons)
    first_link, second_link = list(platform.links.values())[-2:]
    platform.line_items.pop(str(second_link.lineitem))  # the LMS made no column of the second lesson's
    second_link.lineitem = first_link.lineitem
    return first_link, second_link


def test_a_launch_with_another_lessons_line_item_scores_into_the_lessons_own(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first, second = _lessons(app)[:2]
    first_link, second_link = _sharing_links(lms_browser, platform, url, [first, second])
    learner = LmsBrowser(url)
    learner.open(learner.launch(platform, first_link.url, "learner-1", hint=f"link:{first_link.id}"))
    wait_for(lambda: bool(platform.received(str(first_link.lineitem))), "the first lesson's score")
    opened = learner.open(
        learner.launch(platform, second_link.url, "learner-1", hint=f"link:{second_link.id}")
    )
    assert opened.url.path == f"/lessons/{second}"
    (made,) = [key for key, item in platform.line_items.items() if item.get("resourceId") == second]
    assert (
        platform.line_items[made]["tag"] == "qkv-lesson" and "resourceLinkId" not in platform.line_items[made]
    )
    wait_for(lambda: bool(platform.received(made)), "the second lesson's score on its own column")
    maximum = {item["scoreMaximum"] for item in platform.received(str(first_link.lineitem))}
    assert maximum == {platform.line_items[str(first_link.lineitem)]["scoreMaximum"]}  # only the first's
    assert all(
        score["scoreMaximum"] == platform.line_items[made]["scoreMaximum"]
        for score in platform.received(made)
    )
    learner.close()


@pytest.mark.parametrize("why", ["resourceId", "scoreMaximum"])
def test_another_lessons_line_item_without_a_container_keeps_the_score_back_with_a_sentence(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser, why: str
) -> None:
    platform, url, app = lms
    tool = app.state.qkv_lti
    first, second = _lessons(app)[:2]
    first_link, second_link = _sharing_links(lms_browser, platform, url, [first, second])
    shared = platform.line_items[str(first_link.lineitem)]
    if why == "scoreMaximum":  # qkv's own line item, no lesson named, another maximum
        del shared["resourceId"]
        shared["scoreMaximum"] = 1000
    platform.link_scopes = [LINEITEM_SCOPE + ".readonly", SCORE_SCOPE]
    platform.link_container = False  # the LMS lets a tool read its line item, not make one
    learner = LmsBrowser(url)
    learner.open(learner.launch(platform, second_link.url, "learner-1", hint=f"link:{second_link.id}"))
    wait_for(lambda: len(tool.outbox.parked()) == 1, "the second lesson's score kept back")
    (parked,) = tool.outbox.parked()
    assert parked.lesson_id == second and parked.attempts == 0
    assert f"Not sent: the launch of {second}" in str(parked.last_error)
    assert (first if why == "resourceId" else "1000 points") in str(parked.last_error)
    assert platform.received(str(first_link.lineitem)) == []  # never written
    teacher = LmsBrowser(url)
    page = teacher.open(teacher.launch(platform, f"{url}/lessons/{first}", "teacher-1"))
    assert f"Not sent: the launch of {second}" in page.text and "one gradebook column per link" in page.text
    teacher.close()
    learner.close()


def test_a_line_item_a_launch_makes_ends_at_the_lessons_due_date(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    lesson = _lessons(app)[2]
    platform.deep_linking["accept_lineitem"] = False  # the launches make the column
    _deep_link(lms_browser, platform, url, [lesson])
    store = app.state.qkv.store
    # The course the launches land in (made here first, as an earlier launch would have made it), due in it.
    course = store.courses.for_lti_context(platform.issuer, DEPLOYMENT_ID, CONTEXT_ID, "Attention")
    store.due_dates.set_due(course.id, lesson, datetime(2026, 12, 24, 16, 0), late_credit=0.5)
    learner = LmsBrowser(url)
    for link in list(platform.links.values()):
        learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
    learner.close()
    (item_id,) = platform.line_items
    made = platform.line_items[item_id]
    assert made["resourceId"] == lesson and made["endDateTime"] == "2026-12-24T16:00:00Z"


def test_the_lms_line_items_end_is_the_due_date_unless_the_instructor_set_one(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    first, second = _lessons(app)[:2]
    _deep_link(lms_browser, platform, url, [first, second])  # the LMS makes each link's line item
    store = app.state.qkv.store
    course = store.courses.for_lti_context(platform.issuer, DEPLOYMENT_ID, CONTEXT_ID, "Attention")
    store.due_dates.set_due(course.id, second, datetime(2027, 1, 8, 9, 0), late_credit=0.5)  # in qkv
    for item in platform.line_items.values():  # the instructor gave both an end date in the LMS
        item["endDateTime"] = "2027-01-15T17:00:00+01:00"
    learner = LmsBrowser(url)
    for link in list(platform.links.values()):
        learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
    learner.close()
    from_lms, set_in_qkv = store.due_dates.due(course.id, first), store.due_dates.due(course.id, second)
    assert from_lms is not None and from_lms.due_at == datetime(2027, 1, 15, 16, 0)  # UTC
    assert from_lms.late_credit == 1.0 and from_lms.close_at is None  # the LMS's own rules act on lateness
    assert set_in_qkv is not None and set_in_qkv.due_at == datetime(2027, 1, 8, 9, 0)  # the instructor's
    # The instructor moves both end dates in the LMS: the date that came from the LMS follows, the one
    # set in qkv stays.
    for item in platform.line_items.values():
        item["endDateTime"] = "2027-01-22T17:00:00+01:00"
    learner = LmsBrowser(url)
    for link in list(platform.links.values()):
        learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
    learner.close()
    moved, kept = store.due_dates.due(course.id, first), store.due_dates.due(course.id, second)
    assert moved is not None and moved.due_at == datetime(2027, 1, 22, 16, 0)
    assert kept is not None and (kept.due_at, kept.late_credit) == (datetime(2027, 1, 8, 9, 0), 0.5)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + "+00:00"


def _course_id(app: Any, platform: FakePlatform) -> str:
    store = app.state.qkv.store
    return str(store.courses.for_lti_context(platform.issuer, DEPLOYMENT_ID, CONTEXT_ID, "Attention").id)


def _solve_l41(learner: LmsBrowser, page: httpx.Response, url: str, app: Any) -> None:
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token, page.text[:500]
    exercise, right = solvable(app)
    answer = learner.client.post(
        f"{url}/api/lessons/L4.1/answers",
        json={"exercise_id": exercise, "answer": right},
        headers={"X-CSRF-Token": token.group(1)},
    )
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("flavour", ["moodle", "canvas"])
def test_the_end_of_a_line_item_found_by_its_resource_id_is_the_due_date(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser, flavour: str
) -> None:
    platform, url, app = lms
    platform.mode, platform.substitutes = flavour, flavour == "canvas"
    platform.deep_linking["accept_lineitem"] = False  # the link has no column: the launch looks one up
    _deep_link(lms_browser, platform, url, ["L4.1"])
    with term_clock() as clock:
        ends = (clock() + timedelta(days=1)).replace(microsecond=0)
        # The instructor made L4.1's column in the LMS, with its end date, before anyone launched.
        column = {"scoreMaximum": 1, "label": "L4.1", "resourceId": "L4.1", "endDateTime": _iso(ends)}
        made = platform.make_line_item(column)
        (link,) = platform.links.values()
        learner = LmsBrowser(url)
        page = learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
        due = app.state.qkv.store.due_dates.due(_course_id(app, platform), "L4.1")
        assert due is not None and (due.due_at, due.close_at, due.late_credit) == (ends, None, 1.0)
        clock.advance(days=2)  # the learner solves a day after the LMS's end date
        _solve_l41(learner, page, url, app)
        item = made["id"].rsplit("/", 1)[-1]
        wait_for(lambda: any("late" in s.get("comment", "") for s in platform.received(item)), "a late score")
        learner.close()
    assert len(platform.line_items) == 1  # the one found, no second column
    late = [s for s in platform.received(item) if "late" in s.get("comment", "")][-1]
    assert late["scoreGiven"] == 1 and "1 exercise solved late" in late["comment"]  # the LMS's rules act


@pytest.mark.parametrize("flavour", ["moodle", "canvas"])
def test_a_deep_linked_links_submission_window_is_the_due_date_where_the_lms_substitutes_it(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser, flavour: str
) -> None:
    platform, url, app = lms
    platform.mode, platform.substitutes = flavour, flavour == "canvas"
    _, claims = _deep_link(lms_browser, platform, url, ["L4.1"])
    (item,) = claims[DL + "content_items"]
    assert item["custom"]["qkv_submission_end"] == "$ResourceLink.submission.endDateTime"
    with term_clock() as clock:
        ends = (clock() + timedelta(hours=5)).replace(microsecond=0)
        (link,) = platform.links.values()
        link.submission_end = _iso(ends)  # the instructor set the link's submission window in the LMS
        learner = LmsBrowser(url)
        learner.open(learner.launch(platform, link.url, "learner-1", hint=f"link:{link.id}"))
        learner.close()
    due = app.state.qkv.store.due_dates.due(_course_id(app, platform), "L4.1")
    if flavour == "canvas":
        assert due is not None and (due.due_at, due.close_at, due.late_credit) == (ends, None, 1.0)
    else:  # a Moodle-like LMS sends the variable back as qkv asked for it: no date is read from it
        assert due is None
