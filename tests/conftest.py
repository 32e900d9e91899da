"""Test-suite policy shared by every test module.

A test that needs a system component (bubblewrap, Chromium, PostgreSQL, PyTorch) skips with the
component's name when it is missing, so the suite still runs on a laptop. Under ``CI=true`` nothing
may skip silently: a skip is reported as a failure, because CI installs every component.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# The helpers that tests import are rewritten like the tests, so that their asserts say what they compared.
pytest.register_assert_rewrite(
    "tests.builtin_lessons",
    "tests.lesson_contract",
    "tests.lesson_pages",
    "tests.reliability.reliability_support",
    "tests.web.backend_fixtures",
    "tests.web.browser_support",
    "tests.web.instructor_seed",
    "tests.web.lesson_walk",
)

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}

# Lesson folders are data that the lesson engine imports by path, and the corpora are learners' files
# graded as text in the sandbox (some fork, loop or kill): pytest must not import either as tests.
collect_ignore_glob = ["sample_lessons/*", "lesson_corpora/*"]


@pytest.fixture(scope="session")
def grader() -> Iterator[object]:
    """One grader for the whole session, with warm spares so that each grading takes a fraction of a second."""
    from qkv.grading import Grader

    with Grader(warm_spares=2) as shared:
        yield shared


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"Skipped under CI=true, where every component is installed: {reason}"
