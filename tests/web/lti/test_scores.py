"""Grades reach the LMS (AGS): a solved exercise posts the learner's lesson score to the line item of their
launch, through the outbox; a platform that is down gets it later, once, and scores arrive in order. Every
score is FullyGraded with a timestamp newer than the last, so Moodle's and Canvas's gradebooks show each
one as a number; a score the LMS refuses (4xx) is parked with its sentence and holds nothing back."""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from typing import Any

import pytest

from qkv.store.sql.clock import utc_now
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


@pytest.mark.parametrize("mode", ["moodle", "canvas"])
def test_every_score_shows_in_the_gradebook_as_a_number(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser, mode: str
) -> None:
    platform, url, app = lms
    platform.mode = mode
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    wait_for(lambda: len(platform.received("L4.1")) == 1, "the launch's starting score")
    assert platform.grade("L4.1", "learner-1") == 0.0  # a number, not an empty cell
    exercise, right = solvable(app)
    progress = _answer(lms_browser, url, token, exercise, right)["progress"]
    wait_for(lambda: len(platform.received("L4.1")) == 2, "the score of the solved exercise")
    start, solved = platform.received("L4.1")
    assert (start["scoreGiven"], start["activityProgress"], start["gradingProgress"]) == (
        0,
        "Started",
        "FullyGraded",
    )
    assert solved["userId"] == "learner-1"
    assert (solved["scoreGiven"], solved["scoreMaximum"]) == (progress["done"], progress["total"])
    assert 0 < progress["done"] < progress["total"]  # a partial score, the case that showed nothing before
    assert (solved["activityProgress"], solved["gradingProgress"]) == ("Submitted", "FullyGraded")
    assert platform.grade("L4.1", "learner-1") == float(progress["done"])
    # Whole seconds, strictly newer: the two scores came within a second or two, and Moodle took both.
    stamps = [s["timestamp"] for s in (start, solved)]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", stamp) for stamp in stamps)
    assert stamps[0] < stamps[1]
    assert platform.assertions_checked >= 1  # the token came from a client assertion the LMS checked
    outbox = app.state.qkv_lti.outbox
    wait_for(lambda: outbox.delivered_count() == 2, "both scores marked delivered")
    assert outbox.parked() == []
    _answer(lms_browser, url, token, exercise, right)  # the same score again: nothing new is queued
    assert (outbox.delivered_count(), outbox.waiting()) == (2, [])  # queued before the answer came back


@pytest.mark.parametrize("mode", ["moodle", "canvas"])
def test_a_learner_who_answered_but_solved_nothing_is_in_progress(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser, mode: str
) -> None:
    # Issue 43: a score was queued only when the number changed, so an answer that solved nothing left the
    # LMS at Started; docs/lms.md promises InProgress.
    platform, url, app = lms
    platform.mode = mode
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    wait_for(lambda: len(platform.received("L4.1")) == 1, "the launch's starting score")
    wrong = _answer(lms_browser, url, token, "q", "99, 99")
    assert not wrong["feedback"]["correct"] and wrong["progress"]["done"] == 0
    wait_for(lambda: len(platform.received("L4.1")) == 2, "the in-progress score")
    _answer(lms_browser, url, token, "q", "98, 98")  # still nothing solved: nothing new to send
    exercise, right = solvable(app)
    progress = _answer(lms_browser, url, token, exercise, right)["progress"]
    wait_for(lambda: len(platform.received("L4.1")) == 3, "the score of the solved exercise")
    started, in_progress, solved = platform.received("L4.1")
    assert [s["activityProgress"] for s in (started, in_progress, solved)] == [
        "Started",
        "InProgress",
        "Submitted",
    ]
    assert (in_progress["scoreGiven"], in_progress["gradingProgress"]) == (0, "FullyGraded")
    assert solved["scoreGiven"] == progress["done"] == 1
    assert platform.grade("L4.1", "learner-1") == 1.0  # each one taken, in order (Moodle: newer stamps)
    outbox = app.state.qkv_lti.outbox
    wait_for(lambda: outbox.delivered_count() == 3, "the three scores marked delivered")
    assert outbox.parked() == []


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_program_run_that_passes_nothing_is_in_progress(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    platform.mode = "canvas"
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    wait_for(lambda: len(platform.received("L4.1")) == 1, "the launch's starting score")
    ran = lms_browser.client.post(
        f"{url}/api/lessons/L4.1/code",
        json={"exercise_id": "functions", "code": "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n"},
        headers={"X-CSRF-Token": token},
    )
    assert ran.status_code == 200 and ran.json()["result"]["status"] != "pass", ran.text
    wait_for(lambda: len(platform.received("L4.1")) == 2, "the in-progress score")
    assert [s["activityProgress"] for s in platform.received("L4.1")] == ["Started", "InProgress"]


def test_a_score_the_lms_refuses_is_parked_with_its_sentence_and_holds_nothing_back(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    tool = app.state.qkv_lti
    platform.refuse_next.append((409, "Refusing score with an earlier timestamp for item and user"))
    token = _open_lesson(lms_browser, platform, url, "L4.1")
    wait_for(lambda: len(tool.outbox.parked()) == 1, "the refused score parked")
    exercise, right = solvable(app)
    progress = _answer(lms_browser, url, token, exercise, right)["progress"]
    wait_for(lambda: platform.grade("L4.1", "learner-1") == float(progress["done"]), "the later score")
    assert [s["scoreGiven"] for s in platform.received("L4.1")] == [0, progress["done"]]  # never resent
    (parked,) = tool.outbox.parked()
    assert parked.document["scoreGiven"] == 0 and parked.attempts == 0
    assert "409" in (parked.last_error or "") and "earlier timestamp" in (parked.last_error or "")
    teacher = LmsBrowser(url)
    page = teacher.open(teacher.launch(platform, f"{url}/lessons/L4.1", "teacher-1"))
    assert "Scores the LMS refused" in page.text and "Refusing score with an earlier timestamp" in page.text
    teacher.close()
    assert tool.outbox.waiting() == []


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
    assert tool.outbox.parked() == []  # a 5xx is retried, never parked
    page = lms_browser.client.get(f"{url}/instructor/lti")
    assert page.status_code in {401, 403}  # learners do not see the outbox
    platform.down = False
    later = utc_now() + timedelta(hours=2)  # past every back-off
    while tool.sender.run_once(later):
        pass
    wait_for(lambda: not tool.outbox.waiting(), "the outbox to empty")
    assert [s["scoreGiven"] for s in platform.received("L4.1")] == [0, 1]  # each once, in order
    assert tool.outbox.delivered_count() == 2
    assert platform.grade("L4.1", "learner-1") == 1.0


def test_the_instructor_sees_the_scores_waiting(lms: tuple[FakePlatform, str, Any]) -> None:
    platform, url, _app = lms
    platform.down = True
    learner, teacher = LmsBrowser(url), LmsBrowser(url)
    learner.open(learner.launch(platform, f"{url}/lessons/L4.3", "learner-1"))
    page = teacher.open(teacher.launch(platform, f"{url}/lessons/L4.1", "teacher-1"))
    assert "Scores waiting for the LMS" in page.text
    assert "<td>learner-1</td><td>L4.3</td>" in page.text
    learner.close(), teacher.close()
