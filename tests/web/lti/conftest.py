"""Fixtures of the LTI tests: the fake LMS and the qkv tool, each served on its own local port."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.store.conftest import postgres_admin_url, postgres_url
from tests.web.browser_support import serve
from tests.web.lti.fake_platform import FakePlatform, platform_app
from tests.web.lti.launching import LmsBrowser

__all__ = ["lms", "postgres_admin_url", "postgres_url", "served_platform", "tool_server"]


@contextmanager
def served_platform() -> Iterator[FakePlatform]:
    platform = FakePlatform()
    with serve(platform_app(platform), name="fake-lms") as url:
        platform.url = url
        yield platform


@contextmanager
def tool_server(database_url: str, **settings: Any) -> Iterator[tuple[str, Any]]:
    """The real qkv app on uvicorn: ``(url, app)``."""
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    options: dict[str, Any] = {
        "database_url": database_url,
        "secret_key": "lti-test-secret-key-0123456789",
        "allow_unsandboxed": shutil.which("bwrap") is None,
        "grading_concurrency": 1,
        "warm_spares": 0,
        "lti_score_poll_s": 0.2,
    }
    app = create_app(Settings(**(options | settings)))
    with serve(app, name="qkv-lti-tool") as url:
        yield url, app


@pytest.fixture
def lms(tmp_path: Path) -> Iterator[tuple[FakePlatform, str, Any]]:
    """The fake LMS registered with a qkv tool on SQLite: ``(platform, tool_url, tool_app)``."""
    with served_platform() as platform, tool_server(f"sqlite:///{tmp_path / 'qkv.db'}") as (url, app):
        platform.tool_url = url
        platform.register_with(app.state.qkv_lti.platforms)
        platform.add_user("learner-1", "Ada Lovelace")
        platform.add_user(
            "teacher-1",
            "Grace Hopper",
            roles=["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"],
        )
        yield platform, url, app


@pytest.fixture
def lms_browser(lms: tuple[FakePlatform, str, Any]) -> Iterator[LmsBrowser]:
    browser = LmsBrowser(lms[1])
    yield browser
    browser.close()
