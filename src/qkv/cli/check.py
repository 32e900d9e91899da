"""``qkv check FILE``: grade a solution of the lesson's code exercise and show the results."""

from __future__ import annotations

import json
from pathlib import Path

import click

__all__ = ["check"]

EXPANDED_FAILURES = 4  # failures shown with expected vs got and a hint; the rest get one line each
OUTPUT_LINES = 40


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the results document as JSON instead.")
@click.option(
    "--seed", type=click.IntRange(min=0), default=None, help="Repeat a run with the seed it printed."
)
@click.option("--suite", default="L4.1-part2", show_default=True, help="The exercise's test suite.")
def check(file: Path, as_json: bool, seed: int | None, suite: str) -> None:
    """Grade FILE, a solution of the Part 2 code exercise (the four functions).

    Exit status: 0 when every test passed, 1 otherwise, 2 for a usage error.
    """
    from qkv.grading import SUITES, Grader

    if suite not in SUITES:
        known = ", ".join(SUITES)
        raise click.BadParameter(
            f"there is no suite called {suite!r}; the known suites are {known}.", param_hint="--suite"
        )
    try:
        source = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise click.BadParameter(
            f"{str(file)!r} is not UTF-8 text ({error.reason} at byte {error.start}).", param_hint="FILE"
        ) from None
    except OSError as error:
        raise click.BadParameter(
            f"{str(file)!r} could not be read: {error.strerror}.", param_hint="FILE"
        ) from None
    with Grader() as grader:
        result = grader.grade(source, suite=suite, seed=seed)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        _show(result, file)
    raise SystemExit(0 if result.passed else 1)


def _show(result: object, file: Path) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel

    from qkv.grading import GradeResult
    from qkv.grading.grader import RLIMITS_ONLY

    assert isinstance(result, GradeResult)
    console = Console(highlight=False)
    if result.sandbox == RLIMITS_ONLY:
        console.print(
            "[yellow]bubblewrap is not installed, so your code ran with rlimits only, outside a sandbox "
            "(install it with: apt-get install bubblewrap).[/]"
        )
    console.print(
        f"[bold]Checking {escape(str(file))}[/] (sandbox: {escape(result.sandbox)}, seed {result.seed})"
    )
    if result.status == "error":
        console.print(f"[red]✗ {escape(result.message or 'No test could run.')}[/]")
    expanded: set[str] = set()  # the first failure of each function is shown in full
    for test in result.tests:
        if test.status == "pass":
            console.print(f"  [green]✓[/] {escape(test.name)}")
            continue
        mark = "⏱" if test.status == "timeout" else "✗"
        console.print(f"  [red]{mark}[/] {escape(test.name)}")
        function = test.name.split(" ", 1)[0]
        if function not in expanded and len(expanded) < EXPANDED_FAILURES and test.message:
            expanded.add(function)
            console.print(f"      {escape(test.message)}")
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
    summary = result.message if result.status == "error" else f"{passed} of {total} tests passed"
    console.print(
        f"[bold {colour}]{escape(summary or '')}[/] in {result.duration_ms} ms. "
        f"Repeat this run with: qkv check {escape(str(file))} --seed {result.seed}"
    )
