"""``qkv serve`` as a real process: it serves, says plainly when bubblewrap is missing, and stops on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from qkv.cli.serve import cgroup_line, serve
from qkv.grading.sandbox.cgroups import CgroupHost, CgroupKind, choose

SERVE = "import sys; from qkv.cli.serve import serve; serve.main(sys.argv[1:], prog_name='qkv serve')"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(
    tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    args = [
        "--port",
        str(port),
        "--database-url",
        f"sqlite:///{tmp_path / 'serve.sqlite3'}",
        "--warm-spares",
        "0",
    ]
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, *args, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"qkv serve exited early:\n{process.communicate()[0]}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"qkv serve did not start:\n{process.communicate()[0]}")


def _stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, output


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_serve_serves_the_lesson_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    process, url = _start(tmp_path)
    try:
        page = httpx.get(url + "/lessons/L4.1")
        assert page.status_code == 200
        assert "Queries, keys and values" in page.text
        assert "secure" not in page.headers["set-cookie"].lower()
        assert httpx.get(url + "/readyz").json()["status"] == "ready"
    finally:
        status, output = _stop(process)
    assert status == 0, output
    assert f"qkv: serving the lesson at {url}/" in output
    # The operator is told which cgroups bound the sandboxes on this host, and why.
    choice = choose()
    assert choice.reason in output
    assert ("qkv: each sandbox gets its own cgroup" in output) == (choice.kind is not CgroupKind.NONE)
    assert "Application shutdown complete." in output


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_without_bubblewrap_serve_says_so_and_still_serves(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    process, url = _start(tmp_path, env={"PATH": str(empty)})
    try:
        assert httpx.get(url + "/lessons/L4.1").status_code == 200
        assert httpx.get(url + "/healthz").json()["grading"] == "grading is off: bubblewrap is missing"
        # Alive for the load balancer, but not ready: /readyz says why in a sentence.
        readiness = httpx.get(url + "/readyz")
        assert readiness.status_code == 503
        assert readiness.json()["checks"]["database"] == "ok"
        assert readiness.json()["reasons"] == [readiness.json()["checks"]["grading"]]
        assert readiness.json()["reasons"][0].startswith("Code cannot be graded on this server. ")
    finally:
        status, output = _stop(process)
    assert status == 0, output
    assert "bubblewrap (bwrap) is not installed, so submitted code cannot be run in the sandbox." in output
    assert "Grading is turned off" in output and "--allow-unsandboxed" in output


def test_a_bad_database_url_is_a_sentence_and_exit_status_1() -> None:
    result = CliRunner().invoke(serve, ["--database-url", "mysql://u:pw@h/db", "--port", "0"])
    assert result.exit_code == 1
    assert "Error: The database URL 'mysql://u:***@h/db' names 'mysql'" in result.output
    assert "Traceback" not in result.output


def test_a_port_in_use_is_a_sentence_and_exit_status_1(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(
            serve, ["--port", str(port), "--database-url", f"sqlite:///{tmp_path / 'x.sqlite3'}"]
        )
    assert result.exit_code == 1
    assert f"Error: Port {port} on 127.0.0.1 is already in use; choose another with --port." in result.output


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_secure_cookies_flag_marks_the_learner_cookie_secure(tmp_path: Path) -> None:
    process, url = _start(tmp_path, "--secure-cookies")
    try:
        cookie = httpx.get(url + "/lessons/L4.1").headers["set-cookie"]
    finally:
        _stop(process)
    assert "; secure" in cookie.lower() and "httponly" in cookie.lower()


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_require_sign_in_flag_makes_the_lesson_ask_to_sign_in(tmp_path: Path) -> None:
    process, url = _start(tmp_path, "--require-sign-in")
    try:
        page = httpx.get(url + "/lessons/L4.1", headers={"accept": "text/html"})
    finally:
        _stop(process)
    assert page.status_code == 401 and "Please sign in" in page.text


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_serve_uses_the_request_head_deadline(tmp_path: Path) -> None:
    from qkv.web.http.protocol import HeadTimeoutH11Protocol

    process, url = _start(tmp_path)
    try:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as stalled:
            stalled.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            assert httpx.get(url + "/healthz").status_code == 200  # others are served meanwhile
            stalled.settimeout(HeadTimeoutH11Protocol.head_timeout_s + 10)
            started = time.monotonic()
            assert stalled.recv(1024) == b""  # closed by the server, without an answer
            assert time.monotonic() - started <= HeadTimeoutH11Protocol.head_timeout_s + 1
    finally:
        _stop(process)


SAMPLE = Path(__file__).parents[1] / "sample_lessons"
RECTANGLES = "def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('negative')\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_serve_grades_a_lesson_that_is_only_a_folder_of_data(tmp_path: Path) -> None:
    # The test chapter under tests/sample_lessons: nothing of qkv knows it, yet it is served and graded.
    process, url = _start(tmp_path, "--content", str(SAMPLE))
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            page = client.get("/lessons/T1.1")
            assert page.status_code == 200 and "Area and perimeter" in page.text
            token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
            assert token, "the page has no csrf-token"
            headers = {"X-CSRF-Token": token.group(1)}
            api = "/api/lessons/T1.1"
            wrong = client.post(
                f"{api}/answers", json={"exercise_id": "area", "answer": "14"}, headers=headers
            )
            assert wrong.json()["feedback"]["message"].startswith("That is the perimeter")
            graded = client.post(
                f"{api}/code",
                json={"exercise_id": "shapes", "code": RECTANGLES.replace("2 * (w + h)", "w + h")},
                headers=headers,
            )
            assert graded.status_code == 200, graded.text
            result = graded.json()["result"]
            assert result["version"] == 3 and result["status"] == "fail"
            assert {test["function"] for test in result["tests"] if test["status"] != "pass"} == {"perimeter"}
            passed = client.post(
                f"{api}/code", json={"exercise_id": "shapes", "code": RECTANGLES}, headers=headers
            ).json()
            assert passed["result"]["status"] == "pass"
            assert passed["progress"]["done"] == 1 and passed["progress"]["total"] == 2
    finally:
        status, output = _stop(process)
    assert status == 0, output


def test_a_host_without_usable_cgroups_is_named_with_its_fallback(tmp_path: Path) -> None:
    nowhere = str(tmp_path / "missing")
    host = CgroupHost(v1_pids=nowhere, v1_memory=nowhere, mountinfo=nowhere)
    line = cgroup_line(host)
    assert line.startswith("qkv: sandboxes get no cgroup of their own here (")
    assert choose(host).reason in line
    assert "bounded per process by rlimits and the seccomp filter only" in line
