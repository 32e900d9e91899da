"""Crash safety: a SIGKILLed server loses no acknowledged write; SIGTERM lets gradings in flight finish."""

from __future__ import annotations

import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.reliability_support import (
    alive,
    descendants,
    require_bubblewrap,
    sandbox_count,
    wait_until,
)
from tests.time_scale import scaled

LESSON_API = "/api/lessons/L4.1"
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
EXERCISE = re.compile(r'data-exercise-id="([^"]+)" data-kind="numeric"')
CODE_EXERCISE = re.compile(r'class="code-exercise" data-exercise-id="([^"]+)"')


@dataclass
class Browser:
    """One learner's cookie jar and CSRF token, found the way a browser finds them: on the page."""

    base_url: str
    client: httpx.Client = field(init=False)
    token: str = ""
    numeric_exercise: str = ""
    code_exercise: str = ""

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base_url, timeout=scaled(60))

    def open_lesson(self) -> Browser:
        index = self.client.get("/")
        link = re.search(r'href="(/[^"]*L4\.1[^"]*)"', index.text)
        page = self.client.get(link.group(1) if link else "/lessons/L4.1")
        assert page.status_code == 200, page.text[:300]
        self.token = CSRF_META.search(page.text).group(1)  # type: ignore[union-attr]
        self.numeric_exercise = EXERCISE.search(page.text).group(1)  # type: ignore[union-attr]
        self.code_exercise = CODE_EXERCISE.search(page.text).group(1)  # type: ignore[union-attr]
        return self

    def moved_to(self, base_url: str) -> None:
        """Point at a restarted server (new port) keeping the same cookies, as a browser would."""
        cookies = self.client.cookies
        self.client.close()
        self.client = httpx.Client(base_url=base_url, timeout=scaled(60), cookies=cookies)

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return self.client.post(LESSON_API + path, json=body, headers={"X-CSRF-Token": self.token})

    def progress(self) -> dict[str, Any]:
        response = self.client.get(LESSON_API + "/progress")
        assert response.status_code == 200, response.text[:300]
        return response.json()  # type: ignore[no-any-return]


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_sigkill_mid_burst_keeps_every_acknowledged_write(
    start_server: Any, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    require_bubblewrap()
    db_file = tmp_path / "crash.sqlite3"
    url = f"sqlite:///{db_file}" if backend == "sqlite" else request.getfixturevalue("postgres_url")
    server = start_server(url).start()
    browsers = [Browser(server.url).open_lesson() for _ in range(6)]
    # Per browser: every answer sent (in order) and how many came back acknowledged (2xx).
    sent: list[list[str]] = [[] for _ in browsers]
    acked: list[int] = [0 for _ in browsers]
    code_sent: list[list[str]] = [[] for _ in browsers]
    code_acked: list[int] = [0 for _ in browsers]
    stop = threading.Event()
    progressed = threading.Condition()  # notified after every acknowledged write

    def acknowledged(counts: list[int], i: int) -> None:
        with progressed:
            counts[i] += 1
            progressed.notify_all()

    def answer_burst(i: int) -> None:
        browser = browsers[i]
        for n in range(10_000):
            if stop.is_set():
                return
            answer = f"[{i}, {1000 + n}]"  # well formed and wrong: every one counts as an attempt
            sent[i].append(answer)
            try:
                response = browser.post(
                    "/answers", {"exercise_id": browser.numeric_exercise, "answer": answer}
                )
            except httpx.HTTPError:
                return  # the server died under this request: not acknowledged
            if response.status_code // 100 != 2:
                return
            acknowledged(acked, i)

    def code_burst(i: int) -> None:
        browser = browsers[i]
        for n in range(10_000):
            if stop.is_set():
                return
            source = f"# submission {i}-{n}\nprint('hello')\n"
            code_sent[i].append(source)
            try:
                response = browser.post("/code", {"exercise_id": browser.code_exercise, "code": source})
            except httpx.HTTPError:
                return
            if response.status_code == 503:
                code_sent[i].pop()  # refused before anything was written
                stop.wait(0.2)  # a learner's pause before trying again
                continue
            if response.status_code // 100 != 2:
                return
            acknowledged(code_acked, i)

    with ThreadPoolExecutor(max_workers=2 * len(browsers)) as pool:
        futures = [pool.submit(answer_burst, i) for i in range(len(browsers))]
        futures += [pool.submit(code_burst, i) for i in range(len(browsers))]
        with progressed:
            progressed.wait_for(lambda: sum(acked) >= 90 and sum(code_acked) >= 6, timeout=scaled(30))
        assert server.process is not None
        sandboxes = descendants(server.process.pid)  # warm spares and gradings in flight
        server.kill()  # SIGKILL with requests in flight
        stop.set()
        for future in futures:
            future.result(timeout=scaled(60))
    assert sum(acked) >= 90 and sum(code_acked) >= 6, (acked, code_acked, server.log())
    # No sandbox outlives the server that started it.
    assert sandboxes, "the server had no child processes: is grading running?"
    # A spare that was still starting (importing NumPy) when the server died ends once it reads the closed
    # stdin; on a loaded 2-core machine that start alone can take seconds, hence the generous bound.
    try:
        wait_until(lambda: not alive(sandboxes), 30, "every sandbox of the killed server to end")
    except AssertionError:
        survivors = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:120] for pid in alive(sandboxes)}
        raise AssertionError(f"These sandbox processes outlived the killed server: {survivors}") from None
    if backend == "sqlite":
        assert integrity(db_file) == "ok"

    restarted = start_server(url).start()
    for i, browser in enumerate(browsers):
        browser.moved_to(restarted.url)
        progress = browser.progress()
        saved = progress["exercises"][browser.numeric_exercise]
        # Every acknowledged answer is there; at most the one in flight at the kill may be there too.
        assert acked[i] <= saved["attempts"] <= len(sent[i]), (i, acked[i], saved)
        # A learner whose first answer was still in flight at the kill has none saved (the burst waits
        # for 90 acknowledged answers in all, not for each learner's first).
        assert saved["last_answer"] == (sent[i][saved["attempts"] - 1] if saved["attempts"] else None)
        if code_acked[i]:
            source = progress["code"][browser.code_exercise]["source"]
            assert source in code_sent[i][code_acked[i] - 1 : code_acked[i] + 1], (i, code_acked[i], source)
    assert restarted.terminate() == 0
    if backend == "sqlite":
        assert integrity(db_file) == "ok"


# It sleeps past its time limit: once its sandbox is seen, it is in flight for the whole limit, however
# slow the machine (a sleep of a few seconds could end before a loaded machine started the second one).
SLOW_PROGRAM = (
    "import time\ntime.sleep(600)\n\ndef project_qkv(X, Wq, Wk, Wv):\n    return X @ Wq, X @ Wk, X @ Wv\n"
)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_sigterm_finishes_gradings_in_flight_and_exits_cleanly(start_server: Any, sqlite_url: str) -> None:
    require_bubblewrap()
    server = start_server(sqlite_url, "--warm-spares", "0").start()  # a sandbox appears only to grade
    browsers = [Browser(server.url).open_lesson() for _ in range(2)]

    def submit(browser: Browser) -> httpx.Response:
        return browser.post("/code", {"exercise_id": browser.code_exercise, "code": SLOW_PROGRAM})

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(submit, browser) for browser in browsers]
        assert server.process is not None
        pid = server.process.pid
        wait_until(lambda: sandbox_count(pid) >= 2, 30, "both gradings to start in their sandboxes")
        assert all(not future.done() for future in futures)
        exit_status = server.terminate(within=60)
        responses = [future.result(timeout=scaled(60)) for future in futures]
    assert exit_status == 0, server.log()
    for response in responses:
        assert response.status_code == 200, response.text[:300]
        assert response.json()["result"]["status"] in {"pass", "fail", "error"}

    restarted = start_server(sqlite_url).start()
    for browser in browsers:
        browser.moved_to(restarted.url)
        assert browser.progress()["code"][browser.code_exercise]["source"] == SLOW_PROGRAM
