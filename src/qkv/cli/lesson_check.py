"""``qkv lessons check``: every check a lesson must pass, in order, each problem once with what to do.

The steps: validation (the engine's full check), lint (ruff over the lesson's folder and its corpus), the
type check of its widget scripts (tsc, as ``make lint`` runs it), and the content tests: exactly those
``make test`` runs on every lesson (the ``content`` marker: the contract, every lesson-parametrised test,
the catalog-wide checks and, where Chromium is, the browser walks), kept to the lesson's own
parametrisations with ``--lesson`` (pytest, when qkv's tests are at hand). A lesson that passes them passes
``make test``'s. Each step reports what it found and what to do about it; a step that cannot run says why,
and the tests do not run on a lesson that fails validation.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from qkv.lessons import BUILTIN_CONTENT, Problem, validate

__all__ = ["CheckTarget", "Step", "content_command", "find_target", "run_checks"]

CHROMIUM = Path("/usr/bin/chromium")
CONTENT_STEP = "content tests"


@dataclass(frozen=True)
class CheckTarget:
    """What to check: the content folder, the lesson (None: every lesson) and its folders."""

    content: Path
    corpora: Path | None  # a folder of corpora by lesson id; None: each lesson's corpus/ in its folder
    lesson_id: str | None
    lesson_folder: Path | None  # None when every lesson is checked


@dataclass(frozen=True)
class Step:
    """One step's outcome: passed, its report lines, and whether it ran at all."""

    name: str
    passed: bool
    lines: tuple[str, ...]
    ran: bool = True
    why: str = ""  # why a step that did not run was skipped, said on its first line


def find_target(lesson_id: str | None, content: Path | None, corpora: Path | None) -> CheckTarget:
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
    """Run the steps in order, echoing each one's report; the steps' outcomes.

    The tests need a lesson that loads: after a failed validation they are skipped (lint and the type check
    still run, as they read the files only).
    """
    validation = validation_step(target)
    _echo(validation, echo)
    steps = [validation]
    for step in (lint_step, type_check_step):
        steps.append(step(target))
        _echo(steps[-1], echo)
    if validation.passed:
        steps.append(content_step(target, browser=browser))
    else:
        steps.append(Step(CONTENT_STEP, True, (), ran=False, why="validation failed"))
    _echo(steps[-1], echo)
    return steps


def _echo(step: Step, echo: Callable[[str], None]) -> None:
    mark = "ok" if step.passed and step.ran else ("skipped" if not step.ran else "FAILED")
    echo(f"{step.name}: {mark}" + (f": {step.why}" if step.why else ""))
    for line in step.lines:
        echo(f"  {line}")


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
        return [path for path in (target.content, target.corpora) if path is not None]
    corpus = target.corpora / str(target.lesson_id) if target.corpora is not None else None
    return [path for path in (target.lesson_folder, corpus) if path is not None and path.exists()]


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


TYPE_STEP = "type check (tsc)"


def type_check_step(target: CheckTarget) -> Step:
    """TypeScript over the lesson's widget scripts, with the front end's config, as ``make lint`` runs it."""
    repository = _tests_at_hand()
    scripts = sorted(script for path in _lesson_paths(target) for script in path.rglob("widget.js"))
    if not scripts:
        return Step(TYPE_STEP, True, ("No widget script to check.",))
    tsc = repository / "frontend" / "node_modules" / ".bin" / "tsc" if repository else None
    if tsc is None or not tsc.is_file():
        return Step(TYPE_STEP, True, (), False, "TypeScript is not installed here (`make lint` installs it)")
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "tsconfig.json"
        extends = str(tsc.parents[2] / "tsconfig.json")
        config.write_text(json.dumps({"extends": extends, "include": [], "files": [str(s) for s in scripts]}))
        command = [str(tsc), "-p", str(config), "--checkJs", "--noEmit", "--pretty", "false"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    errors = [line for line in done.stdout.splitlines() if "error TS" in line]
    if done.returncode == 0:
        return Step(TYPE_STEP, True, ())
    lines = (
        errors or done.stdout.strip().splitlines()[-5:] or [f"tsc failed with exit status {done.returncode}."]
    )
    fix = "Give each value its type in JSDoc (docs/frontend.md, type-checking the scripts), then check again."
    return Step(TYPE_STEP, False, (*lines, fix))


def _tests_at_hand() -> Path | None:
    """qkv's repository, when this command runs from it (its tests are not installed with qkv)."""
    repository = Path.cwd()
    return repository if (repository / "tests" / "lesson_contract.py").is_file() else None


def content_command(lesson_id: str | None, *, browser: bool = True, folder: Path | None = None) -> list[str]:
    """The pytest arguments of the content tests (the ``content`` marker), for one lesson or every one.

    ``make test`` runs the same tests over the built-in catalog; ``--lesson`` keeps the tests parametrised by
    another lesson out, and every test of the whole catalog in. ``folder``: the lesson's folder (or the
    content folder, for every lesson), whose own tests (``tests/test_*.py``) run too.

    Examples
    --------
    >>> content_command("L4.7", browser=False)
    ['-m', 'content and not browser', '--lesson', 'L4.7', 'tests']
    >>> content_command("L4.7", folder=Path("content/L4/L4.7-cross-attention"))[-2:]
    ['tests', 'content/L4/L4.7-cross-attention']
    """
    marker = "content" if browser else "content and not browser"
    own = [str(folder)] if folder is not None else []
    return ["-m", marker, *(["--lesson", lesson_id] if lesson_id else []), "tests", *own]


def _pytest(
    target: CheckTarget, arguments: list[str], repository: Path, report: Path
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if target.corpora is not None:
        env["QKV_TEST_CORPORA"] = str(target.corpora.resolve())
    if target.content != BUILTIN_CONTENT:
        env["QKV_TEST_CONTENT"] = str(target.content.resolve())
    command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", "--no-header"]
    command += [f"--junitxml={report}", *arguments]
    return subprocess.run(command, cwd=repository, env=env, capture_output=True, text=True, check=False)


def failures(report: Path) -> list[tuple[str, str]]:
    """Each failed or broken test of a JUnit report: its id, and its exception's own last line."""
    found = []
    for case in ET.parse(report).getroot().iter("testcase"):
        for outcome in (*case.iter("failure"), *case.iter("error")):
            test = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name', '')}"
            found.append((test, last_line(outcome.text or "", outcome.get("message", ""))))
    return found


def last_line(text: str, message: str) -> str:
    r"""The last line of the exception a pytest traceback ends with (its ``E`` lines), not a log line.

    Examples
    --------
    >>> last_line("> grade()\nE   TypeError: f() takes 1 positional argument\nx.py:3: TypeError", "")
    'TypeError: f() takes 1 positional argument'
    """
    raised = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    said = raised or message.strip().splitlines() or [""]
    return said[-1][:300]


def _counts(report: Path) -> str:
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else next(suite.iter("testsuite"))
    total, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
    broken = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return f"{total - skipped - broken} passed, {broken} failed, {skipped} skipped"


def content_step(target: CheckTarget, *, browser: bool = True) -> Step:
    """The content tests, as ``make test`` runs them (pytest from qkv's repository), for this lesson."""
    repository = _tests_at_hand()
    if repository is None:
        return Step(CONTENT_STEP, True, (), False, "qkv's tests are not here; run this from qkv's repository")
    own = (target.lesson_folder or target.content).resolve()
    arguments = content_command(target.lesson_id, browser=browser and CHROMIUM.exists(), folder=own)
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.xml"
        done = _pytest(target, arguments, repository, report)
        code = done.returncode
        if not report.is_file():
            said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:]
            return Step(CONTENT_STEP, False, (f"pytest could not run the tests (exit status {code}).", *said))
        failed, counts = failures(report), _counts(report)
    lines = [counts] if browser and CHROMIUM.exists() else [counts, "The browser tests did not run."]
    if code == 0 and not failed:
        return Step(CONTENT_STEP, True, tuple(lines))
    for test, line in failed:
        lines += [f"FAILED {test}", f"  {line}"]
    again = shlex.join(["pytest", "-n", "0", "-x", *arguments])
    return Step(CONTENT_STEP, False, (*lines, f"Read each failure whole with: {again}"))
