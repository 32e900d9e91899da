"""Fixtures of the web tests: the app on a temporary SQLite database and a learner's browser session."""

import pytest

# Before the first import, so that the helpers' asserts are rewritten like a test's.
pytest.register_assert_rewrite("backend_fixtures")

from backend_fixtures import app, browser, make_app  # noqa: E402

__all__ = ["app", "browser", "make_app"]
