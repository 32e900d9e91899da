"""tests/plugin.py's hold on lesson content: of a content folder, pytest collects only each lesson's own
tests (``<lesson folder>/tests/test_*.py``), every one marked ``content``, and never a data module
(``lesson.py``, ``grading.py``, a widget's ``widget.py``) nor a program of a corpus."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from qkv.lessons import BUILTIN_CONTENT
from tests.plugin import is_lesson_test, pytest_ignore_collect, xdist_scope
from tests.time_scale import scaled

REPO = Path(__file__).parents[1]


def _collected(*arguments: str) -> set[str]:
    """The test files pytest collects with ``arguments`` (from the repository, in a process of its own)."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, *arguments], cwd=REPO, capture_output=True, text=True, timeout=scaled(300), check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


def test_of_the_content_only_each_lessons_own_tests_are_collected_and_marked_content() -> None:
    content = BUILTIN_CONTENT.relative_to(REPO)
    expected = {
        str(path.relative_to(REPO))
        for path in BUILTIN_CONTENT.rglob("*.py")
        if is_lesson_test(path) and "corpus" not in path.parts
    }
    assert expected, "the built-in lessons have tests of their own"
    assert not [path for path in BUILTIN_CONTENT.rglob("corpus/**/*.py") if is_lesson_test(path)]
    assert _collected(str(content)) == expected  # not lesson.py, grading.py, widget.py nor a corpus
    assert _collected("-m", "content", str(content)) == expected  # each of them marked content


def test_the_hook_skips_every_data_module_and_corpus_and_keeps_each_lessons_tests() -> None:
    files = [path for path in BUILTIN_CONTENT.rglob("*.py") if "__pycache__" not in path.parts]
    data = [path for path in files if path.name in {"lesson.py", "grading.py", "widget.py", "chapter.py"}]
    corpora = [path for path in BUILTIN_CONTENT.rglob("corpus") if path.is_dir()]
    tests = [path for path in files if path.parent.name == "tests"]
    assert data and corpora and tests
    assert all(pytest_ignore_collect(path, None) for path in data + corpora)  # type: ignore[arg-type]
    assert not any(pytest_ignore_collect(path, None) for path in tests)  # type: ignore[arg-type]
    assert pytest_ignore_collect(REPO / "tests" / "test_plugin.py", None) is None  # type: ignore[arg-type]


def test_a_lessons_browser_module_runs_on_one_worker_and_its_other_tests_anywhere() -> None:
    browser = "src/qkv/lessons/content/L9/L9.1-first/tests/test_l9_1_browser.py"
    content = "src/qkv/lessons/content/L9/L9.1-first/tests/test_l9_1_content.py"
    assert xdist_scope(f"{browser}::test_a_learner_walks_the_lesson") == browser  # one server, one Chromium
    assert xdist_scope(f"{content}::test_one") == f"{content}::test_one"
