"""A launch from the fake LMS opens the lesson its target names, signed in; an instructor's opens the
instructor's class page; the tool's keys are published."""

from __future__ import annotations

from typing import Any

from tests.web.lti.fake_platform import FakePlatform
from tests.web.lti.launching import LmsBrowser


def test_a_learner_launch_opens_the_named_lesson_signed_in(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, app = lms
    answer = lms_browser.launch(platform, f"{url}/lessons/L4.2", "learner-1")
    assert answer.status_code == 200, answer.text
    lesson = lms_browser.open(answer)
    assert lesson.status_code == 200
    assert lesson.url.path == "/lessons/L4.2"
    assert "Ada Lovelace" in lesson.text  # signed in: the page names the learner from the LMS's claims
    (item,) = app.state.qkv_lti.links.line_items(_learner_of(app, "Ada Lovelace"), "L4.2")
    assert item.lineitem_url == platform.lineitem_url("L4.2")
    assert item.subject == "learner-1"


def test_the_same_lms_user_gets_the_same_learner_on_every_launch(lms: tuple[FakePlatform, str, Any]) -> None:
    platform, url, _app = lms
    first, second = LmsBrowser(url), LmsBrowser(url)
    lessons = [b.open(b.launch(platform, f"{url}/lessons/L4.1", "learner-1")) for b in (first, second)]
    tokens = [page.text.split('name="csrf-token" content="')[1].split('"')[0] for page in lessons]
    assert tokens[0] == tokens[1]  # the CSRF token is derived from the learner: one learner on both browsers
    first.close(), second.close()


def test_an_instructor_launch_opens_the_class_page_as_an_instructor(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    answer = lms_browser.launch(platform, f"{url}/lessons/L4.1", "teacher-1")
    assert answer.status_code == 200, answer.text
    page = lms_browser.open(answer)
    assert page.status_code == 200, page.text
    assert "Attention, autumn term" in page.text
    assert "Pull the roster of Attention, autumn term" in page.text
    dashboard = lms_browser.client.get(f"{url}/instructor", headers={"accept": "text/html"})
    assert dashboard.status_code == 200


def test_the_tool_publishes_its_public_key_and_no_private_part(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    keys = lms_browser.client.get(f"{lms[1]}/lti/jwks.json").json()["keys"]
    assert [(key["kty"], key["alg"], key["use"]) for key in keys] == [("RSA", "RS256", "sig")]
    assert not {"d", "p", "q", "dp", "dq", "qi"} & set(keys[0])


def test_a_login_for_a_launch_to_the_lesson_list_opens_it(
    lms: tuple[FakePlatform, str, Any], lms_browser: LmsBrowser
) -> None:
    platform, url, _app = lms
    answer = lms_browser.launch(platform, f"{url}/", "learner-1")
    assert lms_browser.open(answer).url.path == "/"


def _learner_of(app: Any, name: str) -> str:
    for learner in app.state.qkv.store.instructors.learners():
        if learner.display_name == name:
            return learner.id
    raise AssertionError(f"no learner named {name!r}")
