"""No parameter a client sends gets a 5xx or a logged traceback, on SQLite and on PostgreSQL.

The routes are read from the app (a route added later is covered without editing this file), with their
path and query parameters; each gets, in each of its parameters in turn, a NUL character, a value far over
any bound, a number too big for any column and bytes that are not UTF-8, as a learner, as a signed-in
instructor and as a stranger. The forms (the routes that read ``application/x-www-form-urlencoded``, from
the OpenAPI document, and the LTI routes) get the same in each of their fields. NUL and over-long values
must be refused with a 4xx and a sentence; nothing may answer 5xx. PostgreSQL refuses NUL in text and
values longer than a column, where SQLite takes them, so the test runs on both.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.backend_fixtures import app_routes, learner_sending_csrf, sign_in_instructor

__all__ = ["postgres_admin_url", "postgres_url"]

FORM = "application/x-www-form-urlencoded"
GOOD_PATH_VALUES = {"lesson_id": "L4.1", "exercise_id": "functions"}
# Routes that read parameters themselves rather than declaring them (the LTI login and launch).
READ_BY_HAND = {
    "/lti/login": [
        "iss",
        "client_id",
        "login_hint",
        "target_link_uri",
        "lti_message_hint",
        "lti_deployment_id",
    ],
    "/lti/launch": ["state", "id_token"],
}


@dataclass(frozen=True)
class BadValue:
    name: str
    quoted: str  # as it is written in a URL or a form body
    refused: bool  # must be refused with a 4xx (else anything but a 5xx will do)


BAD_VALUES = [
    BadValue("a NUL", "a%00b", refused=True),
    BadValue("another control character", "a%1Bb", refused=True),
    BadValue("a value of 5,000 characters", "x" * 5000, refused=True),
    BadValue("a number too big for any column", "9" * 40, refused=False),
    BadValue("bytes that are not UTF-8", "%FF%FEx", refused=False),
    BadValue("3 KB of percent-escapes", quote("é" * 1500), refused=False),
]


@dataclass(frozen=True)
class Route:
    path: str  # with the prefix of its router
    methods: set[str]
    dependant: Any
    form_fields: list[str]  # of a form it reads itself, as its OpenAPI extra says (see qkv.web.http.forms)


def _routes(app: FastAPI) -> list[Route]:
    """Every route of the app with its full path and its parameters (FastAPI before and after 0.165)."""
    routes = []
    for item in app_routes(app):
        route = getattr(item, "route", item)
        if isinstance(route, APIRoute):
            extra = route.openapi_extra or {}
            form = extra.get("requestBody", {}).get("content", {}).get(FORM, {})
            fields = list(form.get("schema", {}).get("properties", {}))
            routes.append(Route(item.path, set(item.methods or ()), route.dependant, fields))
    return routes


@dataclass(frozen=True)
class Probe:
    method: str
    url: str
    where: str
    form: str | None = None  # a form body, for the form fields


def parameter_probes(app: FastAPI, bad: BadValue) -> list[Probe]:
    """A request for every parameter of every route of ``app``, with ``bad`` in that parameter."""
    probes: list[Probe] = []
    for route in _routes(app):
        path_names = _declared(route.dependant, "path_params")
        query_names = _declared(route.dependant, "query_params")
        query_names += [*READ_BY_HAND.get(route.path, []), "unexpected"]
        for method in sorted(route.methods - {"HEAD", "OPTIONS"}):
            for name in path_names:
                url = _fill(route.path, {name: bad.quoted})
                probes.append(Probe(method, url, f"{method} {route.path} path {name!r}"))
            for name in query_names:
                url = _fill(route.path, {}) + f"?{name}={bad.quoted}"
                probes.append(Probe(method, url, f"{method} {route.path} query {name!r}"))
    return probes


def _declared(dependant: Any, kind: str) -> list[str]:
    """The names of the route's parameters of one kind, its dependencies' included."""
    names = [param.alias for param in getattr(dependant, kind)]
    for sub in dependant.dependencies:
        names += _declared(sub, kind)
    return list(dict.fromkeys(names))


def form_probes(app: FastAPI, bad: BadValue) -> list[Probe]:
    """A form for every field of every route that reads a form, with ``bad`` in that field."""
    probes = []
    for route in _routes(app):
        fields = READ_BY_HAND.get(route.path, []) + route.form_fields
        for method in sorted(route.methods & {"POST", "PUT", "PATCH", "DELETE"}):
            for field in dict.fromkeys(fields):
                url = _fill(route.path, {})
                probes.append(
                    Probe(method, url, f"{method} {route.path} form {field!r}", f"{field}={bad.quoted}")
                )
    return probes


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(
        r"\{(\w+)(?::\w+)?\}", lambda m: values.get(m.group(1), GOOD_PATH_VALUES.get(m.group(1), "x")), path
    )


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def roles(request: pytest.FixtureRequest) -> Iterator[tuple[FastAPI, dict[str, TestClient]]]:
    """The app on SQLite or PostgreSQL, and a learner, a signed-in instructor and a stranger."""
    # The database first, so that it is dropped after the app has stopped.
    overrides = {} if request.param == "sqlite" else {"database_url": request.getfixturevalue("postgres_url")}
    make_app: Callable[..., FastAPI] = request.getfixturevalue("make_app")
    app = make_app(**overrides)
    learner = learner_sending_csrf(app)
    instructor = TestClient(app, raise_server_exceptions=False)
    sign_in_instructor(app, instructor)
    stranger = TestClient(app, raise_server_exceptions=False)
    yield app, {"learner": learner, "instructor": instructor, "stranger": stranger}


def _sentence(response: Any) -> str:
    if "text/html" in response.headers.get("content-type", ""):
        found = re.search(r"<p[^>]*>(.*?)</p>", response.text, re.S)
        return found.group(1) if found else ""
    try:
        detail = response.json().get("detail", "")
    except ValueError:
        return ""
    return detail if isinstance(detail, str) else ""


@pytest.mark.parametrize("bad", BAD_VALUES, ids=[bad.name for bad in BAD_VALUES])
def test_every_parameter_of_every_route_gets_a_4xx_sentence_not_a_5xx(
    roles: tuple[FastAPI, dict[str, TestClient]], bad: BadValue, caplog: pytest.LogCaptureFixture
) -> None:
    app, by_role = roles
    probes = parameter_probes(app, bad) + form_probes(app, bad)
    assert any(" path " in probe.where for probe in probes) and any(" form " in p.where for p in probes)
    caplog.set_level(logging.INFO)
    failures = []
    for probe in probes:
        for role, client in by_role.items():
            headers = {"Content-Type": FORM} if probe.form is not None else {}
            response = client.request(
                probe.method, probe.url, content=probe.form, headers=headers, follow_redirects=False
            )
            status, where = response.status_code, f"{probe.where} as {role}"
            if status >= 500 or (bad.refused and not 400 <= status < 500):
                failures.append(f"{where}: {status} {response.text[:200]!r}")
            elif status >= 400 and not re.search(r"\w \w.*\.\)?$", _sentence(response).strip()):
                failures.append(f"{where}: {status} without a sentence: {response.text[:200]!r}")
    assert not failures, f"{len(failures)} of {3 * len(probes)}:\n" + "\n".join(failures[:30])
    tracebacks = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not tracebacks, tracebacks[:5]


def test_the_probes_reach_every_kind_of_parameter(roles: tuple[FastAPI, dict[str, TestClient]]) -> None:
    app, _ = roles
    wheres = {probe.where for probe in parameter_probes(app, BAD_VALUES[0]) + form_probes(app, BAD_VALUES[0])}
    assert "GET /instructor/learners/{learner_id} path 'learner_id'" in wheres
    assert "GET /instructor/learners/{learner_id} query 'page'" in wheres
    assert "GET /lti/login query 'target_link_uri'" in wheres and "POST /lti/launch form 'state'" in wheres
    assert "POST /instructor/sign-in form 'token'" in wheres


@pytest.mark.parametrize(
    ("url", "status", "sentence"),
    [
        ("/instructor/learners/%00", 400, "The path holds the control character U+0000"),
        ("/api/lessons/L4.1/code/jobs/a%00b", 400, "The path holds the control character U+0000"),
        ("/lti/login?iss=a%00b", 400, "The query parameter 'iss' holds the control character U+0000"),
        ("/lti/login?target_link_uri=" + "t" * 5000, 414, "The query parameter 'target_link_uri' has 5,000"),
        ("/lessons/" + "L" * 300, 414, "A part of the path has 300 characters"),
    ],
)
def test_the_red_team_s_parameters_get_their_sentences(
    roles: tuple[FastAPI, dict[str, TestClient]], url: str, status: int, sentence: str
) -> None:
    _, by_role = roles
    response = by_role["instructor"].get(url)
    assert response.status_code == status and sentence in response.json()["detail"]
