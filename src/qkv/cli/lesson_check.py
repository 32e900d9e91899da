"""``qkv lessons check``: every check a lesson must pass, in order, each problem once with what to do.

The steps: validation (the engine's full check), lint (ruff over the lesson's folder and its corpus), the
lesson's contract tests (pytest, when qkv's tests are at hand) and its browser smoke walk (when Chromium is
there too). Each step reports what it found and what to do about it; a step that cannot run says why.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from qkv.lessons import BUILTIN_CONTENT, Problem, validate

__all__ = ["CheckTarget", "Step", "find_target", "run_checks"]

CHROMIUM = Path("/usr/bin/chromium")
CONTRACT_TESTS = ("tests/lessons", "tests/web/learner/test_api_every_lesson.py")
SMOKE_WALK = "tests/web/test_browser_lessons.py"


@dataclass(frozen=True)
class CheckTarget:
    """What to check: the content folder, the lesson (None: every lesson) and its folders."""

    content: Path
    corpora: Path
    lesson_id: str | None
    lesson_folder: Path | None  # None when every lesson is checked


@dataclass(frozen=True)
class Step:
    """One step's outcome: passed, its report lines, and whether it ran at all."""

    name: str
    passed: bool
    lines: tuple[str, ...]
    ran: bool = True


def find_target(lesson_id: str | None, content: Path | None, corpora: Path) -> CheckTarget:
    """The lesson's folder in ``content`` (the built-in lessons by default), found by its front matter.

    Raises
    ------
    ValueError
        If no lesson folder of ``content`` has that id.
    """
    root = content or BUILTIN_CONTENT
    if lesson_id is None:
        return CheckTarget(root, corpora, None, None)
    found = [file.parent for file in sorted(root.rglob("lesson.md")) if _front_id(file) == lesson_id]
    if not found:
        raise ValueError(
            f"No lesson folder under {root} has the id {lesson_id!r} (the id = line of its lesson.md); "
            "`qkv lessons list` shows the lessons, `qkv lessons new` starts one."
        )
    return CheckTarget(root, corpora, lesson_id, found[0])


def _front_id(file: Path) -> str | None:
    found = re.match(r"\A---\n(.*?)\n---\n", file.read_text(encoding="utf-8", errors="replace"), re.S)
    try:
        data = tomllib.loads(found.group(1)) if found else {}
    except tomllib.TOMLDecodeError:
        return file.parent.name.split("-")[0]  # the front matter is broken: validation will say how
    value = data.get("id")
    return value if isinstance(value, str) else None


def run_checks(
    target: CheckTarget, *, browser: bool = True, echo: Callable[[str], None] = print
) -> list[Step]:
    """Run the steps in order, echoing each one's report; the steps' outcomes."""
    steps = [validation_step(target), lint_step(target), contract_step(target)]
    if browser:
        steps.append(smoke_walk_step(target))
    for step in steps:
        mark = "ok" if step.passed and step.ran else ("skipped" if not step.ran else "FAILED")
        echo(f"{step.name}: {mark}")
        for line in step.lines:
            echo(f"  {line}")
    return steps


def validation_step(target: CheckTarget) -> Step:
    """The engine's full check, problems grouped by file (the path once), each once, in line order."""
    problems = [problem for problem in validate(target.content) if _concerns(problem, target)]
    if not problems:
        return Step("validation", True, ())
    lines: list[str] = []
    for file, found in _by_file(problems):
        lines.append(f"{file}:")
        lines += [f"  line {problem.line}: {problem.message}" for problem in found]
    lines.append("Fix each at its line (the sentence says how), then run this check again.")
    return Step("validation", False, tuple(lines))


def _concerns(problem: Problem, target: CheckTarget) -> bool:
    """A problem of the lesson's folder, or of its chapter's own files (not another lesson's)."""
    if target.lesson_folder is None:
        return True
    file = Path(problem.file)
    chapter = target.lesson_folder.parent
    if target.lesson_folder == file or target.lesson_folder in file.parents:
        return True
    other_lesson = any(
        (parent / "lesson.md").is_file() for parent in file.parents if chapter in parent.parents
    )
    return chapter in file.parents and not other_lesson


def _by_file(problems: Iterable[Problem]) -> list[tuple[Path, list[Problem]]]:
    grouped: dict[Path, list[Problem]] = {}
    for problem in dict.fromkeys(problems):
        grouped.setdefault(Path(problem.file), []).append(problem)
    return [(file, sorted(found, key=lambda problem: problem.line)) for file, found in grouped.items()]


def _lesson_paths(target: CheckTarget) -> list[Path]:
    if target.lesson_folder is None:
        return [target.content, target.corpora]
    return [path for path in (target.lesson_folder, target.corpora / str(target.lesson_id)) if path.exists()]


def lint_step(target: CheckTarget) -> Step:
    """ruff check and ruff format --check over the lesson's folder and its corpus."""
    paths = [str(path) for path in _lesson_paths(target)]
    ruff = [sys.executable, "-m", "ruff"]
    try:
        checked = subprocess.run([*ruff, "check", *paths], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Step(
            "lint (ruff)", True, (f"ruff could not run ({error}); install it: pip install ruff.",), False
        )
    if "No module named ruff" in checked.stderr:
        return Step(
            "lint (ruff)", True, ("ruff is not installed (pip install ruff), so nothing was linted.",), False
        )
    formatted = subprocess.run(
        [*ruff, "format", "--check", *paths], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in checked.stdout.splitlines() if line.strip()] if checked.returncode else []
    if checked.returncode:
        lines.append(f"Fix these, or let ruff fix what it can: {' '.join(['ruff check --fix', *paths])}")
    unformatted = [line for line in formatted.stdout.splitlines() if line.startswith("Would reformat")]
    if formatted.returncode:
        lines += unformatted
        lines.append(f"Format them: {' '.join(['ruff format', *paths])}")
    return Step("lint (ruff)", not checked.returncode and not formatted.returncode, tuple(lines))


def _tests_at_hand() -> Path | None:
    """qkv's repository, when this command runs from it (its tests are not installed with qkv)."""
    repository = Path.cwd()
    return repository if (repository / "tests" / "lesson_contract.py").is_file() else None


def _pytest(
    target: CheckTarget, modules: Iterable[str], repository: Path
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QKV_TEST_CORPORA=str(target.corpora.resolve()))
    if target.content != BUILTIN_CONTENT:
        env["QKV_TEST_CONTENT"] = str(target.content.resolve())
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", "--no-header"]
    command += ["-m", "not slow"]  # the tests of the commands themselves (this one included) are slow
    command += ["-k", target.lesson_id] if target.lesson_id else []
    return subprocess.run(
        [*command, *modules], cwd=repository, env=env, capture_output=True, text=True, check=False
    )


def _pytest_step(name: str, target: CheckTarget, modules: tuple[str, ...], repository: Path) -> Step:
    done = _pytest(target, modules, repository)
    if done.returncode == 5:
        return Step(name, False, ("No test ran for this lesson: is its id right?",))
    summary = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    tail = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    if done.returncode == 0:
        return Step(name, True, tuple(tail))
    again = " ".join(["pytest -n 0 -x", *(["-k", target.lesson_id] if target.lesson_id else []), *modules])
    lines = [*summary, *tail, f"Read each failure with: {again}"]
    return Step(name, False, tuple(lines))


def contract_step(target: CheckTarget) -> Step:
    """The lesson contract and every lesson-parametrised test, for this lesson (pytest, from qkv's tests)."""
    repository = _tests_at_hand()
    if repository is None:
        return Step(
            "contract tests", True, ("qkv's tests are not here; run this from qkv's repository.",), False
        )
    return _pytest_step("contract tests", target, CONTRACT_TESTS, repository)


def smoke_walk_step(target: CheckTarget) -> Step:
    """The browser smoke walk of the lesson in Chromium, where Chromium (and qkv's tests) are."""
    repository = _tests_at_hand()
    if repository is None or not CHROMIUM.exists():
        why = "qkv's tests are not here" if repository is None else f"Chromium is not at {CHROMIUM}"
        return Step(
            "browser smoke walk", True, (f"{why}, so the lesson was not walked in a browser.",), False
        )
    return _pytest_step("browser smoke walk", target, (SMOKE_WALK,), repository)
