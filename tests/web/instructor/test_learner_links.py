"""The instructor's "Sign-in link" button on a learner's page: only for accounts, only for instructors."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.web.backend_fixtures import Browser, instructor_csrf, sign_in_instructor

HTML = {"accept": "text/html"}


def _instructor(app: FastAPI) -> tuple[TestClient, str]:
    client = TestClient(app)
    sign_in_instructor(app, client)
    csrf = instructor_csrf(client)
    assert csrf
    return client, csrf


def test_the_button_shows_for_accounts_and_makes_a_link_that_signs_in(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app()
    store = app.state.qkv.store
    ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    anonymous = Browser(app).open_lesson()
    anonymous.answer("q", "3, 2")
    client, csrf = _instructor(app)
    page = client.get(f"/instructor/learners/{ada}", headers=HTML).text
    assert f'action="/instructor/learners/{ada}/sign-in-link"' in page
    anonymous_id = next(person.id for person in store.instructors.learners() if person.id != ada)
    anonymous_page = client.get(f"/instructor/learners/{anonymous_id}", headers=HTML).text
    assert "/sign-in-link" not in anonymous_page  # the anonymous learner has no account, so no button
    made = client.post(f"/instructor/learners/{ada}/sign-in-link", data={"csrf_token": csrf}, headers=HTML)
    assert made.status_code == 200 and made.headers["cache-control"] == "no-store"
    assert "Sign-in link for Ada Lovelace" in made.text and 'src="data:image/svg+xml;base64,' in made.text
    link = re.search(r'<a href="http://testserver/sign-in#token=([^"]+)">', made.text)
    assert link is not None
    learner = Browser(app)
    assert learner.client.post("/sign-in", data={"token": link.group(1)}).status_code == 200
    assert "Ada Lovelace" in learner.client.get("/", headers=HTML).text


def test_the_button_needs_an_instructor_their_csrf_token_and_an_account(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app()
    ada = app.state.qkv.store.accounts.find_or_create(None, "s-1001", "Ada")
    url = f"/instructor/learners/{ada}/sign-in-link"
    learner = Browser(app).open_lesson()
    refused = learner.client.post(url, data={"csrf_token": learner.token})
    assert refused.status_code == 403  # a learner's browser
    assert TestClient(app).post(url, data={}).status_code == 401
    client, csrf = _instructor(app)
    assert client.post(url, data={"csrf_token": "forged"}).status_code == 403
    unknown = client.post("/instructor/learners/" + "c" * 36 + "/sign-in-link", data={"csrf_token": csrf})
    assert unknown.status_code == 404 and "No learner with the id" in unknown.json()["detail"]
    Browser(app).open_lesson().answer("q", "3, 2")
    anonymous_id = next(p.id for p in app.state.qkv.store.instructors.learners() if p.id != ada)
    no_account = client.post(f"/instructor/learners/{anonymous_id}/sign-in-link", data={"csrf_token": csrf})
    assert no_account.status_code == 404 and "has no account" in no_account.json()["detail"]


def test_instructor_pages_show_the_external_id_beside_the_name(make_app: Callable[..., FastAPI]) -> None:
    app = make_app()
    store = app.state.qkv.store
    ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    store.progress.record_answer(ada, "L4.1", "q", "3, 2", correct=True, message="Yes.")
    anonymous = Browser(app).open_lesson()
    anonymous.post("/api/learner", {"display_name": "Ada L."})
    anonymous.answer("q", "3, 2")
    client, _ = _instructor(app)
    grid = client.get("/instructor/class", headers=HTML).text
    assert f'{ada}">Ada Lovelace</a> <span class="external-id">(s-1001)</span>' in grid
    assert '">Ada L.</a></th>' in grid  # an anonymous learner has no external id to show
    page = client.get(f"/instructor/learners/{ada}", headers=HTML).text
    assert '<h1>Ada Lovelace <span class="external-id">(s-1001)</span></h1>' in page
    rows = client.get("/api/instructor/class").json()
    assert {row["name"]: row["external_id"] for row in rows["rows"]} == {
        "Ada Lovelace": "s-1001",
        "Ada L.": None,
    }


def test_the_button_on_a_page_of_another_course_than_the_chosen_one_works(
    make_app: Callable[..., FastAPI],
) -> None:
    # Issue 43: on /instructor/learners/<id>?course=A, with course B chosen, the button posted without
    # ?course and answered 404.
    from qkv.store import MembershipSource, StaffRole

    app = make_app()
    store = app.state.qkv.store
    first, second = store.courses.create("Attention 101"), store.courses.create("Attention 102")
    ada = store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
    store.courses.enrol(first.id, ada, MembershipSource.ROSTER)
    grace, token = store.instructors.add("Grace")
    for course in (first, second):
        store.courses.set_staff(course.id, grace.id, StaffRole.INSTRUCTOR)
    client = TestClient(app)
    sign_in_instructor(app, client, token)
    csrf = instructor_csrf(client)
    chosen = client.post("/instructor/course", data={"csrf_token": csrf, "course": second.id}, headers=HTML)
    assert chosen.status_code in {200, 303}
    assert client.get(f"/instructor/learners/{ada}", headers=HTML).status_code == 404  # not of course B
    page = client.get(f"/instructor/learners/{ada}", params={"course": first.id}, headers=HTML)
    assert page.status_code == 200
    action = re.search(r'<form method="post" action="([^"]+)" class="sign-in-link-form">', page.text)
    assert (
        action is not None and action.group(1) == f"/instructor/learners/{ada}/sign-in-link?course={first.id}"
    )
    made = client.post(action.group(1), data={"csrf_token": csrf}, headers=HTML)
    assert made.status_code == 200, made.text
    assert "Sign-in link for Ada Lovelace" in made.text
