"""Open edX's own LTI 1.3 consumer (``lti-consumer-xblock``, pinned in scripts/openedx_lms/requirements.txt)
as a third LMS: its real Django views and migrations, served on loopback by scripts/openedx_lms/serve.py
in its own virtual environment (.venv-openedx, made by the Makefile's test set-up), so Django never enters
qkv's. The server is a child process; it says it is ready by printing its registration as one JSON line.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.time_scale import scaled

ROOT = Path(__file__).resolve().parents[3]
PYTHON = ROOT / ".venv-openedx" / "bin" / "python"
SERVE = ROOT / "scripts" / "openedx_lms" / "serve.py"
_FORM = re.compile(r'<form\s+id="lti-launch"\s+action="([^"]+)"')
_INPUT = re.compile(r'<input name="([^"]+)" value="([^"]*)"')


@dataclass
class OpenEdx:
    """The served consumer: its URL and each LTI block's registration (see serve.py)."""

    url: str
    course: str
    blocks: dict[str, dict[str, str]]

    def register(self, platforms: Any, block: str) -> None:
        """Register one block with qkv, as ``qkv lti add-platform`` would (each block is its own client)."""
        found = self.blocks[block]
        platforms.add(
            found["issuer"],
            found["client_id"],
            [found["deployment_id"]],
            found["auth_url"],
            found["token_url"],
            found["jwks_url"],
        )

    def state(self) -> dict[str, Any]:
        """The consumer's line items, scores, deep-linked content items and published grades."""
        answer = httpx.get(f"{self.url}/harness/state", timeout=scaled(30))
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def launch(self, client: httpx.Client, block: str, user: str, **query: str) -> httpx.Response:
        """A whole launch as a browser makes it: the courseware's start, qkv's login, Open edX's launch gate
        and its self-posting form; qkv's answer to the form."""
        params = {"block": self.blocks[block]["location"], "user": user, **query}
        login = client.get(f"{self.url}/harness/start", params=params, follow_redirects=True)
        assert login.status_code == 200, login.text[:500]
        found = re.search(r'<meta http-equiv="refresh" content="0;url=([^"]+)">', login.text)
        assert found, f"qkv's login sends the browser nowhere: {login.text[:300]}"
        gate = client.get(unescape(found.group(1)))
        assert gate.status_code == 200, gate.text[:500]
        action = _FORM.search(gate.text)
        assert action, f"Open edX's launch gate answered no launch form: {gate.text[:500]}"
        fields = {unescape(name): unescape(value) for name, value in _INPUT.findall(gate.text)}
        return client.post(unescape(action.group(1)), data=fields, headers={"accept": "text/html"})


def _first_line(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    assert process.stdout is not None
    lines.put(process.stdout.readline())


@contextmanager
def served_openedx(tool_url: str, data: Path) -> Iterator[OpenEdx]:
    """Open edX's consumer, pointed at the tool at ``tool_url``, until the block ends.

    Skips (a failure under CI=true) when its environment is missing.
    """
    if not PYTHON.exists():
        pytest.skip("Open edX's LTI consumer is not installed: run make .venv-openedx/.installed")
    log = (data / "openedx.log").open("w")
    command = [str(PYTHON), str(SERVE), "--tool", tool_url, "--data", str(data)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_first_line, args=(process, lines), daemon=True).start()
        try:
            ready = lines.get(timeout=scaled(180))  # its migrations on a busy machine
        except queue.Empty:
            ready = ""
        if not ready:
            log.flush()
            raise AssertionError(
                f"Open edX's consumer did not start: {(data / 'openedx.log').read_text()[-3000:]}"
            )
        yield OpenEdx(**json.loads(ready))
    finally:
        if process.stdin is not None:
            process.stdin.close()  # serve.py ends when its stdin does
        try:
            process.wait(timeout=scaled(30))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
