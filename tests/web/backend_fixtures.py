"""Shared fixtures of the back-end web tests: the real app (real store, lessons and grader) in-process.

Each test gets its own SQLite file. ``Browser`` is one learner: a TestClient with its own cookie
jar that opens a lesson's page first, as a browser would, to get the cookie and CSRF token. Any lesson of
the catalog works (``Browser(app, lesson_id)``); ``LESSON`` and the two solutions are those of the tests
about one code exercise. The app serves ``tests.lesson_contract.catalog()`` (the built-in lessons, or the
content ``QKV_TEST_CONTENT`` names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests import lesson_contract as contract

SECRET = "test-secret-key-for-the-web-tests"
LESSON = "L4.1"
LESSON_URL = f"/lessons/{LESSON}"
API = f"/api/lessons/{LESSON}"

CORRECT_SOLUTION = """import numpy as np

def project_qkv(X, Wq, Wk, Wv):
    X, Wq, Wk, Wv = (np.asarray(a) for a in (X, Wq, Wk, Wv))
    d_model = X.shape[1]
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        if W.ndim != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} needs {d_model} rows")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    return X @ Wq, X @ Wk, X @ Wv

def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}

def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)

def param_count(d_model, d_k, d_v):
    return d_model * (2 * d_k + d_v)
"""
WRONG_SOLUTION = CORRECT_SOLUTION.replace("return (n_q, d_v)", "return (n_k, d_v)")


def retyped_solution() -> str:
    """L4.1's reference solution as someone who copied it might send it: its locals renamed, a docstring
    added, the comments gone and the layout changed."""
    from qkv.lessons import load_catalog

    solution = load_catalog().lesson(LESSON).exercises["functions"].solution
    assert solution is not None
    head, rest = solution.split("def qkv_shapes", 1)
    for old, new in (
        ("d_model = X", "columns = X"),
        ("!= d_model", "!= columns"),
        ("{d_model}", "{columns}"),
    ):
        head = head.replace(old, new)
    head = head.replace("name, W", "label, W").replace("{name}", "{label}")
    head = head.replace(
        "def project_qkv(X, Wq, Wk, Wv):\n", 'def project_qkv(X, Wq, Wk, Wv):\n    """Mine."""\n'
    )
    retyped = (head + "def qkv_shapes" + rest).replace("  # (n, d_k), (n, d_k), (n, d_v)", "")
    return retyped.replace("\n\n\n", "\n\n").replace("return (n_q, d_v)", "return (n_q,d_v)  # shape")


def lesson_api(lesson_id: str) -> str:
    """The path prefix of a lesson's API."""
    return f"/api/lessons/{lesson_id}"


class Browser:
    """One learner's browser: cookies persist across requests; ``token`` comes from the page."""

    def __init__(self, app: FastAPI, lesson_id: str = LESSON) -> None:
        self.client = TestClient(app)
        self.token = ""
        self.url = f"/lessons/{lesson_id}"
        self.api = lesson_api(lesson_id)

    def open_lesson(self) -> Browser:
        page = self.client.get(self.url, headers={"accept": "text/html"})
        assert page.status_code == 200, page.text
        found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert found, "the lesson page has no csrf-token meta tag"
        self.token = found.group(1)
        return self

    def page_progress(self) -> dict[str, Any]:
        """The PROGRESS document embedded in the lesson page."""
        page = self.client.get(self.url, headers={"accept": "text/html"})
        found = re.search(
            r'<script type="application/json" id="progress-data">(.*?)</script>', page.text, re.S
        )
        assert found, "the lesson page embeds no progress-data"
        data: dict[str, Any] = json.loads(found.group(1))
        return data

    def post(self, path: str, body: Any, **kwargs: Any) -> Any:
        headers = {"X-CSRF-Token": self.token, **kwargs.pop("headers", {})}
        return self.client.post(path, json=body, headers=headers, **kwargs)

    def answer(self, exercise_id: str, answer: str) -> Any:
        return self.post(f"{self.api}/answers", {"exercise_id": exercise_id, "answer": answer})

    def submit_code(self, code: str, exercise_id: str = "functions") -> Any:
        return self.post(f"{self.api}/code", {"exercise_id": exercise_id, "code": code})

    def progress(self) -> dict[str, Any]:
        response = self.client.get(f"{self.api}/progress")
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., FastAPI]]:
    """``make_app(**settings)``: a started app on a fresh SQLite file; stopped after the test."""
    started: list[TestClient] = []

    def make(**overrides: Any) -> FastAPI:
        options: dict[str, Any] = {
            "database_url": f"sqlite:///{tmp_path / 'web.sqlite3'}",
            "secret_key": SECRET,
            "warm_spares": 0,
        }
        options.update(overrides)
        app = create_app(Settings(**options), catalog=contract.catalog() if contract.CONTENT else None)
        runner = TestClient(app)
        runner.__enter__()  # runs the lifespan: starts the grader
        started.append(runner)
        return app

    yield make
    for runner in started:
        runner.__exit__(None, None, None)


@pytest.fixture
def app(make_app: Callable[..., FastAPI]) -> FastAPI:
    return make_app()


@pytest.fixture
def browser(app: FastAPI) -> Browser:
    return Browser(app).open_lesson()


def app_routes(app: FastAPI) -> list[Any]:
    """Every route of the app, those of included routers too, each with its full ``path`` and ``methods``.

    Before FastAPI 0.165 ``app.routes`` lists every route of the included routers; since then an included
    router is one entry that holds its routes, and ``iter_route_contexts`` walks them (each context's
    ``route``, or ``original_route``, is the route as it was declared).
    """
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:
        return list(app.routes)
    return list(iter_route_contexts(app.routes))


def learner_sending_csrf(app: FastAPI, lesson_id: str = LESSON) -> TestClient:
    """A learner's TestClient (a server error comes back as a 500, not raised) that has opened a lesson's
    page and sends its CSRF token with every request."""
    client = TestClient(app, raise_server_exceptions=False)
    page = client.get(f"/lessons/{lesson_id}")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert token, page.text[:300]
    client.headers["X-CSRF-Token"] = token.group(1)
    return client


def sign_in_instructor(app: FastAPI, client: TestClient, token: str | None = None) -> None:
    """Sign ``client`` in through an instructor's one-time link: ``token``'s, or a new instructor Grace's."""
    if token is None:
        _, token = app.state.qkv.store.instructors.add("Grace")
    response = client.post("/instructor/sign-in", data={"token": token}, follow_redirects=False)
    assert response.status_code == 303, response.text


def instructor_csrf(client: TestClient) -> str:
    """The CSRF token the signed-in instructor's page puts in its forms ("" when the page has none)."""
    page = client.get("/instructor", headers={"accept": "text/html"})
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    return found.group(1) if found else ""


def learner_id_of(browser: Browser) -> str:
    """The learner id in a browser's signed cookie (what the server reads)."""
    from itsdangerous import URLSafeSerializer

    cookie = browser.client.cookies.get("qkv_learner")
    assert cookie, "this browser has no learner cookie yet"
    return str(URLSafeSerializer(SECRET, salt="qkv.learner").loads(cookie))
