"""Security headers on every response, and bad bodies refused before parsing (size, encoding, JSON, speed)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi import FastAPI

from qkv.web.http.security import CONTENT_SECURITY_POLICY
from tests.web.backend_fixtures import API, LESSON_URL, SECRET, Browser


def _assert_security_headers(headers: object) -> None:
    get = headers.get  # type: ignore[attr-defined]
    csp = get("content-security-policy")
    assert csp == CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert get("x-content-type-options") == "nosniff"
    assert get("x-frame-options") == "DENY"
    assert get("referrer-policy") == "same-origin"


def test_security_headers_are_on_pages_api_errors_and_static_files(browser: Browser) -> None:
    responses = [
        browser.client.get(LESSON_URL),
        browser.client.get("/"),
        browser.client.get(f"{API}/progress"),
        browser.client.get("/api/nothing"),
        browser.client.get("/static/lesson.css"),
        browser.client.get("/docs"),
        browser.post(f"{API}/answers", {"exercise_id": "q", "answer": "1" * 200_000}),
    ]
    for response in responses:
        _assert_security_headers(response.headers)


def test_the_lesson_page_has_no_inline_scripts(browser: Browser) -> None:
    import re

    page = browser.client.get(LESSON_URL).text
    for tag in re.findall(r"<script\b[^>]*>", page):
        assert 'src="/static/' in tag or 'type="application/json"' in tag, tag
    assert " onclick=" not in page and "javascript:" not in page


def test_a_declared_oversized_body_gets_413_before_it_is_read(browser: Browser) -> None:
    response = browser.client.post(
        f"{API}/answers",
        content=b"{}" + b" " * (128 * 1024),
        headers={"X-CSRF-Token": browser.token, "content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json() == {
        "detail": "The request body is 131,074 bytes; this server accepts at most 131,072 bytes (128 KiB)."
    }


def test_a_streamed_oversized_body_gets_413(browser: Browser) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b" " * 4096

    response = browser.client.post(
        f"{API}/answers",
        content=chunks(),
        headers={"X-CSRF-Token": browser.token, "content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["detail"].startswith("The request body is more than 131,072 bytes")


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        (
            b'{"exercise_id": "q", "answer": "\xff"}',
            "The request body is not valid UTF-8 (byte 0xff at position 32).",
        ),
        (
            b'{"exercise_id": "q", ',
            "The request body is not valid JSON: Expecting property name enclosed in double "
            "quotes at line 1, column 22.",
        ),
        (
            b'{"exercise_id": "q", "answer": Infinity}',
            "The request body contains Infinity; numbers must be finite.",
        ),
        (b"[" * 60_000 + b"]" * 60_000, "The request body's JSON is nested too deeply."),
    ],
    ids=["invalid-utf8", "truncated-json", "infinity", "deeply-nested"],
)
def test_undecodable_bodies_get_400_with_a_sentence(browser: Browser, body: bytes, sentence: str) -> None:
    response = browser.client.post(
        f"{API}/answers",
        content=body,
        headers={"X-CSRF-Token": browser.token, "content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json() == {"detail": sentence}


def test_json_responses_never_hold_nan(browser: Browser) -> None:
    response = browser.client.post(
        "/api/project",
        json={
            "x": [1e308, -1e308],
            "Wq": [[1e308, 0], [1e308, 1]],
            "Wk": [[1, 0], [0, 1]],
            "Wv": [[1, 0], [0, 1]],
        },
    )
    assert response.status_code == 200
    for word in ("NaN", "Infinity"):
        assert word not in response.text


# -- against a real uvicorn server: a client that sends its body too slowly -----------------------


@pytest.fixture
def live_server(make_app: object) -> Iterator[tuple[str, int]]:
    import uvicorn

    app: FastAPI = make_app(body_timeout_s=1.0)  # type: ignore[operator]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield "127.0.0.1", port
    server.should_exit = True
    thread.join(20)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_client_that_trickles_its_body_gets_408(live_server: tuple[str, int]) -> None:
    host, port = live_server
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(
            f"POST {API}/answers HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\n\r\n{".encode()
        )
        started = time.monotonic()
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.endswith(b"}"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            reply += chunk
        waited = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408 ")
    assert b'{"detail":"The request body took longer than 1 s to arrive."}' in reply
    assert 0.9 <= waited < 10
    assert SECRET  # the server under test is the one configured by the shared fixtures


@pytest.mark.parametrize("header", ["content-type", "content-length"])
def test_two_framing_headers_are_refused_before_anything_reads_the_body(
    browser: Browser, header: str
) -> None:
    body = b'{"exercise_id": "q", "answer": "\\u0000"}'
    headers = [("X-CSRF-Token", browser.token), ("content-type", "application/json")]
    headers += (
        [("content-type", "text/plain")]
        if header == "content-type"
        else [
            ("content-length", str(len(body))),
            ("content-length", str(len(body))),
        ]
    )
    response = browser.client.post(f"{API}/answers", content=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["detail"] == f"The request has 2 {header.title()} headers; send exactly one."
    assert browser.progress()["exercises"]["q"]["attempts"] == 0


def test_a_body_without_content_type_is_checked_like_json(browser: Browser) -> None:
    body = b'{"exercise_id": "q", "answer": "3\\u0000"}'
    response = browser.client.post(f"{API}/answers", content=body, headers={"X-CSRF-Token": browser.token})
    assert response.status_code == 400
    assert "NUL character" in response.json()["detail"]
    assert browser.progress()["exercises"]["q"]["attempts"] == 0
