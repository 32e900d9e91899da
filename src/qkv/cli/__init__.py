"""The ``qkv`` command. Each sub-command lives in its own module and only calls into the library."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

# The context object of a command run as the ``qkv`` process itself, not called in-process (a test's
# CliRunner): such a command may end the process its own way (qkv.cli.check skips Python's shutdown).
WHOLE_PROCESS = object()


def build() -> object:
    """The click group of every sub-command, each imported only when it runs or ``--help`` lists it.

    ``qkv check`` so imports neither the web server nor the lessons before it starts its sandbox, which
    then starts while the lessons load.
    """
    import click

    from qkv import __version__

    class Commands(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(COMMANDS)

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            return _command(cmd_name) if cmd_name in COMMANDS else None

    @click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="qkv")
    def cli() -> None:
        """qkv: queries, keys and values: an interactive course on attention."""

    return cli


COMMANDS = (
    "backup",
    "check",
    "courses",
    "grader",
    "instructor",
    "learners",
    "lessons",
    "lti",
    "mistakes",
    "progress",
    "regrade",
    "restore",
    "serve",
)


def _command(name: str) -> click.Command:
    """The sub-command ``name`` of :data:`COMMANDS`, its module imported now."""
    if name in {"backup", "restore"}:
        from qkv.cli import backup

        command: click.Command = getattr(backup, name)
        return command
    if name == "check":
        from qkv.cli.check import check

        return check
    if name == "courses":
        from qkv.cli.courses import courses

        return courses
    if name == "grader":
        from qkv.cli.grader import grader

        return grader
    if name == "instructor":
        from qkv.cli.instructor import instructor

        return instructor
    if name == "learners":
        from qkv.cli.learners import learners

        return learners
    if name == "lessons":
        from qkv.cli.lessons import lessons

        return lessons
    if name == "mistakes":
        from qkv.cli.mistakes import mistakes

        return mistakes
    if name == "lti":
        from qkv.cli.lti import lti

        return lti
    if name == "progress":
        from qkv.cli.progress import progress

        return progress
    if name == "regrade":
        from qkv.cli.regrade import regrade

        return regrade
    from qkv.cli.serve import serve

    return serve


def main() -> None:
    """Entry point of the ``qkv`` console script and ``python -m qkv``."""
    try:
        import click  # noqa: F401
        import rich  # noqa: F401
    except ModuleNotFoundError as missing:
        sys.stderr.write(
            f"The qkv command needs the '{missing.name}' package, which is not installed. "
            "Install the command-line extra with: pip install 'qkv[cli]'\n"
        )
        raise SystemExit(2) from None
    cli = build()
    cli(prog_name="qkv", obj=WHOLE_PROCESS)  # type: ignore[operator]
