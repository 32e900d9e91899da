"""One client cannot lock its address out: a new learner costs the address's bound only once it saves work.

Reading pages mints a cookie for free; an identity is counted against its address at its first write
(an answer, a program, a draft, a name, a variant), once. Many identities that do save work from one
address are still bounded.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from qkv.web.app import MINT_WINDOW_S
from qkv.web.http.security import COOKIE_NAME
from tests.web.backend_fixtures import API, LESSON_URL, Browser


def test_200_cookieless_requests_do_not_keep_the_next_visitor_out(make_app: Any) -> None:
    app = make_app()  # the default bound: 200 new learners per address
    pages = ["/", LESSON_URL, f"{API}/progress", "/lessons/L9.1"]
    for number in range(200):  # a red-team client, or a classroom's browsers before anyone answers
        assert TestClient(app).get(pages[number % len(pages)]).status_code in {200, 404}
    visitor = Browser(app)
    assert visitor.client.get("/").status_code == 200
    visitor.open_lesson()  # asserts 200
    saved = visitor.answer("q", "3, 2")
    assert saved.status_code == 200, saved.text
    assert saved.json()["feedback"]["correct"] is True


def test_new_learners_who_save_work_are_still_bounded_per_address(make_app: Any) -> None:
    app = make_app(identities_per_address=3)
    savers = [Browser(app).open_lesson() for _ in range(3)]
    assert [learner.answer("q", "3, 2").status_code for learner in savers] == [200, 200, 200]
    late = Browser(app).open_lesson()  # the page is served: reading never uses up the bound
    refused = late.answer("q", "3, 2")
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= MINT_WINDOW_S
    detail = refused.json()["detail"]
    assert detail.startswith("This address has started 3 new learners saving work in the last 600 s")
    assert "the lessons still open" in detail
    draft = {"exercise_id": "functions", "code": "x = 1"}
    for kind, response in [
        ("draft", late.client.put(f"{API}/draft", json=draft, headers={"X-CSRF-Token": late.token})),
        ("name", late.post("/api/learner", {"display_name": "Late"})),
        ("variant", late.post(f"{API}/variant", {})),
    ]:
        assert response.status_code == 429, (kind, response.text)
    assert late.client.get(LESSON_URL).status_code == 200
    # Learners who saved before are never refused, and each is counted once, however much they save.
    assert [learner.answer("k", "2, 1").status_code for learner in savers] == [200, 200, 200]
    assert savers[0].post("/api/learner", {"display_name": "Ann"}).status_code == 200


def test_a_learner_with_saved_work_is_not_counted_again_after_a_restart(make_app: Any) -> None:
    first = make_app(identities_per_address=1)
    ann = Browser(first).open_lesson()
    assert ann.answer("q", "3, 2").status_code == 200
    restarted = make_app(identities_per_address=1)  # the same database, a fresh count
    again = Browser(restarted)
    again.client.cookies.set(COOKIE_NAME, str(ann.client.cookies.get(COOKIE_NAME)))
    again.token = ann.token
    assert again.answer("k", "2, 1").status_code == 200  # Ann's work is in the store: not a new learner
    ben = Browser(restarted).open_lesson()
    assert ben.answer("q", "3, 2").status_code == 200  # so the one new place is still free for Ben
    assert Browser(restarted).open_lesson().answer("q", "3, 2").status_code == 429


def test_a_refused_request_of_a_new_learner_counts_once(make_app: Any) -> None:
    app = make_app(identities_per_address=2)
    clumsy = Browser(app).open_lesson()
    assert clumsy.answer("no-such-exercise", "1").status_code == 422  # counted, though nothing was saved
    assert clumsy.answer("also-not", "1").status_code == 422  # not counted again
    assert clumsy.answer("q", "3, 2").status_code == 200
    assert Browser(app).open_lesson().answer("q", "3, 2").status_code == 200
