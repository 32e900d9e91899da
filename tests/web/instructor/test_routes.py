"""The instructor's view: who may see it, the dashboard's numbers on a seeded class, and the exports.

The app serves the test chapter T1 (tests/sample_lessons) on a fresh SQLite file; the class of four
learners is described in ``instructor_seed``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.store.instructor.instructors import InstructorDesk
from qkv.web.http.instructor_auth import INSTRUCTOR_COOKIE, InstructorAuth
from tests.web.instructor_seed import (
    AREA_HINT,
    BEN,
    CY,
    DEE,
    FORMULA_NAME,
    LESSON_ID,
    PERIMETER_HINT,
    catalog,
    seed_class,
)

HTML = {"accept": "text/html"}
INSTRUCTOR_URLS = [
    "/instructor",
    f"/instructor/lessons/{LESSON_ID}",
    f"/instructor/learners/{BEN}",
    "/instructor/export/gradebook.csv",
    "/instructor/export/gradebook.json",
    "/instructor/export/lms.csv",
    "/instructor/export/events.csv",
    "/api/instructor/dashboard",
    f"/api/instructor/lessons/{LESSON_ID}",
    "/api/instructor/class",
    "/instructor/class",
    "/instructor/live/stuck",
    "/instructor/live/grid",
    "/instructor/live/lessons",
    f"/instructor/lessons/{LESSON_ID}/items",
    "/instructor/export/items.csv",
]


@pytest.fixture
def class_app(make_app: Callable[..., FastAPI]) -> FastAPI:
    app = _app(make_app)
    seed_class(app.state.qkv.store)
    return app


def _app(make_app: Callable[..., FastAPI], **settings: Any) -> FastAPI:
    """An app serving the test chapter (``make_app`` builds with the settings; the catalog is swapped in)."""
    app = make_app(**settings)
    app.state.qkv.catalog = catalog()
    return app


def desk(app: FastAPI) -> InstructorDesk:
    found: InstructorAuth = app.state.qkv_instructor
    return found.desk


def sign_in(app: FastAPI, name: str = "Grace") -> TestClient:
    """A new browser signed in as a new instructor through the one-time link."""
    _, token = desk(app).add(name)
    client = TestClient(app)
    page = client.get("/instructor/sign-in", headers=HTML)  # the link's token is in its fragment
    assert page.status_code == 200 and 'name="token"' in page.text and token not in page.text
    response = client.post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/instructor"
    return client


def instructor_token(client: TestClient) -> str:
    page = client.get("/instructor", headers=HTML)
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert found
    return found.group(1)


def learner_browser(app: FastAPI) -> tuple[TestClient, str]:
    client = TestClient(app)
    page = client.get(f"/lessons/{LESSON_ID}", headers=HTML)
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert found
    return client, found.group(1)


# -- access control --------------------------------------------------------------------------------


@pytest.mark.parametrize("url", INSTRUCTOR_URLS)
def test_anonymous_clients_get_401(class_app: FastAPI, url: str) -> None:
    response = TestClient(class_app).get(url)
    assert response.status_code == 401
    assert "qkv instructor add" in response.json()["detail"]
    page = TestClient(class_app).get(url, headers=HTML)
    assert page.status_code == 401 and BEN not in page.text
    assert ("<html" in page.text) != url.startswith("/api/")  # pages answer browsers with a page
    assert ("<h1>Sign-in needed</h1>" in page.text) != url.startswith("/api/")


@pytest.mark.parametrize("url", INSTRUCTOR_URLS)
def test_a_learner_cookie_gets_403(class_app: FastAPI, url: str) -> None:
    client, _ = learner_browser(class_app)
    response = client.get(url)
    assert response.status_code == 403
    assert response.json()["detail"].startswith("This browser is signed in as a learner")


def test_forged_and_foreign_instructor_cookies_get_401(class_app: FastAPI) -> None:
    sign_in(class_app)  # a real session exists, but none of these cookies is it
    forged = [
        "not-a-signed-value",
        InstructorAuth("another-servers-key", desk(class_app)).sign("whatever"),
        class_app.state.qkv_instructor.sign("a-session-id-that-was-never-opened"),
    ]
    for cookie in forged:
        client = TestClient(class_app, cookies={INSTRUCTOR_COOKIE: cookie})
        response = client.get("/api/instructor/dashboard")
        assert response.status_code == 401, cookie
        assert BEN not in response.text


def test_the_learner_cookie_value_does_not_open_the_instructor_view(class_app: FastAPI) -> None:
    learner, _ = learner_browser(class_app)
    value = learner.cookies.get("qkv_learner")
    assert value
    client = TestClient(class_app, cookies={INSTRUCTOR_COOKIE: value})
    assert client.get("/api/instructor/dashboard").status_code == 401


def test_a_sign_in_link_works_once_and_a_get_does_not_use_it(class_app: FastAPI) -> None:
    _, token = desk(class_app).add("Grace")
    client = TestClient(class_app)
    for _ in range(2):  # a link preview that fetches the page twice uses nothing up (the old form too)
        assert client.get("/instructor/sign-in").status_code == 200
        assert client.get(f"/instructor/sign-in?token={token}").status_code == 200
    first = client.post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
    assert first.status_code == 303
    assert "HttpOnly" in first.headers["set-cookie"] and "SameSite=Strict" in first.headers["set-cookie"]
    assert client.get("/api/instructor/dashboard").status_code == 200
    again = TestClient(class_app).post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
    assert again.status_code == 401
    assert "already used" in again.json()["detail"]


def test_an_expired_or_unknown_token_is_refused(class_app: FastAPI) -> None:
    from datetime import timedelta

    d = desk(class_app)
    d.add("Grace")
    expired = d.new_sign_in_token("Grace", lifetime=timedelta(seconds=-1))
    client = TestClient(class_app)
    for token in (expired, "made-up-token", ""):
        response = client.post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
        assert response.status_code == 401


def test_sign_in_from_another_site_is_refused(class_app: FastAPI) -> None:
    _, token = desk(class_app).add("Grace")
    client = TestClient(class_app)
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://attacker.example"}):
        response = client.post(
            "/instructor/sign-in", data={"token": token}, headers=headers, follow_redirects=False
        )
        assert response.status_code == 403
    # the token was not used up by the refused attempts; behind a proxy that rewrites Host, the
    # browser's Sec-Fetch-Site decides
    behind_proxy = {"Sec-Fetch-Site": "same-origin", "Origin": "https://class.example"}
    ok = client.post(
        "/instructor/sign-in", data={"token": token}, headers=behind_proxy, follow_redirects=False
    )
    assert ok.status_code == 303


def test_sign_out_needs_the_instructor_csrf_token(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    token = instructor_token(client)
    _, learner_token = learner_browser(class_app)
    for form in ({}, {"csrf_token": "0" * 64}, {"csrf_token": learner_token}):
        response = client.post("/instructor/sign-out", data=form, follow_redirects=False)
        assert response.status_code == 403, form
    assert client.post("/api/instructor/sign-out").status_code == 403
    assert client.post("/api/instructor/sign-out", headers={"X-CSRF-Token": learner_token}).status_code == 403
    assert client.get("/api/instructor/dashboard").status_code == 200  # still signed in
    out = client.post("/instructor/sign-out", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303 and "Max-Age=0" in out.headers["set-cookie"]
    assert client.get("/api/instructor/dashboard").status_code == 401


def test_the_api_sign_out_takes_the_csrf_header(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    token = instructor_token(client)
    response = client.post("/api/instructor/sign-out", headers={"X-CSRF-Token": token})
    assert response.status_code == 200
    assert client.get("/api/instructor/dashboard").status_code == 401


def test_two_servers_on_one_sqlite_file_share_instructor_sessions(make_app: Callable[..., FastAPI]) -> None:
    # No secret configured: both servers take the cookie key from the database, like a scale-out.
    first = _app(make_app, secret_key=None)
    second = _app(make_app, secret_key=None)
    seed_class(first.state.qkv.store)
    _, token = desk(first).add("Grace")
    on_first = TestClient(first)
    assert (
        on_first.post("/instructor/sign-in", data={"token": token}, follow_redirects=False).status_code == 303
    )
    cookie = on_first.cookies.get(INSTRUCTOR_COOKIE)
    on_second = TestClient(second, cookies={INSTRUCTOR_COOKIE: cookie})
    assert on_second.get("/api/instructor/dashboard").json()["learners"] == 4
    # a link used on one server is used up on the other
    assert TestClient(second).post("/instructor/sign-in", data={"token": token}).status_code == 401
    # signing out on the second server ends the session on the first
    csrf = instructor_token(on_second)
    assert on_second.post("/api/instructor/sign-out", headers={"X-CSRF-Token": csrf}).status_code == 200
    assert on_first.get("/api/instructor/dashboard").status_code == 401


def test_removing_an_instructor_ends_their_sessions(class_app: FastAPI) -> None:
    client = sign_in(class_app, "Grace")
    assert desk(class_app).remove("Grace")
    assert client.get("/api/instructor/dashboard").status_code == 401
    assert not desk(class_app).remove("Grace")


def test_learner_pages_never_link_the_instructor_view(class_app: FastAPI) -> None:
    client, _ = learner_browser(class_app)
    for url in ("/", f"/lessons/{LESSON_ID}", "/docs", "/openapi.json"):
        page = client.get(url, headers=HTML)
        assert page.status_code == 200
        assert "/instructor" not in page.text and "instructor" not in page.text.lower(), url


def test_instructor_pages_are_not_cached_and_carry_the_security_headers(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    response = client.get("/instructor", headers=HTML)
    assert response.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "set-cookie" not in response.headers  # no learner cookie is handed to an instructor page


# -- the numbers -----------------------------------------------------------------------------------


def _exercises(client: TestClient) -> dict[str, dict[str, Any]]:
    data = client.get(f"/api/instructor/lessons/{LESSON_ID}").json()
    assert data["learners"] == 4
    return {ex["id"]: ex["stats"] for ex in data["lesson"]["exercises"]}


def test_the_hand_exercise_numbers_of_the_seeded_class(class_app: FastAPI) -> None:
    area = _exercises(sign_in(class_app))["area"]
    assert (area["started"], area["solved"], area["median_attempts"]) == (4, 3, 2.0)
    assert (area["answers"], area["unreadable"], area["wrong"]) == (10, 2, 5)
    assert area["variants"] == [
        {"variant": "the page's numbers", "learners": 3, "solved": 2, "rate": 2 / 3},
        {"variant": "variant 5", "learners": 1, "solved": 1, "rate": 1.0},
    ]
    assert [(m["id"], m["count"], m["learners"]) for m in area["mistakes"]] == [
        ("perimeter", 1, 1),
        ("half_perimeter", 1, 1),
    ]
    assert area["mistakes"][0]["message"].startswith("That is the perimeter")
    assert area["unmatched"] == [
        {"variant": "the page's numbers", "answer": "13", "count": 2, "learners": 1},
        {"variant": "variant 5", "answer": "999", "count": 1, "learners": 1},
    ]


def test_the_code_exercise_numbers_of_the_seeded_class(class_app: FastAPI) -> None:
    shapes = _exercises(sign_in(class_app))["shapes"]
    assert (shapes["started"], shapes["solved"], shapes["median_attempts"]) == (2, 1, 2.0)
    assert (shapes["programs"], shapes["programs_tested"], shapes["errors"]) == (4, 3, 1)
    failures = {t["name"]: (t["function"], t["runs"], t["failed"]) for t in shapes["tests"]}
    assert failures == {
        "area of a 3 by 4 rectangle": ("area", 3, 1),
        "area of a random rectangle": ("area", 3, 1),
        "area raises ValueError for a negative side": ("area", 3, 0),
        "perimeter of a random rectangle": ("perimeter", 3, 1),
        "perimeter with fractional sides": ("perimeter", 3, 1),
    }
    assert shapes["hints"] == [  # most shown first; a tie in alphabetical order
        {"hint": AREA_HINT, "count": 2, "learners": 1},
        {"hint": PERIMETER_HINT, "count": 2, "learners": 1},
    ]


def test_the_learner_api_stores_the_named_mistake_id(class_app: FastAPI) -> None:
    client, token = learner_browser(class_app)
    for answer in ("14", "13", "12"):
        response = client.post(
            f"/api/lessons/{LESSON_ID}/answers",
            json={"exercise_id": "area", "answer": answer},
            headers={"X-CSRF-Token": token},
        )
        assert response.status_code == 200
        assert "mistake" not in response.json()["feedback"]  # the id is for instructors only
    learner_id = class_app.state.qkv.identity.unsign(client.cookies.get("qkv_learner"))
    saved = [(e.answer, e.mistake) for e in desk(class_app).answer_events(learner_id)]
    assert saved == [("14", "perimeter"), ("13", None), ("12", None)]


def test_every_chart_has_a_table_with_its_numbers(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    for url in ("/instructor", f"/instructor/lessons/{LESSON_ID}"):
        page = client.get(url, headers=HTML).text
        figures = re.findall(r'<figure class="chart-figure".*?</figure>', page, re.S)
        assert figures
        for figure in figures:
            assert 'aria-hidden="true"' in figure
            bars = figure.count('class="chart-bar"')
            table = re.search(r"<tbody>(.*?)</tbody>", figure, re.S)
            assert table and table.group(1).count("<tr>") == bars
    lesson_page = client.get(f"/instructor/lessons/{LESSON_ID}", headers=HTML).text
    assert "perimeter with fractional sides" in lesson_page and "half_perimeter" in lesson_page
    assert "<code>13</code>" in lesson_page  # the unmatched wrong answer, for the author


def test_a_learners_timeline(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    grid = client.get("/instructor/class", headers=HTML).text
    assert f'href="/instructor/learners/{BEN}"' in grid
    page = client.get(f"/instructor/learners/{BEN}", headers=HTML)
    assert page.status_code == 200
    text = page.text
    order = [
        text.index(marker) for marker in ("<code>abc</code>", "<code>12</code>", "error", PERIMETER_HINT)
    ]
    assert order == sorted(order)
    assert "def perimeter(w, h): return w + h" in text
    missing = client.get("/instructor/learners/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404


# -- exports ---------------------------------------------------------------------------------------


def _csv(client: TestClient, name: str) -> list[dict[str, str]]:
    response = client.get(f"/instructor/export/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    return list(csv.DictReader(io.StringIO(response.text)))


def test_the_gradebook_exports(class_app: FastAPI) -> None:
    client = sign_in(class_app)
    rows = _csv(client, "gradebook.csv")
    assert list(rows[0]) == [
        "learner_id",
        "display_name",
        "lesson_id",
        "exercise_id",
        "attempts",
        "submissions",
        "solved",
        "best_score",
        "first_solved_at",
        "last_activity_at",
        "solved_after_solution",
        "hints_shown",
        "solved_after_hints",
    ]
    assert len(rows) == 8  # 4 learners × 2 exercises
    assert {row["display_name"] for row in rows if row["learner_id"] == CY} == {"'" + FORMULA_NAME}
    records = client.get("/instructor/export/gradebook.json").json()
    assert len(records) == 8 and {r["display_name"] for r in records if r["learner_id"] == CY} == {
        FORMULA_NAME
    }


def test_the_lms_export(class_app: FastAPI) -> None:
    rows = _csv(sign_in(class_app), "lms.csv")
    assert list(rows[0]) == [
        "learner_id",
        "display_name",
        "external_id",
        "T1.1 Area and perimeter (out of 2)",
        "total (out of 2)",
    ]
    scores = {
        row["learner_id"]: (
            row["display_name"],
            row["T1.1 Area and perimeter (out of 2)"],
            row["total (out of 2)"],
        )
        for row in rows
    }
    assert scores[DEE] == ("", "1", "1")
    assert scores[CY] == ("'" + FORMULA_NAME, "0", "0")
    assert [row["display_name"] for row in rows] == ["", "'" + FORMULA_NAME, "Ann", "Ben"]
    assert [row["total (out of 2)"] for row in rows] == ["1", "0", "2", "1"]


def test_the_event_export(class_app: FastAPI) -> None:
    rows = _csv(sign_in(class_app), "events.csv")
    assert len(rows) == 14  # 10 answers and 4 programs
    assert list(rows[0])[:7] == [
        "time",
        "learner_id",
        "display_name",
        "lesson_id",
        "exercise_id",
        "event",
        "variant_seed",
    ]
    assert [row["mistake"] for row in rows if row["mistake"]] == ["perimeter", "half_perimeter"]
    assert all(row["time"].endswith("Z") for row in rows)
    programs = [row for row in rows if row["event"] == "program"]
    assert [row["status"] for row in programs] == ["fail", "pass", "error", "fail"]
    assert programs[3]["failed_tests"] == "perimeter of a random rectangle; perimeter with fractional sides"
    assert programs[3]["hints"] == PERIMETER_HINT
    assert {row["display_name"] for row in rows if row["learner_id"] == CY} == {"'" + FORMULA_NAME}
    assert [row["answer"] for row in rows if row["learner_id"] == DEE] == ["999", "90"]
    assert {row["variant_seed"] for row in rows if row["learner_id"] == DEE} == {"5"}


def test_an_unknown_export_is_a_404_with_the_list(class_app: FastAPI) -> None:
    response = sign_in(class_app).get("/instructor/export/grades.xlsx")
    assert response.status_code == 404
    assert "lms.csv" in response.json()["detail"]


def test_learner_text_is_escaped_on_instructor_pages(class_app: FastAPI) -> None:
    store = class_app.state.qkv.store
    store.learners.set_display_name(BEN, "<script>alert(1)</script>")
    store.progress.record_answer(
        BEN, LESSON_ID, "area", "<img src=x onerror=alert(1)>", correct=False, message="No."
    )
    client = sign_in(class_app)
    for url in (
        "/instructor",
        "/instructor/class",
        f"/instructor/lessons/{LESSON_ID}",
        f"/instructor/lessons/{LESSON_ID}/items",
        f"/instructor/learners/{BEN}",
    ):
        page = client.get(url, headers=HTML).text
        assert "<script>alert(1)" not in page and "<img src=x" not in page, url
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt;"
        in client.get(f"/instructor/learners/{BEN}", headers=HTML).text
    )


def test_tests_that_did_not_run_are_not_failures() -> None:
    from datetime import datetime

    from qkv.store.instructor.instructors import CodeEvent
    from qkv.web.instructor.stats import code_exercise_stats

    tests = [
        {"name": "first", "status": "timeout", "function": "f", "hint": None},
        {"name": "second", "status": "not_run", "function": "f", "hint": None},
    ]
    event = CodeEvent(1, BEN, LESSON_ID, "shapes", "", "fail", 0, 2, {"tests": tests}, datetime(2026, 1, 1))
    stats = code_exercise_stats([event])
    assert [(t["name"], t["runs"], t["failed"], t["not_run"]) for t in stats["tests"]] == [
        ("first", 1, 1, 0),
        ("second", 0, 0, 1),
    ]
