"""The ``qkv`` command. Each sub-command lives in its own module and only calls into the library."""

from __future__ import annotations

import sys

# The context object of a command run as the ``qkv`` process itself, not called in-process (a test's
# CliRunner): such a command may end the process its own way (qkv.cli.check skips Python's shutdown).
WHOLE_PROCESS = object()


def build() -> object:
    """Build the click group with every sub-command registered, in the order --help lists them."""
    import click

    from qkv import __version__
    from qkv.cli.check import check
    from qkv.cli.grader import grader
    from qkv.cli.instructor import instructor
    from qkv.cli.learners import learners
    from qkv.cli.lessons import lessons
    from qkv.cli.lti import lti
    from qkv.cli.progress import progress
    from qkv.cli.serve import serve

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="qkv")
    def cli() -> None:
        """qkv: queries, keys and values: an interactive course on attention."""

    for command in (check, lessons, serve, grader, progress, instructor, learners, lti):
        cli.add_command(command)
    return cli


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
