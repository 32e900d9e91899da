"""The author's two commands: ``qkv lessons new`` writes a lesson that validates and passes the contract, and
``qkv lessons check`` runs every check on it, saying each problem once with what to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from qkv.cli.lesson_check import CheckTarget, failures, type_check_step
from qkv.cli.lessons import lessons
from qkv.grading import sandbox_available
from qkv.lessons import BUILTIN_CONTENT, load_catalog, validate
from tests import lesson_contract as contract
from tests.generic_files import LIBRARY_CALLERS, PACKAGE, findings, generic_files


def _copy(tmp_path: Path) -> tuple[Path, None, str]:
    """A copy of the built-in content (each lesson's corpus in its folder), None (no folder of corpora
    apart), and an id free for a lesson more."""
    content = tmp_path / "content"
    shutil.copytree(BUILTIN_CONTENT, content, ignore=shutil.ignore_patterns("__pycache__"))
    (chapter,) = [path for path in content.iterdir() if (path / "chapter.toml").is_file()]
    return content, None, contract.free_lesson_id(chapter, None)


def _new(content: Path, corpora: Path | None, lesson_id: str, *extra: str) -> object:
    arguments = ["new", lesson_id, "Positional encodings", "--content", str(content)]
    arguments += ["--corpora", str(corpora)] if corpora is not None else []
    return CliRunner().invoke(lessons, [*arguments, *extra])


@pytest.fixture(scope="module")
def new_lesson(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, None, str]:
    content, corpora, lesson_id = _copy(tmp_path_factory.mktemp("authoring"))
    result = _new(content, corpora, lesson_id, "--widget", "position-bars")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    return content, corpora, lesson_id


def test_new_writes_a_lesson_that_validates_with_an_exercise_of_each_kind_and_a_widget(
    new_lesson: tuple[Path, None, str],
) -> None:
    content, _, lesson_id = new_lesson
    assert validate(content) == []
    lesson = load_catalog(content).lesson(lesson_id)
    assert sorted(exercise.kind for exercise in lesson.exercises.values()) == [
        "choice",
        "code",
        "letter",
        "numeric",
    ]
    assert "position-bars" in lesson.widget_names
    assert (lesson.source.parent / "widgets" / "position-bars" / "widget.js").is_file()
    assert sorted(path.name for path in (lesson.source.parent / "corpus").glob("*/wrong/*.py"))
    # Its own tests, in its folder: named after it, so that pytest collects them beside every other lesson's.
    stem = lesson_id.lower().replace(".", "_")
    assert sorted(path.name for path in (lesson.source.parent / "tests").iterdir()) == [
        f"test_{stem}_browser.py",
        f"test_{stem}_content.py",
    ]
    # Its words are its own: no generic file of qkv names its sentences, ids or functions.
    assert findings(lesson, generic_files(), LIBRARY_CALLERS | set(PACKAGE.glob("*.py"))) == []


def test_the_new_lesson_passes_the_contract(new_lesson: tuple[Path, None, str], grader: object) -> None:
    content, corpora, lesson_id = new_lesson
    if not sandbox_available():
        pytest.skip("bubblewrap is not installed, so the corpus cannot be graded")
    catalog = load_catalog(content)
    contract.check_lesson(grader, catalog.lesson(lesson_id), catalog, corpora)


@pytest.mark.parametrize(
    ("lesson_id", "message"),
    [
        (
            "L4",
            "A lesson of chapter L4 has an id like L4.7 (the chapter's id, a dot and a number), not 'L4'.",
        ),
        (
            "X1.1",
            "No chapter of {content} has the id 'X1', which lesson 'X1.1' would join (its chapters: L4)",
        ),
        ("L4.1", "Lesson L4.1 has files already ({content}/L4/L4.1-queries-keys-values)"),
    ],
)
def test_new_refuses_an_id_that_makes_no_new_lesson(tmp_path: Path, lesson_id: str, message: str) -> None:
    content, corpora, _ = _copy(tmp_path)
    result = _new(content, corpora, lesson_id)
    assert result.exit_code == 1  # type: ignore[attr-defined]
    assert message.format(content=content, corpora=corpora) in result.output  # type: ignore[attr-defined]
    assert validate(content) == []  # nothing was written


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_check_runs_every_step_on_a_new_lesson(new_lesson: tuple[Path, None, str]) -> None:
    content, _, lesson_id = new_lesson
    arguments = ["check", lesson_id, "--content", str(content), "--no-browser"]
    result = CliRunner().invoke(lessons, arguments)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "validation: ok" and lines[1] == "lint (ruff): ok"
    assert lines[2] == "type check (tsc): ok" or lines[2].startswith("type check (tsc): skipped")
    assert lines[3] == "content tests: ok" and " passed, 0 failed" in lines[4]
    assert lines[-1] == f"{lesson_id}: every check that could run passed."


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_check_says_each_problem_once_where_it_is_and_what_to_do(tmp_path: Path) -> None:
    content, corpora, lesson_id = _copy(tmp_path)
    assert _new(content, corpora, lesson_id).exit_code == 0  # type: ignore[attr-defined]
    (folder,) = content.glob(f"*/{lesson_id}-*")
    page = folder / "lesson.md"
    text = page.read_text().replace("doubling it gives $2x$.", "doubling it gives\n$2\\left(x$.")
    page.write_text(text.replace("Type twice your number.", "Type twice {{x2}}."))
    (folder / "lesson.py").write_text((folder / "lesson.py").read_text() + "import os\n")
    arguments = ["check", lesson_id, "--content", str(content), "--no-browser"]
    result = CliRunner().invoke(lessons, arguments)
    assert result.exit_code == 1
    output = result.output
    formula = next(n for n, line in enumerate(page.read_text().splitlines(), 1) if "\\left(x" in line)
    prompt = next(n for n, line in enumerate(page.read_text().splitlines(), 1) if "{{x2}}" in line)
    assert output.count(str(page)) == 1  # the path once, then each problem at its line, once
    assert f"  line {formula}: The formula '2\\left(x' could not be converted to MathML" in output
    assert output.count("{{x2}}") == 1 and f"  line {prompt}: The placeholder {{{{x2}}}}" in output
    assert "Fix each at its line (the sentence says how), then run this check again." in output
    assert "F401" in output and "ruff check --fix" in output  # the unused import, and how to fix it
    assert "validation: FAILED" in output and "lint (ruff): FAILED" in output
    # The tests need a lesson that loads: none runs, so no ERROR line follows.
    assert "content tests: skipped: validation failed" in output and "ERROR" not in output


def test_a_failure_is_reported_by_its_exceptions_last_line_not_a_log_line(tmp_path: Path) -> None:
    """What `qkv lessons check` prints of each failed test, read from a real pytest's JUnit report."""
    test_file = tmp_path / "test_judged.py"
    test_file.write_text(
        "import logging\n\n\ndef test_judged():\n"
        "    logging.getLogger('qkv').error('the grader could not judge a result')\n"
        "    raise TypeError('_not_three() takes 2 positional arguments but 5 were given')\n"
    )
    report = tmp_path / "report.xml"
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-p", "no:randomly"]
    subprocess.run(
        [*command, f"--junitxml={report}", str(test_file)], cwd=tmp_path, capture_output=True, check=False
    )
    ((test, line),) = failures(report)
    assert test.endswith("test_judged.py::test_judged")
    assert line == "TypeError: _not_three() takes 2 positional arguments but 5 were given"


TSC = Path(__file__).parents[2] / "frontend" / "node_modules" / ".bin" / "tsc"


@pytest.mark.skipif(
    not TSC.is_file(), reason="TypeScript is not installed in frontend/ (make lint installs it)"
)
def test_check_type_checks_the_lessons_widget_scripts_as_make_lint_does(
    new_lesson: tuple[Path, None, str], tmp_path: Path
) -> None:
    content, corpora, lesson_id = new_lesson
    (folder,) = content.glob(f"*/{lesson_id}-*")
    assert type_check_step(CheckTarget(content, corpora, lesson_id, folder)).passed  # the widget new writes
    widget = tmp_path / "T9.1-bars" / "widgets" / "bars" / "widget.js"
    widget.parent.mkdir(parents=True)
    widget.write_text(
        '// @ts-check\nimport { showLive } from "/static/js/widget-kit.js";\n\n'
        "export function mount(element) {\n  showLive(element, 42);\n}\n"
    )
    step = type_check_step(CheckTarget(tmp_path, tmp_path / "corpora", "T9.1", widget.parents[2]))
    assert not step.passed
    assert "widget.js(5,21): error TS2345: Argument of type 'number'" in step.lines[0]
