"""Grades reach the LMS (AGS): a solved exercise posts the learner's lesson score to the line item of their
launch, through the outbox; a platform that is down gets it later, once, and scores arrive in order."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from qkv.store.clock import utc_now
from tests.web.lti.fake_platform import FakePlatform
from tests.web.lti.launching import LmsBrowser, solvable, wait_for


def _open_lesson(browser: LmsBrowser, platform: FakePlatform, url: str, lesson: str) -> str:
    page = browser.open(browser.launch(platform, f"{url}/lessons/{lesson}", "learner-1"))
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token
    return token.group(1)


def _answer(browser: LmsBrowser, url: str, token: str, exercise: str, answer: str) -> Any:
    response = browser.client.post(
        f"{url}/api/lessons/L4.1/answers",
        json={"exercise_id": exercise, "answer": answer},
        headers={"X-CSRF-Token": token},
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_a_solved_exercise_reaches_the_line_item_as_a_score(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    wait_for(lambda: len(platform.received("L4.1")) == 1, "the launch's starting score")
    exercise, right = solvable(app)
    progress = _answer(lms_browser, url, token, exercise, right)["progress"]
    wait_for(lambda: len(platform.received("L4.1")) == 2, "the score of the solved exercise")
    start, solved = platform.received("L4.1")
    assert (start["scoreGiven"], start["activityProgress"], start["gradingProgress"]) == (
        0,
        "Started",
        "Pending",
    )
    assert solved["userId"] == "learner-1"
    assert (solved["scoreGiven"], solved["scoreMaximum"]) == (progress["done"], progress["total"])
    assert (solved["activityProgress"], solved["gradingProgress"]) == ("InProgress", "Pending")
    assert platform.assertions_checked >= 1  # the token came from a client assertion the LMS checked
    outbox = app.state.qkv_lti.outbox
    wait_for(lambda: outbox.delivered_count() == 2, "both scores marked delivered")
    _answer(lms_browser, url, token, exercise, right)  # the same score again: nothing new is queued
    assert (outbox.delivered_count(), outbox.waiting()) == (2, [])  # queued before the answer came back


def test_a_platform_that_is_down_gets_the_score_once_when_it_is_back(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    tool = app.state.qkv_lti
    platform.down = True
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    exercise, right = solvable(app)
    _answer(lms_browser, url, token, exercise, right)
    wait_for(lambda: any(e.attempts >= 1 for e in tool.outbox.waiting()), "a failed attempt")
    waiting = tool.outbox.waiting()
    assert [e.document["scoreGiven"] for e in waiting] == [0, 1]  # both wait, in order
    assert "answered 503" in (waiting[0].last_error or "")
    page = lms_browser.client.get(f"{url}/instructor/lti")
    assert page.status_code in {401, 403}  # learners do not see the outbox
    platform.down = False
    later = utc_now() + timedelta(hours=2)  # past every back-off
    while tool.sender.run_once(later):
        pass
    wait_for(lambda: not tool.outbox.waiting(), "the outbox to empty")
    assert [s["scoreGiven"] for s in platform.received("L4.1")] == [0, 1]  # each once, in order
    assert tool.outbox.delivered_count() == 2


def test_the_instructor_sees_the_scores_waiting(lms: tuple[FakePlatform, str, Any]) -> None:
    platform, url, _app = lms
    platform.down = True
    learner, teacher = LmsBrowser(url), LmsBrowser(url)
    learner.open(learner.launch(platform, f"{url}/lessons/L4.3", "learner-1"))
    page = teacher.open(teacher.launch(platform, f"{url}/lessons/L4.1", "teacher-1"))
    assert "Scores waiting for the LMS" in page.text
    assert "<td>learner-1</td><td>L4.3</td>" in page.text
    learner.close(), teacher.close()
