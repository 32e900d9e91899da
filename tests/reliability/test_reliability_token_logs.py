"""No usable one-time token in the server's own log, read from a real ``qkv serve`` with its access log on.

Links are made the way an instructor makes them (``qkv instructor add``, ``qkv learners link``, the
"Sign in on another device" button), previewed as a mail scanner or a chat preview would (a plain GET of
the link, and of a link of the old form with the token in the query), then used. The log must hold the
requests (the access log is on) but not a token, nor any 8 characters of one; and the previews must
have used nothing.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from pathlib import Path

import httpx

from qkv.store import Store
from tests.reliability.reliability_support import REPO, Server

_LINK = re.compile(r"(https?://\S+#token=([A-Za-z0-9_-]{43}))")


def _qkv(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "qkv", *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _link_in(text: str) -> tuple[str, str]:
    found = _LINK.search(text)
    assert found is not None, text
    return found.group(1), found.group(2)


def _preview(url: str) -> None:
    """What a mail scanner or a chat preview does: GET the link (httpx, like a browser, never sends the
    fragment) and read the page, which must not hold the token either."""
    page = httpx.get(url, timeout=30, follow_redirects=True)
    assert page.status_code == 200
    token = url.split("token=", 1)[1]
    assert token not in page.text


def _csrf(client: httpx.Client) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text)
    assert found is not None
    return found.group(1)


def _assert_no_token_in(log: str, tokens: list[str]) -> None:
    for token in tokens:
        prefixes = {token[start : start + 8] for start in range(len(token) - 7)}
        leaked = sorted(piece for piece in prefixes if piece in log)
        assert not leaked, f"the log holds pieces of a token: {leaked}\n{log[-3000:]}"


def test_previewed_and_used_links_leave_no_token_in_the_access_log(
    start_server: type[Server], sqlite_url: str
) -> None:
    store = Store(sqlite_url)
    try:
        store.accounts.find_or_create(None, "s-1001", "Ada Lovelace")
        old_form = store.accounts.new_sign_in_token(store.accounts.find_or_create(None, "s-1002", "Grace"))
    finally:
        store.close()
    server = start_server(sqlite_url).start()
    instructor_link, instructor_token = _link_in(
        _qkv("instructor", "add", "Grace Hopper", "--database-url", sqlite_url, "--url", server.url)
    )
    learner_link, learner_token = _link_in(
        _qkv("learners", "link", "s-1001", "--database-url", sqlite_url, "--url", server.url)
    )
    assert instructor_link.startswith(f"{server.url}/instructor/sign-in#token=")
    assert learner_link.startswith(f"{server.url}/sign-in#token=")
    for url in (instructor_link, learner_link, f"{server.url}/sign-in?token={old_form}"):
        _preview(url)

    with httpx.Client(base_url=server.url, timeout=30) as teacher:
        signed_in = teacher.post("/instructor/sign-in", data={"token": instructor_token})
        assert (
            signed_in.status_code == 303 and "qkv_instructor" in teacher.cookies
        )  # the preview used nothing
    with httpx.Client(base_url=server.url, timeout=30) as ada:
        checked = ada.post("/sign-in/check", data={"token": learner_token})
        assert "Sign in as Ada Lovelace (s-1001)?" in checked.text
        assert ada.post("/sign-in", data={"token": learner_token}).status_code == 200
        made = ada.post("/account/devices", data={"csrf_token": _csrf(ada)})
        device_link, device_token = _link_in(made.text.replace('">', " "))
    _preview(device_link)
    with httpx.Client(base_url=server.url, timeout=30) as phone:
        assert phone.post("/sign-in", data={"token": device_token}).status_code == 200
    with httpx.Client(base_url=server.url, timeout=30) as grace:
        assert grace.post("/sign-in", data={"token": old_form}).status_code == 200

    assert server.terminate() == 0  # the log is complete once the server has stopped
    log = Path(server.log_path).read_text(errors="replace")
    assert '"GET /sign-in HTTP/1.1" 200' in log and '"POST /sign-in HTTP/1.1" 200' in log  # it is on
    assert '"GET /sign-in?token=[redacted] HTTP/1.1" 303' in log
    _assert_no_token_in(log, [instructor_token, learner_token, device_token, old_form])


def test_a_registration_link_leaves_no_token_in_the_access_log(
    start_server: type[Server], sqlite_url: str
) -> None:
    server = start_server(sqlite_url).start()
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "qkv",
            "lti",
            "registration-link",
            "--url",
            server.url,
            "--database-url",
            sqlite_url,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip()
    token, lms_token = link.rsplit("/", 1)[-1], secrets.token_urlsafe(24)
    assert httpx.get(link, timeout=30).status_code == 400  # pasted into a browser: no configuration named
    opened = httpx.get(
        link,
        params={"openid_configuration": "http://127.0.0.1:9/openid", "registration_token": lms_token},
        timeout=30,
    )
    assert opened.status_code == 502  # a loopback LMS, refused without --allow-private-lms
    httpx.get(f"{link}/", timeout=30)  # a trailing slash hides nothing either
    assert server.terminate() == 0
    log = Path(server.log_path).read_text(errors="replace")
    assert '"GET /lti/register/[redacted] HTTP/1.1" 400' in log  # the access log is on
    assert "registration_token=[redacted]" in log and "not a public address" in log
    _assert_no_token_in(log, [token, lms_token])
