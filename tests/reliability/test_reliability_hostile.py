"""Hostile input against a real ``qkv serve``: huge bodies, broken bytes, deep nesting and slow clients."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.reliability.reliability_support import Server
from tests.time_scale import scaled

LESSON_API = "/api/lessons/L4.1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp("hostile")
    running = Server(f"sqlite:///{workdir / 'qkv.sqlite3'}", workdir).start()
    yield running
    running.kill()


@pytest.fixture(scope="module")
def learner(server: Server) -> Iterator[tuple[httpx.Client, str, str]]:
    """A client with a learner cookie, its CSRF token and the code exercise's id."""
    client = httpx.Client(base_url=server.url, timeout=scaled(30))
    index = client.get("/")
    link = re.search(r'href="(/[^"]*L4\.1[^"]*)"', index.text)
    page = client.get(link.group(1) if link else "/lessons/L4.1")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    code_id = re.search(r'class="code-exercise" data-exercise-id="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    yield client, token, code_id
    client.close()


def post_raw(learner: tuple[httpx.Client, str, str], path: str, content: bytes) -> httpx.Response:
    client, token, _ = learner
    headers = {"X-CSRF-Token": token, "Content-Type": "application/json"}
    return client.post(path, content=content, headers=headers)


def detail_of(response: httpx.Response) -> str:
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("detail"), str), body
    return str(body["detail"])


@pytest.mark.timeout(60)
def test_a_program_over_64_kib_is_refused_with_413(learner: tuple[httpx.Client, str, str]) -> None:
    code = "x = 1\n" * (64 * 1024 // 6 + 10)
    body = httpx.Request("POST", "/", json={"exercise_id": learner[2], "code": code}).content
    response = post_raw(learner, f"{LESSON_API}/code", body)
    assert response.status_code == 413
    assert (
        detail_of(response) == "The code is 65,592 bytes; the grader accepts at most 65,536 bytes (64 KiB)."
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", [f"{LESSON_API}/answers", "/api/project", "/api/attention", "/api/learner"])
def test_a_body_of_several_mebibytes_is_refused_with_413(
    learner: tuple[httpx.Client, str, str], path: str
) -> None:
    body = b'{"answer": "' + b"9" * (4 * 1024 * 1024) + b'"}'
    response = post_raw(learner, path, body)
    assert response.status_code == 413
    assert detail_of(response) == (
        "The request body is 4,194,318 bytes; this server accepts at most 131,072 bytes (128 KiB)."
    )


@pytest.mark.timeout(60)
def test_a_chunked_body_without_a_length_is_cut_off_at_the_limit(
    learner: tuple[httpx.Client, str, str],
) -> None:
    client, token, _ = learner

    def chunks() -> Iterator[bytes]:
        yield b'{"answer": "'
        for _ in range(64):  # 4 MiB in 64 KiB pieces, with no Content-Length announced
            yield b"9" * 65536

    headers = {"X-CSRF-Token": token, "Content-Type": "application/json"}
    response = client.post(f"{LESSON_API}/answers", content=chunks(), headers=headers)
    assert response.status_code == 413
    assert detail_of(response) == (
        "The request body is more than 131,072 bytes; this server accepts at most 131,072 bytes (128 KiB)."
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", [f"{LESSON_API}/answers", "/api/project", "/api/learner"])
def test_invalid_utf8_is_a_client_error(learner: tuple[httpx.Client, str, str], path: str) -> None:
    body = b'{"exercise_id": "\xff\xfe", "answer": "\xc3\x28", "display_name": "\xed\xa0\x80"}'
    response = post_raw(learner, path, body)
    assert response.status_code == 400
    assert detail_of(response) == "The request body is not valid UTF-8 (byte 0xff at position 17)."


@pytest.mark.timeout(60)
@pytest.mark.parametrize("path", [f"{LESSON_API}/answers", "/api/attention", f"{LESSON_API}/code"])
def test_deeply_nested_json_is_a_client_error(learner: tuple[httpx.Client, str, str], path: str) -> None:
    depth = 20_000  # far past Python's recursion limit, well under the body size limit
    body = b'{"answer": ' + b"[" * depth + b"]" * depth + b"}"
    response = post_raw(learner, path, body)
    assert response.status_code == 400
    assert detail_of(response) == "The request body's JSON is nested too deeply."


@pytest.mark.timeout(60)
def test_a_client_stalled_in_its_headers_does_not_block_others(server: Server) -> None:
    request = (
        f"POST {LESSON_API}/answers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 40\r\n"
    ).encode()
    stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=scaled(5)) for _ in range(20)]
    try:
        for byte in request[:60]:  # headers dribble in on twenty connections, then nothing more
            for sock in stalled:
                sock.send(bytes([byte]))
            time.sleep(0.005)
        # Meanwhile everyone else is served as usual, pages and API alike (a blocked server would make
        # these requests run into the client's timeout and raise).
        with httpx.Client(base_url=server.url, timeout=scaled(10)) as other:
            for _ in range(5):
                assert other.get("/").status_code == 200
                assert other.get(f"{LESSON_API}/progress").status_code == 200
    finally:
        for sock in stalled:
            sock.close()


@pytest.mark.timeout(60)
def test_a_client_that_stalls_mid_body_gets_408(
    server: Server, learner: tuple[httpx.Client, str, str]
) -> None:
    _, token, _ = learner
    cookie = "; ".join(f"{name}={value}" for name, value in learner[0].cookies.items())
    head = (
        f"POST {LESSON_API}/answers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: 100\r\nX-CSRF-Token: {token}\r\nCookie: {cookie}\r\n\r\n"
        '{"exercise_id": '
    ).encode()
    slow = socket.create_connection(("127.0.0.1", server.port), timeout=scaled(45))
    try:
        slow.sendall(head)
        received = b""
        try:
            while chunk := slow.recv(4096):
                received += chunk
        except ConnectionResetError:
            pass
        assert received.startswith(b"HTTP/1.1 408"), received[:300]
        assert b'{"detail":"The request body took longer than 10 s to arrive."}' in received, received[:300]
    finally:
        slow.close()


def test_the_nine_field_sign_in_is_a_400_and_logs_no_traceback(server: Server) -> None:
    nine = "&".join(f"f{i}=1" for i in range(9))
    logged_before = server.log_path.stat().st_size
    with httpx.Client(base_url=server.url, timeout=scaled(30)) as stranger:
        answers = [
            stranger.post(
                "/instructor/sign-in",
                content=nine,
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            for _ in range(20)
        ]
    assert {response.status_code for response in answers} == {400}
    assert detail_of(answers[0]) == "The form has 9 fields; this one takes at most 8."
    with open(server.log_path, "rb") as log_file:  # only what this test's requests logged
        log_file.seek(logged_before)
        log = log_file.read().decode(errors="replace")
    assert "Traceback" not in log and "ERROR" not in log, log


def test_cookieless_requests_from_one_address_do_not_lock_its_next_visitor_out(server: Server) -> None:
    for _ in range(210):  # more than the address's whole share of new learners (200)
        with httpx.Client(base_url=server.url, timeout=scaled(30)) as passer_by:
            assert passer_by.get("/").status_code == 200
    with httpx.Client(base_url=server.url, timeout=scaled(30)) as visitor:
        assert visitor.get("/").status_code == 200
        page = visitor.get("/lessons/L4.1")
        assert page.status_code == 200
        token = re.search(r'<meta name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None
        saved = visitor.post(
            f"{LESSON_API}/answers",
            json={"exercise_id": "q", "answer": "3, 2"},
            headers={"X-CSRF-Token": token.group(1)},
        )
    assert saved.status_code == 200, saved.text


def test_a_redirect_never_names_the_host_the_client_sent(server: Server) -> None:
    response = httpx.get(server.url + "/instructor/", headers={"Host": "evil.example"}, timeout=scaled(30))
    assert response.status_code in {307, 308}
    assert response.headers["location"] == "/instructor"
