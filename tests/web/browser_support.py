"""What the browser tests share: Chromium (Debian's, driven by Playwright), the real app on uvicorn on a free
loopback port, a page that records console errors, screenshots, and reading the page's progress.

The fixtures built on these (``chromium``, ``live_server``, ``page_errors``) are in ``tests/web/fixtures.py``;
a browser test module asks for them by name and imports helpers from here, never from another test module.
Screenshots go to ``test-artifacts/`` at the repository root (ignored by git); each test names its own, and
under pytest-xdist the names carry no worker id because every name is written by one test only.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.time_scale import scaled

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1100, "height": 900}
PHONE = {"width": 390, "height": 844}

# The marks of every browser test module: ``pytestmark = BROWSER``.
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed at /usr/bin/chromium"),
]

# A located element has the focus (``tab_until``'s test by default).
FOCUSED = "el => el === document.activeElement"

# The focused element, looking inside shadow roots (the code editor lives in one).
DEEP_ACTIVE = """() => {
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    return active;
}"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    lesson_url: str  # the first lesson's page (L4.1 in the built-in catalog)
    app: Any = None

    def lesson(self, lesson_id: str) -> str:
        return f"{self.url}/lessons/{lesson_id}"


@contextmanager
def serve(app: Any, name: str = "browser-test-uvicorn") -> Iterator[str]:
    """Run ``app`` on uvicorn in a thread, on a free loopback port; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + scaled(30)
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError(f"The qkv web app did not start on uvicorn within {scaled(30):g} s.")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=scaled(30))


@contextmanager
def live_app(folder: Path, catalog: Any = None) -> Iterator[LiveServer]:
    """The real app (``create_app``: its store on a SQLite file in ``folder``, the real grader) serving
    ``catalog`` (the built-in lessons by default)."""
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    settings = Settings(
        database_url=f"sqlite:///{folder / 'qkv.db'}",
        secret_key="browser-test-secret",
        # Without bubblewrap the grader falls back to resource limits; the sandbox is tested elsewhere.
        allow_unsandboxed=shutil.which("bwrap") is None,
        grading_concurrency=1,
        warm_spares=0,
    )
    if catalog is None:
        from qkv.lessons import load_catalog

        catalog = load_catalog()
    app = create_app(settings, catalog=catalog)
    first = catalog.lessons[0].id
    with serve(app) as url:
        yield LiveServer(url=url, lesson_url=f"{url}/lessons/{first}", app=app)


@contextmanager
def launch_chromium() -> Iterator[Any]:
    """A headless Chromium launched by Playwright with an empty profile; ``expect`` waits its default time
    scaled by ``tests.time_scale``."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=scaled(5_000))

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


def new_page(chromium: Any, errors: list[str], **context_options: Any) -> Any:
    """A page in a new browser context (a new learner, with its own cookie); page errors and console
    errors are appended to ``errors``."""
    context = chromium.new_context(**context_options)
    context.set_default_timeout(scaled(15_000))  # milliseconds, stretched on a busy machine
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    return page


def screenshot(page: Any, name: str) -> None:
    """A full-page screenshot to ``test-artifacts/NAME.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def page_progress(page: Any) -> dict[str, Any]:
    """The progress document the server embedded in the page (``#progress-data``)."""
    return json.loads(page.locator("#progress-data").text_content())  # type: ignore[no-any-return]


def tab_to(page: Any, predicate: str, *, limit: int) -> None:
    """Press Tab until the focused element satisfies ``predicate`` (a JS function of the element)."""
    focused = f"({predicate})(document.activeElement)"
    _press_tab_until(page, lambda: page.evaluate(focused), f"an element with {predicate}", limit)


def tab_until(page: Any, target: Any, *, limit: int = 80, focused: str = FOCUSED) -> None:
    """Press Tab until ``target`` (a locator, or a selector: its first element) has the focus: ``focused``,
    a JS function of that element, says when (by default, when it is ``document.activeElement``)."""
    located = page.locator(target).first if isinstance(target, str) else target
    _press_tab_until(page, lambda: located.evaluate(focused), str(target), limit)


def _press_tab_until(page: Any, reached: Callable[[], Any], what: str, limit: int) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if reached():
            return
    raise AssertionError(f"{limit} presses of Tab never reached {what}.")


def replace_editor_text(page: Any, editor: Any, text: str) -> None:
    """Replace everything in the code editor by ``text``, as one edit."""
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    # insert_text types the program as one edit, so the editor's auto-indent does not re-indent it.
    page.keyboard.insert_text(text)


def compact(value: float, decimals: int = 4) -> str:
    """The widgets' short number format (format.js formatCompact(value, decimals)): no trailing zeros."""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def compact_vector(values: list[float]) -> str:
    """A vector as the lesson writes it: ``[1, 0.5]``."""
    return "[" + ", ".join(compact(float(v)) for v in values) + "]"
