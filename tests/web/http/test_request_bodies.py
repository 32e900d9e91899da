"""No body a client sends gets a 5xx or a logged traceback: every route that takes a body, every bad body.

The routes are read from the app, so a route added later is covered without editing this file. Each bad
body goes to each route three times: as a learner (cookie and CSRF token, so JSON bodies reach the
handlers), as a signed-in instructor without a CSRF header (so forms reach the form parser), and as a
stranger with no cookie at all.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.web.backend_fixtures import app_routes, learner_sending_csrf, sign_in_instructor

FORM = "application/x-www-form-urlencoded"
WITH_BODY = {"POST", "PUT", "PATCH", "DELETE"}
PATH_VALUES = {"lesson_id": "L4.1", "exercise_id": "functions"}
KNOWN_FORM_ROUTES = {("POST", "/instructor/sign-in"), ("POST", "/instructor/sign-out")}


@dataclass(frozen=True)
class Bad:
    name: str
    content_type: str | None
    body: bytes


def _multipart(parts: list[tuple[str, str | None]], boundary: str = "qkvboundary") -> bytes:
    chunks = []
    for name, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        chunks.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\nx\r\n")
    return ("".join(chunks) + f"--{boundary}--\r\n").encode()


BAD_BODIES = [
    Bad("nine form fields", FORM, b"&".join(f"f{i}=1".encode() for i in range(9))),
    Bad("a thousand form fields", FORM, b"&".join(b"token=1" for _ in range(1000))),
    Bad("a form that is not UTF-8", FORM, b"token=\xff\xfe"),
    Bad("a bad percent-escape", FORM, b"token=%zz"),
    Bad("a percent-escape that is not UTF-8", FORM, b"token=%ff%fe"),
    Bad("a NUL in a form field", FORM, b"token=a%00b"),
    Bad("a form in another charset", FORM + "; charset=latin-1", b"token=\xe9"),
    Bad("multipart without a boundary", "multipart/form-data", _multipart([("token", None)])),
    Bad(
        "multipart with many files",
        "multipart/form-data; boundary=qkvboundary",
        _multipart([(f"file{i}", f"f{i}.txt") for i in range(40)]),
    ),
    Bad(
        "multipart with many fields",
        "multipart/form-data; boundary=qkvboundary",
        _multipart([(f"field{i}", None) for i in range(40)]),
    ),
    Bad("multipart cut short", "multipart/form-data; boundary=qkvboundary", b"--qkvboundary\r\nContent-Dis"),
    Bad("text/plain", "text/plain", b"token=abc"),
    Bad("JSON", "application/json", b'{"token": "abc", "exercise_id": "q"}'),
    Bad("a form to a JSON route", FORM, b"exercise_id=q&answer=1&code=x"),
    Bad("JSON that does not parse", "application/json", b'{"token": '),
    Bad("bytes with no Content-Type", None, b"\x00\x01\xfe"),
    Bad("octet-stream", "application/octet-stream", b"\x00" * 64),
    Bad("a Content-Type that is not one", "this is not a type", b"token=abc"),
]


def body_routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path) of the app that takes a body, with its path parameters filled in."""
    found = []
    for route in app_routes(app):
        methods = getattr(route, "methods", None)  # a Mount (the static files) has none, and takes no body
        if not methods:
            continue
        path = re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: PATH_VALUES.get(m.group(1), "x"), route.path)
        found += [(method, path) for method in sorted(set(methods) & WITH_BODY)]
    return found


@pytest.fixture
def clients(
    make_app: Callable[..., FastAPI],
) -> Iterator[tuple[list[tuple[str, str]], dict[str, TestClient]]]:
    app = make_app()
    learner = learner_sending_csrf(app)
    instructor = TestClient(app, raise_server_exceptions=False)
    instructor.get("/lessons/L4.1")  # a learner cookie too: the instructor routes must not care
    sign_in_instructor(app, instructor)
    stranger = TestClient(app, raise_server_exceptions=False)
    yield body_routes(app), {"learner": learner, "instructor": instructor, "stranger": stranger}


def test_the_routes_are_read_from_the_app(
    clients: tuple[list[tuple[str, str]], dict[str, TestClient]],
) -> None:
    routes, _ = clients
    assert set(routes) >= KNOWN_FORM_ROUTES
    assert ("POST", "/api/lessons/L4.1/answers") in routes and ("PUT", "/api/lessons/L4.1/draft") in routes


@pytest.mark.parametrize("bad", BAD_BODIES, ids=[bad.name for bad in BAD_BODIES])
def test_a_bad_body_gets_a_4xx_sentence_on_every_route_and_logs_no_traceback(
    clients: tuple[list[tuple[str, str]], dict[str, TestClient]], bad: Bad, caplog: pytest.LogCaptureFixture
) -> None:
    routes, by_role = clients
    headers = {} if bad.content_type is None else {"Content-Type": bad.content_type}
    caplog.set_level(logging.INFO)
    answered = 0
    for method, path in routes:
        for role, client in by_role.items():
            response = client.request(method, path, content=bad.body, headers=headers, follow_redirects=False)
            where = f"{bad.name} as {role}: {method} {path} -> {response.status_code} {response.text[:300]!r}"
            assert 400 <= response.status_code < 500, where
            detail = response.json()["detail"]
            assert (
                isinstance(detail, str)
                and detail.rstrip(")").endswith(".")
                and " " in detail
                and len(detail) > 20
            ), where
            answered += 1
    assert answered == 3 * len(routes)
    tracebacks = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not tracebacks, [r.getMessage() for r in tracebacks]


def test_the_nine_field_sign_in_of_the_red_team_is_a_400_that_says_why(
    clients: tuple[list[tuple[str, str]], dict[str, TestClient]],
) -> None:
    _, by_role = clients
    nine = {f"f{i}": "1" for i in range(9)}
    response = by_role["stranger"].post("/instructor/sign-in", data=nine)
    assert response.status_code == 400
    assert response.json()["detail"] == "The form has 9 fields; this one takes at most 8."


@pytest.mark.parametrize(
    ("content_type", "body", "sentence"),
    [
        (FORM, b"token=%zz", "The form field 'token' has a bad percent-escape ('%zz')"),
        (FORM, b"token=\xff", "The form is not valid UTF-8 (byte 0xff at position 6)."),
        (FORM, b"token=%ff", "The form field 'token' decodes to bytes that are not UTF-8 (byte 0xff)"),
        ("text/plain", b"token=x", "not 'text/plain'"),
        ("multipart/form-data", b"--x", "not 'multipart/form-data'; it takes no files."),
        (FORM + "; charset=latin-1", b"token=x", "not as the charset 'latin-1'."),
    ],
)
def test_the_sign_in_form_names_what_is_wrong(
    clients: tuple[list[tuple[str, str]], dict[str, TestClient]],
    content_type: str,
    body: bytes,
    sentence: str,
) -> None:
    _, by_role = clients
    response = by_role["stranger"].post(
        "/instructor/sign-in", content=body, headers={"Content-Type": content_type}
    )
    assert response.status_code in {400, 415}
    assert sentence in response.json()["detail"]


def test_an_html_client_gets_the_error_page_with_the_sentence(
    clients: tuple[list[tuple[str, str]], dict[str, TestClient]],
) -> None:
    _, by_role = clients
    nine = "&".join(f"f{i}=1" for i in range(9))
    response = by_role["stranger"].post(
        "/instructor/sign-in", content=nine, headers={"Content-Type": FORM, "Accept": "text/html"}
    )
    assert response.status_code == 400 and "text/html" in response.headers["content-type"]
    assert "The form has 9 fields; this one takes at most 8." in response.text
