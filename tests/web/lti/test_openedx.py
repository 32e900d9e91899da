"""Open edX's own LTI 1.3 consumer as a third LMS (see openedx_platform.py): launches as a learner and as
course staff, the client-credentials tokens, scores, deep linking with two lessons, the roster (NRPS) —
and the overwrite it invites: Open edX keeps every lesson deep-linked into one block under that block's
one line item, so the second lesson's launch carries the first's; qkv must not post over it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from html import unescape
from typing import Any

import pytest

from qkv.web.lti.deep_link_routes import offered_lessons
from tests.web.lti.conftest import tool_server
from tests.web.lti.launching import LmsBrowser, page_form, solvable, wait_for
from tests.web.lti.openedx_platform import OpenEdx, served_openedx

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def openedx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[OpenEdx, str, Any]]:
    data = tmp_path_factory.mktemp("openedx")
    with tool_server(f"sqlite:///{data / 'qkv.db'}") as (url, app), served_openedx(url, data) as lms:
        for block in lms.blocks:
            lms.register(app.state.qkv_lti.platforms, block)
        yield lms, url, app


def _scores_of(state: dict[str, Any], line_item: int, user: str) -> list[dict[str, Any]]:
    return [s for s in state["scores"] if s["line_item"] == line_item and s["userId"] == user]


def test_a_learner_launch_opens_the_lesson_and_scores_reach_the_blocks_line_item(
    openedx: tuple[OpenEdx, str, Any],
) -> None:
    lms, url, app = openedx
    browser = LmsBrowser(url)
    lesson = browser.open(lms.launch(browser.client, "declarative", "ada"))
    assert lesson.status_code == 200 and lesson.url.path == "/lessons/L4.1" and "Ada Lovelace" in lesson.text
    (item,) = [i for i in lms.state()["line_items"] if i["block"] == lms.blocks["declarative"]["location"]]
    assert item["resourceId"] == lms.blocks["declarative"]["location"]  # the LMS's own column, used as sent
    wait_for(lambda: bool(_scores_of(lms.state(), item["pk"], "ext-ada")), "the launch's score")
    (first,) = _scores_of(lms.state(), item["pk"], "ext-ada")
    assert first["scoreGiven"] == 0 and first["scoreMaximum"] == max(
        offered_lessons(app.state.qkv)["L4.1"].points, 1
    )
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', lesson.text)
    assert token
    exercise, right = solvable(app)
    answered = browser.client.post(
        f"{url}/api/lessons/L4.1/answers",
        json={"exercise_id": exercise, "answer": right},
        headers={"X-CSRF-Token": token.group(1)},
    )
    assert answered.status_code == 200, answered.text

    def score() -> dict[str, Any]:  # Open edX keeps one score per learner and line item: the latest
        (only,) = _scores_of(lms.state(), item["pk"], "ext-ada")
        return only

    wait_for(lambda: score()["scoreGiven"] == 1, "the solved exercise's score")
    later = score()
    assert later["gradingProgress"] == "FullyGraded"
    stamps = [datetime.fromisoformat(s["timestamp"]) for s in (first, later)]
    assert stamps[0] < stamps[1] and all(stamp.microsecond == 0 for stamp in stamps)
    assert any(grade["user"] == "ada" for grade in lms.state()["grades"])  # published to the gradebook
    browser.close()


def test_course_staff_launch_opens_the_lms_page_and_pulls_the_roster(
    openedx: tuple[OpenEdx, str, Any],
) -> None:
    lms, url, app = openedx
    browser = LmsBrowser(url)
    page = browser.open(lms.launch(browser.client, "declarative", "grace", role="staff"))
    assert page.status_code == 200 and page.url.path == "/instructor/lti", page.text[:300]
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert token, page.text
    form = {
        "csrf_token": token.group(1),
        "issuer": lms.blocks["declarative"]["issuer"],
        "client_id": lms.blocks["declarative"]["client_id"],
        "context_id": lms.course,
    }
    pulled = browser.client.post(f"{url}/instructor/lti/roster", data=form)
    assert pulled.status_code == 303, pulled.text
    names = {learner.display_name for learner in app.state.qkv.store.instructors.learners()}
    assert {"Ada Lovelace", "Emmy Noether"} <= names  # Emmy never launched: made from the roster
    assert not {"Grace Hopper", "Alan Turing"} & names  # course staff and a TA are no learners
    browser.close()


def _deep_link(lms: OpenEdx, url: str, lessons: list[str], block: str = "programmatic") -> None:
    """Course staff pick ``lessons`` in qkv's picker; Open edX checks and stores qkv's signed answer."""
    browser = LmsBrowser(url)
    picker = lms.launch(browser.client, block, "grace", role="staff", kind="deep")
    assert picker.status_code == 200, picker.text[:500]
    picker_pass = re.search(r'name="pass" value="([^"]+)"', picker.text)
    assert picker_pass, picker.text[:500]
    form = {"pass": unescape(picker_pass.group(1))} | {f"lesson-{lesson}": lesson for lesson in lessons}
    answer = browser.client.post(f"{url}/lti/deep-link", data=form)
    assert answer.status_code == 200, answer.text
    action, fields = page_form(answer, "lti-auto-post")
    saved = browser.client.post(action, data=fields)  # check_and_decode_deep_linking_token, then stored
    assert saved.status_code == 200, saved.text[:500]
    browser.close()


def test_two_deep_linked_lessons_on_one_block_never_score_over_each_other(
    openedx: tuple[OpenEdx, str, Any],
) -> None:
    """The regression: launching L4.2 carries L4.1's line item (Open edX gives every link of the block
    the block's first line item); L4.2's score goes to L4.2's own line item, never over L4.1's."""
    lms, url, app = openedx
    offered = offered_lessons(app.state.qkv)
    first, second = offered["L4.1"], offered["L4.2"]
    _deep_link(lms, url, [first.id, second.id])
    block = lms.blocks["programmatic"]["location"]
    content = [c for c in lms.state()["content_items"] if c["block"] == block]
    assert [c["custom"]["qkv_lesson"] for c in content] == [first.id, second.id]
    browser = LmsBrowser(url)
    for item, lesson in zip(content, (first, second), strict=True):
        opened = browser.open(
            lms.launch(browser.client, "programmatic", "emmy", kind="item", item=str(item["pk"]))
        )
        assert opened.url.path == f"/lessons/{lesson.id}"
        wait_for(
            lambda lesson=lesson: any(i["resourceId"] == lesson.id for i in lms.state()["line_items"]),
            f"{lesson.id}'s line item",
        )
    state = lms.state()
    columns = {i["resourceId"]: i for i in state["line_items"] if i["block"] == block}
    assert columns[first.id]["resourceLinkId"] == block  # L4.1's: the block's grade
    assert columns[second.id]["resourceLinkId"] == ""  # L4.2's own, bound to no link
    wait_for(lambda: bool(_scores_of(lms.state(), columns[second.id]["pk"], "ext-emmy")), "L4.2's score")
    state = lms.state()
    on_first = _scores_of(state, columns[first.id]["pk"], "ext-emmy")
    assert on_first and {s["scoreMaximum"] for s in on_first} == {max(first.points, 1)}  # never L4.2's 0/8
    on_second = _scores_of(state, columns[second.id]["pk"], "ext-emmy")
    assert {s["scoreMaximum"] for s in on_second} == {max(second.points, 1)}
    browser.close()


def test_a_block_with_its_own_read_only_line_item_keeps_a_linked_lessons_score_back(
    openedx: tuple[OpenEdx, str, Any],
) -> None:
    """A block whose line item is Open edX's own (declarative: read-only, the block's weight) offers no
    container: a deep-linked lesson of other points is never written there, and the instructor is told."""
    lms, url, app = openedx
    tool = app.state.qkv_lti
    second = offered_lessons(app.state.qkv)["L4.2"]
    block = lms.blocks["declarative"]["location"]
    _deep_link(lms, url, ["L4.1", second.id], block="declarative")
    content = [c for c in lms.state()["content_items"] if c["block"] == block]
    browser = LmsBrowser(url)
    opened = browser.open(
        lms.launch(browser.client, "declarative", "ada", kind="item", item=str(content[1]["pk"]))
    )
    assert opened.url.path == f"/lessons/{second.id}"
    wait_for(lambda: any(e.lesson_id == second.id for e in tool.outbox.parked()), "L4.2's score kept back")
    (kept,) = [e for e in tool.outbox.parked() if e.lesson_id == second.id]
    assert "Not sent: the launch of L4.2" in str(kept.last_error) and "counts 10 points" in str(
        kept.last_error
    )
    (own,) = [i for i in lms.state()["line_items"] if i["block"] == block]
    assert all(
        s["scoreMaximum"] != max(second.points, 1) for s in _scores_of(lms.state(), own["pk"], "ext-ada")
    )
    staff = LmsBrowser(url)
    page = staff.open(lms.launch(staff.client, "declarative", "grace", role="staff"))
    assert (
        "Not sent: the launch of L4.2" in unescape(page.text) and "one gradebook column per link" in page.text
    )
    staff.close()
    browser.close()
