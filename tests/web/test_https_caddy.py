"""HTTPS in front, as docs/operations.md sets it up: the real Caddy (Debian's ``caddy``), with that page's
Caddyfile, terminates TLS with its internal CA on loopback and proxies to ``qkv serve --forwarded-allow-ips
127.0.0.1 --secure-cookies``.

Through Caddy, a learner's page sets its cookie ``Secure``, the cookie carries the learner's next answer,
and an LTI login initiation sets its state cookie ``Secure`` and names the launch URL at the HTTPS address
learners use: from ``--public-url`` when it is given, else from the Host and ``X-Forwarded-Proto`` Caddy
passes on, which qkv honours only because ``--forwarded-allow-ips`` trusts loopback.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.reliability.reliability_support import REPO, Server, free_port
from tests.time_scale import scaled, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ISSUER = "https://lms.school.example"
DOC = REPO / "docs" / "operations.md"
# Test-only global options: no admin endpoint, no CA installed in the system's trust store, and no port 80.
GLOBAL_OPTIONS = "{\n    admin off\n    skip_install_trust\n    auto_https disable_redirects\n}\n"


def documented_caddyfile() -> str:
    """The Caddyfile of docs/operations.md's "A school's server in 15 minutes" (the block of its step 5)."""
    step = DOC.read_text().split("5. **HTTPS**", 1)[1]
    block = re.search(r"```\n(.*?)```", step, re.S)
    assert block is not None, "docs/operations.md's step 5 has no Caddyfile"
    return block.group(1)


def caddyfile(https_port: int, qkv_port: int) -> str:
    """The documented Caddyfile, on loopback with Caddy's internal CA instead of the public name's."""
    site = documented_caddyfile()
    assert site.startswith("qkv.school.example {\n") and "reverse_proxy 127.0.0.1:8001" in site, site
    site = site.replace("reverse_proxy 127.0.0.1:8001", f"reverse_proxy 127.0.0.1:{qkv_port}")
    local = f"https://127.0.0.1:{https_port} {{\n    bind 127.0.0.1\n    tls internal\n"
    return GLOBAL_OPTIONS + site.replace("qkv.school.example {\n", local, 1)


@pytest.fixture
def caddy_home(tmp_path: Path) -> Path:
    """A folder for Caddy's data (its internal CA among it), once Caddy is known to be installed."""
    if shutil.which("caddy") is None:
        pytest.skip("Caddy is not installed (apt-get install caddy; scripts/setup-system.sh --test)")
    return tmp_path / "caddy"


def _add_platform(database_url: str) -> None:
    """Register an LMS, so that /lti/login answers a login initiation with its state cookie."""
    urls = [f"--{kind}-url={ISSUER}/{kind}" for kind in ("auth", "token", "jwks")]
    command = ["lti", "add-platform", f"--issuer={ISSUER}", "--client-id=qkv-tool", "--deployment-id=1"]
    added = subprocess.run(
        [sys.executable, "-m", "qkv", *command, *urls, f"--database-url={database_url}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert added.returncode == 0, added.stderr


@pytest.fixture(params=["public-url", "forwarded"])
def behind_caddy(request: pytest.FixtureRequest, caddy_home: Path, tmp_path: Path) -> Iterator[str]:
    """The HTTPS address of Caddy in front of a running ``qkv serve`` (with ``--public-url`` or without)."""
    https_port = free_port()
    address = f"https://127.0.0.1:{https_port}"
    database_url = f"sqlite:///{tmp_path / 'qkv.sqlite3'}"
    _add_platform(database_url)
    options = ["--forwarded-allow-ips", "127.0.0.1", "--secure-cookies"]
    if request.param == "public-url":
        options += ["--public-url", address]
    server = Server(database_url, tmp_path, *options).start()
    config = tmp_path / "Caddyfile"
    config.write_text(caddyfile(https_port, server.port))
    env = {**os.environ, "HOME": str(caddy_home), "XDG_DATA_HOME": str(caddy_home / "data")}
    env["XDG_CONFIG_HOME"] = str(caddy_home / "config")
    command = ["caddy", "run", "--config", str(config), "--adapter", "caddyfile"]
    with open(tmp_path / "caddy.log", "wb") as log:
        caddy = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _answers(address, caddy_home), "Caddy to answer over HTTPS", 60, poll_s=0.1)
        yield address
    finally:
        caddy.terminate()
        caddy.wait(timeout=scaled(30))
        server.kill()
        print((tmp_path / "caddy.log").read_text(errors="replace")[-4000:], server.log())


def _root_certificate(caddy_home: Path) -> Path:
    return caddy_home / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"


def _answers(address: str, caddy_home: Path) -> bool:
    if not _root_certificate(caddy_home).exists():
        return False
    try:
        with _client(address, caddy_home) as client:
            return client.get("/healthz").status_code == 200
    except (httpx.HTTPError, ssl.SSLError):
        return False  # not listening, or its certificate not issued yet


def _client(address: str, caddy_home: Path) -> httpx.Client:
    """A client that trusts Caddy's internal CA, and only it."""
    trusted = ssl.create_default_context(cafile=str(_root_certificate(caddy_home)))
    return httpx.Client(base_url=address, verify=trusted, timeout=scaled(30))


def _set_cookies(response: httpx.Response) -> dict[str, str]:
    """Each cookie ``response`` sets, by name: its whole ``Set-Cookie`` line."""
    lines = response.headers.get_list("set-cookie")
    return {line.split("=", 1)[0]: line for line in lines}


def test_a_learner_gets_a_secure_cookie_through_caddy_and_it_carries_the_next_answer(
    behind_caddy: str, caddy_home: Path
) -> None:
    with _client(behind_caddy, caddy_home) as learner:
        page = learner.get("/lessons/L4.1")
        assert page.status_code == 200
        cookies = _set_cookies(page)
        assert cookies, "the lesson page set no cookie"
        for line in cookies.values():
            assert re.search(r";\s*secure\b", line, re.IGNORECASE), line
            assert re.search(r";\s*httponly\b", line, re.IGNORECASE), line
        token = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
        assert token is not None
        answered = learner.post(
            "/api/lessons/L4.1/answers",
            json={"exercise_id": "q", "answer": "3, 2"},
            headers={"X-CSRF-Token": token.group(1)},
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["feedback"]["correct"] is True
        assert "set-cookie" not in answered.headers  # the same learner: no new identity was minted


def test_an_lti_login_through_caddy_sets_a_secure_state_cookie_and_names_the_https_launch_url(
    behind_caddy: str, caddy_home: Path
) -> None:
    with _client(behind_caddy, caddy_home) as lms_browser:
        login = lms_browser.get(
            "/lti/login",
            params={
                "iss": ISSUER,
                "login_hint": "learner-1",
                "client_id": "qkv-tool",
                "target_link_uri": f"{behind_caddy}/lessons/L4.1",
            },
        )
    assert login.status_code == 200, login.text
    # The page sends the browser on to the LMS (a meta refresh, so that a framed launch can do the same).
    refresh = re.search(r'<meta http-equiv="refresh" content="0;url=([^"]+)">', login.text)
    assert refresh is not None, login.text
    location = urlsplit(html.unescape(refresh.group(1)))
    assert f"{location.scheme}://{location.netloc}{location.path}" == f"{ISSUER}/auth"
    assert parse_qs(location.query)["redirect_uri"] == [f"{behind_caddy}/lti/launch"]
    cookies = _set_cookies(login)
    assert cookies, "the login initiation set no state cookie"
    for line in cookies.values():
        assert re.search(r";\s*secure\b", line, re.IGNORECASE), line


def test_the_documented_web_server_is_the_one_behind_caddy_here() -> None:
    """Step 4 of docs/operations.md starts qkv serve with the options these tests give it behind Caddy."""
    step = DOC.read_text().split("4. **The web server**", 1)[1].split("5. **HTTPS**", 1)[0]
    command = re.search(r"qkv serve (.*)", step)
    assert command is not None, step
    options = command.group(1).split()
    for option, value in (("--forwarded-allow-ips", "127.0.0.1"), ("--host", "127.0.0.1")):
        assert options[options.index(option) + 1] == value, options
    assert "--secure-cookies" in options and "--public-url" in options, options
