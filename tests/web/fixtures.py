"""Fixtures of the web tests.

The back end's (``backend_fixtures``): the app on a temporary SQLite database (``app``, ``make_app``) and a
learner's session through a TestClient (``browser``). The browser tests' (``browser_support``): one headless
Chromium (``chromium``) and one real server on uvicorn (``live_server``) per test module, and the list a
page's console errors go to (``page_errors``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests import lesson_contract as contract
from tests.web.backend_fixtures import app, browser, make_app
from tests.web.browser_support import LiveServer, launch_chromium, live_app

__all__ = ["app", "browser", "chromium", "live_server", "make_app", "page_errors"]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the whole module (launched by Playwright with an empty profile)."""
    with launch_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The real app with the lessons of ``contract.catalog()`` (the built-in ones unless ``QKV_TEST_CONTENT``)
    on uvicorn, on a free loopback port, with its own SQLite file."""
    catalog = contract.catalog() if contract.CONTENT else None
    with live_app(tmp_path_factory.mktemp("browser-server"), catalog) as server:
        yield server


@pytest.fixture
def page_errors() -> list[str]:
    return []
