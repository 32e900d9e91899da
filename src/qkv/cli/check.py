"""``qkv check FILE [--exercise ID]``: grade a solution of a code exercise and show the results."""

from __future__ import annotations

import ast
import atexit
import contextlib
import json
import os
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from qkv.cli import WHOLE_PROCESS
from qkv.grading.syntax_trees import parse

if TYPE_CHECKING:
    from qkv.lessons import Catalog, CodeExercise

__all__ = ["check", "defined_functions", "guess_exercise", "terminal_safe"]

EXPANDED_FAILURES = 4  # failures shown with expected vs got and a hint; the rest get one line each
OUTPUT_LINES = 40
# How long to wait for the sandbox started ahead; past that the grader starts one itself (and says why
# when it cannot).
SPARE_WAIT_S = 30.0


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--exercise",
    "exercise_id",
    default=None,
    metavar="ID",
    help="The code exercise as LESSON/EXERCISE, as `qkv lessons list` shows it "
    "(default: the exercise whose functions FILE defines).",
)
@click.option(
    "--content",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A folder of lessons to take the exercise from, instead of the lessons shipped with qkv.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results document as JSON instead.")
@click.option(
    "--seed", type=click.IntRange(min=0), default=None, help="Repeat a run with the seed it printed."
)
def check(file: Path, exercise_id: str | None, content: Path | None, as_json: bool, seed: int | None) -> None:
    """Grade FILE, a solution of a code exercise, against the exercise's hidden tests.

    Without --exercise, the exercise is the one whose functions FILE defines; `qkv lessons list` shows
    every exercise id. Exit status: 0 when every test passed, 1 otherwise, 2 for a usage error.
    """
    from qkv.grading import Grader

    source = _read(file)
    # The sandbox (bubblewrap, Python, NumPy: most of the wait) starts on the other core while this
    # process imports and loads the lessons. On a usage error, leaving the block kills it and removes
    # its cgroups. One grading needs no zygote: it would import NumPy once too, then probe and fork.
    with Grader(warm_spares=1, zygote=False) as grader:
        target = _exercise(content, exercise_id, source)
        if not isinstance(target, click.BadParameter):
            if not as_json:  # imported for _show while the sandbox still starts
                import rich.console
                import rich.panel  # noqa: F401
            assert grader.spares is not None
            grader.spares.stop_refilling(wait_s=SPARE_WAIT_S)
            result = grader.grade(source, target.suite, seed=seed)
    if isinstance(target, click.BadParameter):
        _fail(target)  # once the sandbox is gone
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        _show(result, file, target.id)
    _exit(0 if result.passed else 1)


def _exercise(
    content: Path | None, exercise_id: str | None, source: str
) -> CodeExercise | click.BadParameter:
    """The exercise to grade, or the usage error that says why there is none."""
    from qkv.lessons import LessonError, load_catalog

    context = click.get_current_context()
    try:
        catalog = load_catalog(content)
    except LessonError as error:
        return click.BadParameter(str(error), ctx=context, param_hint="--content")
    try:
        return catalog.code_exercise(exercise_id) if exercise_id else guess_exercise(catalog, source)
    except LessonError as error:
        return click.BadParameter(str(error), ctx=context, param_hint="--exercise")


def _fail(error: click.ClickException) -> NoReturn:
    """Show a usage error and end with its exit status, as click would, but as :func:`_exit` does."""
    if not _whole_process():
        raise error
    error.show()
    _exit(error.exit_code)


def _whole_process() -> bool:
    return click.get_current_context().find_root().obj is WHOLE_PROCESS


def _exit(code: int) -> NoReturn:
    """End ``qkv check`` with exit status ``code``.

    Run as the ``qkv`` process itself, it ends without Python's own shutdown, which frees every module
    and object one by one: about a tenth of a second with NumPy loaded, spent on nothing, since the grader
    is closed and the output written by then. The exit handlers (staged files removed) still run. Called
    any other way (a test's CliRunner), it raises SystemExit as usual.
    """
    if not _whole_process():
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise click.BadParameter(
            f"{str(file)!r} is not UTF-8 text ({error.reason} at byte {error.start}).", param_hint="FILE"
        ) from None
    except OSError as error:
        raise click.BadParameter(
            f"{str(file)!r} could not be read: {error.strerror}.", param_hint="FILE"
        ) from None


def defined_functions(source: str) -> set[str] | None:
    """The names of the top-level functions a file defines; None when it is not valid Python.

    Examples
    --------
    >>> sorted(defined_functions("def area(w, h):\\n    pass\\ndef _helper():\\n    pass\\n"))
    ['_helper', 'area']
    >>> defined_functions("def broken(:") is None
    True
    """
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return None
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def guess_exercise(catalog: Catalog, source: str) -> CodeExercise:
    """The code exercise a file is for: the one whose functions it defines most of, if only one fits."""
    from qkv.lessons import LessonError

    exercises = catalog.code_exercises()
    if len(exercises) == 1:
        return exercises[0]
    defined = defined_functions(source) or set()
    overlap = {entry.id: len(defined & set(entry.exercise.functions)) for entry in exercises}
    best = max(overlap.values(), default=0)
    fits = [entry for entry in exercises if best and overlap[entry.id] == best]
    if len(fits) == 1:
        return fits[0]
    choices = ", ".join(entry.id for entry in (fits or exercises)) or "none"
    reason = (
        "it defines the functions of several exercises"
        if fits
        else "it defines none of the functions an exercise asks for"
    )
    raise LessonError(
        f"Which exercise is this file for? {reason.capitalize()}; choose one with --exercise: {choices}."
    )


def _show(result: object, file: Path, exercise_id: str) -> None:
    from rich.console import Console
    from rich.markup import escape as markup_escape
    from rich.panel import Panel

    from qkv.grading import GradeResult
    from qkv.grading.grader import RLIMITS_ONLY

    assert isinstance(result, GradeResult)

    def escape(text: str) -> str:
        # Everything shown may come from the submission: no markup, and no terminal control sequences.
        return markup_escape(terminal_safe(text))

    console = Console(highlight=False)
    if result.sandbox == RLIMITS_ONLY:
        console.print(
            "[yellow]bubblewrap is not installed, so your code ran with rlimits only, outside a sandbox "
            "(install it with: apt-get install bubblewrap).[/]"
        )
    console.print(
        f"[bold]Checking {escape(str(file))}[/] against {escape(exercise_id)} "
        f"(sandbox: {escape(result.sandbox)}, seed {result.seed})"
    )
    if result.status == "error":
        console.print(f"[red]✗ {escape(result.message or 'No test could run.')}[/]")
    expanded: set[str] = set()  # the first failure of each function is shown in full
    for test in result.tests:
        if test.status == "pass":
            console.print(f"  [green]✓[/] {escape(test.name)}")
            continue
        if test.status == "not_run":
            console.print(f"  [dim]– {escape(test.name)} (not run)[/]")
            continue
        mark = "⏱" if test.status == "timeout" else "✗"
        console.print(f"  [red]{mark}[/] {escape(test.name)}")
        if test.function not in expanded and len(expanded) < EXPANDED_FAILURES and test.message:
            expanded.add(test.function)
            console.print(f"      {escape(test.message)}")
            console.print(f"      [dim]Repeat it: {escape(_clip(test.call))}[/]")
            if test.hint:
                console.print(f"      [cyan]Hint: {escape(test.hint)}[/]")
    if result.output:
        lines = result.output.splitlines()
        shown = "\n".join(lines[:OUTPUT_LINES]) + (
            f"\n… ({len(lines) - OUTPUT_LINES} more lines)" if len(lines) > OUTPUT_LINES else ""
        )
        console.print(Panel(escape(shown), title="your code printed", title_align="left", expand=False))
    passed, total = result.score
    colour = "green" if result.passed else "red"
    summary = f"{passed} of {total} tests passed"
    if result.status == "error":
        summary = result.message or "No test could run."
    elif result.not_run:  # tests that never ran are counted apart, not as failures
        summary = (result.message or summary).rstrip(".")
    console.print(
        f"[bold {colour}]{escape(summary or '')}[/] in {result.duration_ms} ms. "
        f"Repeat this run with: qkv check {escape(str(file))} --exercise {escape(exercise_id)} "
        f"--seed {result.seed}"
    )


def terminal_safe(text: str) -> str:
    r"""``text`` with every control or format character written out, so it cannot drive the terminal.

    A submission's output, messages and values are shown by ``qkv check``; an escape sequence in them
    could clear the screen and draw a forged verdict. Newlines and tabs stay.

    Examples
    --------
    >>> terminal_safe("ok\x1b[2J\n22 of 22 tests passed\u202e")
    'ok\\x1b[2J\n22 of 22 tests passed\\u202e'
    """
    return "".join(
        char
        if char in "\n\t" or unicodedata.category(char) not in {"Cc", "Cf"}
        else (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        for char in text
    )


def _clip(call: str, limit: int = 400) -> str:
    """A long call (large arrays) is cut for the terminal; the JSON document keeps it whole."""
    return call if len(call) <= limit else call[:limit] + " …"
