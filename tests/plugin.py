"""Test-suite policy shared by every test module, those of a lesson folder's ``tests/`` too.

Loaded by the repository's root ``conftest.py`` as a plugin, so that its hooks and fixtures hold wherever a
test lies. A test that needs a system component (bubblewrap, Chromium, PostgreSQL, PyTorch) skips with the
component's name when it is missing, so the suite still runs on a laptop. Under ``CI=true`` nothing
may skip silently: a skip is reported as a failure, because CI installs every component.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.time_scale import TIME_SCALE, scaled

# The helpers that tests import are rewritten like the tests, so that their asserts say what they compared.
pytest.register_assert_rewrite(
    "tests.builtin_lessons",
    "tests.generic_files",
    "tests.lesson_contract",
    "tests.lesson_pages",
    "tests.reliability.reliability_support",
    "tests.web.backend_fixtures",
    "tests.web.browser_support",
    "tests.web.instructor_seed",
    "tests.web.lesson_walk",
)

# The web tests' fixtures, for tests/web/ and for the browser walks in lesson folders alike.
pytest_plugins = ["tests.web.fixtures"]

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
TESTS = Path(__file__).parent
# Folders of lesson content: data the lesson engine imports by path (lesson.py, grading.py, widget.py) and
# corpora of learners' programs graded as text in the sandbox (some fork, loop or kill). Of these pytest
# collects only a lesson's (or chapter's) own tests: the test_*.py files of its tests/ folder.
CONTENT_ROOTS = [TESTS.parent / "src" / "qkv" / "lessons" / "content", TESTS / "sample_lessons"]
if os.environ.get("QKV_TEST_CONTENT"):
    CONTENT_ROOTS.append(Path(os.environ["QKV_TEST_CONTENT"]).resolve())


def in_content(path: Path) -> bool:
    """Whether ``path`` lies in a folder of lesson content."""
    return any(root == path or root in path.parents for root in CONTENT_ROOTS)


def is_lesson_test(path: Path) -> bool:
    """Whether ``path`` is a test module of a lesson's (or chapter's) own: ``<folder>/tests/test_*.py``.

    Examples
    --------
    >>> is_lesson_test(Path("content/L4/L4.1-queries/tests/test_l4_1_content.py"))
    True
    >>> is_lesson_test(Path("content/L4/L4.1-queries/corpus/functions/correct/test_reference.py"))
    False
    """
    return path.parent.name == "tests" and path.name.startswith("test_") and path.suffix == ".py"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In lesson content, collect only the lessons' own tests; never a data module nor a corpus."""
    if not in_content(collection_path):
        return None
    if collection_path.is_dir():
        return collection_path.name in {"corpus", "corpora", "__pycache__"} or None
    return not is_lesson_test(collection_path) or None


@pytest.fixture(scope="session")
def grader() -> Iterator[object]:
    """One grader for the whole session, with warm spares so that each grading takes a fraction of a second."""
    from qkv.grading import Grader

    with Grader(warm_spares=2) as shared:
        yield shared


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lesson",
        default=None,
        metavar="ID",
        help="Run the tests parametrised by a lesson (or by its exercises or programs) for lesson ID only; "
        "tests of the whole catalog still run. `qkv lessons check ID` runs `-m content --lesson ID`.",
    )


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark ``content`` every test of a lesson folder's ``tests/`` (before ``-m`` selects): the content
    selection, which `qkv lessons check` runs, holds a lesson's own tests too."""
    if in_content(item.path) and is_lesson_test(item.path):
        item.add_marker(pytest.mark.content)


@pytest.hookimpl(trylast=True)  # after -m and -k: --lesson looks among the tests they selected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep one lesson's parametrised tests (``--lesson``); scale the timeouts by ``QKV_TEST_TIME_SCALE``."""
    lesson_id = config.getoption("--lesson")
    if lesson_id:
        _keep_one_lesson(config, items, lesson_id)
    _scale_timeouts(config, items)


def lesson_of(item: pytest.Item) -> str | None:
    """The id of the lesson a test is parametrised by (a Lesson, or what has a ``lesson``), if any."""
    from qkv.lessons import Lesson

    callspec = getattr(item, "callspec", None)
    for value in callspec.params.values() if callspec is not None else ():
        lesson = value if isinstance(value, Lesson) else getattr(value, "lesson", None)
        if isinstance(lesson, Lesson):
            return lesson.id
    return None


def _keep_one_lesson(config: pytest.Config, items: list[pytest.Item], lesson_id: str) -> None:
    lessons = {item.nodeid: lesson_of(item) for item in items}
    if lesson_id not in lessons.values():
        raise pytest.UsageError(
            f"--lesson {lesson_id}: no test selected here is parametrised by a lesson with that id "
            "(`qkv lessons list` shows the ids)."
        )
    others = [item for item in items if lessons[item.nodeid] not in (None, lesson_id)]
    if others:
        config.hook.pytest_deselected(items=others)
        items[:] = [item for item in items if lessons[item.nodeid] in (None, lesson_id)]


def _scale_timeouts(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scale every test's pytest-timeout limit (its mark, else the ini's) by ``QKV_TEST_TIME_SCALE``."""
    if TIME_SCALE == 1:
        return
    default = config.getini("timeout")
    for item in items:
        marker = item.get_closest_marker("timeout")
        seconds = default
        if marker is not None:
            seconds = marker.args[0] if marker.args else marker.kwargs.get("timeout", default)
        if seconds:
            item.add_marker(pytest.mark.timeout(scaled(float(seconds))), append=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"Skipped under CI=true, where every component is installed: {reason}"


# Under pytest-xdist (``-n``, set in pyproject.toml) the scheduler below decides which tests share a worker;
# a scope runs on one worker, its tests one at a time. The reliability tests start real servers and load
# them: they are one scope, so two of them never run at once. The grading tests that run hostile programs
# (fork bombs, memory hogs, endless loops) are bounded by their sandboxes and kept together too, so that
# two of them never share the machine's cores. A browser module is one scope, so that its server and its
# Chromium (module fixtures) start once (a lesson folder's browser module, tests/test_<lesson>_browser.py, too); so is the Open edX module, for its LMS server. Every other test is a scope of its own: any worker may take it.
SHARED_SCOPES = {
    "tests/reliability/": "reliability",
    "tests/grading/test_hostile.py": "hostile",
    "tests/grading/test_redteam.py": "hostile",
    "tests/grading/sandbox/test_cgroups.py": "hostile",
}
ONE_WORKER_MODULES = (
    "tests/web/test_browser",
    "tests/web/lti/test_browser",
    "tests/web/lti/test_cross_course",
    "tests/web/lti/test_openedx",  # one Open edX server (a module fixture) for the module
    "tests/test_image",  # one image build (a module fixture) for the module: builds share build/image/
)


def xdist_scope(nodeid: str) -> str:
    """The scope of a test under pytest-xdist: a named group, its module, or the test alone."""
    path = nodeid.split("::", 1)[0]
    for prefix, scope in SHARED_SCOPES.items():
        if path.startswith(prefix):
            return scope
    one_worker = path.startswith(ONE_WORKER_MODULES) or path.endswith("_browser.py")  # a lesson's walk
    return path if one_worker else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scheduling by scope, with the scopes of ``xdist_scope``.

    Not ``--dist loadgroup`` with ``xdist_group`` marks: pytest-xdist 3.8 tags a marked test by renaming
    its node id, which pytest 9.2 no longer reads back, so the marks were silently ignored.
    """
    from xdist.scheduler import LoadScopeScheduling

    class ScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return ScopeScheduling(config, log)
