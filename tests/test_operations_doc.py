"""docs/operations.md's commands stay true to the CLI: every option of every ``qkv`` command in its shell
blocks (the school's server in 15 minutes, backups, the scale-out examples) is one that command takes."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from qkv.cli import COMMANDS, build

DOC = Path(__file__).parents[1] / "docs" / "operations.md"
_COMMAND = re.compile(r"(?:^|[\s/])qkv ((?:[a-z]+(?: |$))*)(.*)$")


def documented_commands() -> list[tuple[list[str], list[str]]]:
    """``(sub-command words, options)`` of each ``qkv`` command line in the doc's ``sh`` blocks (a word after
    ``qkv`` that names no command, as in ``createdb -O qkv qkv``, is no command line)."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S):
        for line in block.splitlines():
            match = _COMMAND.search(line.split("#", 1)[0].strip())
            if match and match.group(1).split()[:1] and match.group(1).split()[0] in COMMANDS:
                words = match.group(1).split()
                options = re.findall(r"(?<!\S)(--[a-z][a-z0-9-]*)", match.group(2))
                found.append((words, options))
    return found


def test_every_documented_option_is_taken_by_its_command() -> None:
    commands = documented_commands()
    assert len(commands) >= 10
    assert any(words == ["restore"] and "--database-url" in options for words, options in commands)
    assert any(words == ["serve"] and "--secure-cookies" in options for words, options in commands)
    assert any(words == ["grader"] and "--metrics-listen" in options for words, options in commands)
    cli = build()
    unknown = []
    for words, options in commands:
        helped = CliRunner().invoke(cli, [*words, "--help"])  # type: ignore[arg-type]
        assert helped.exit_code == 0, (words, helped.output)
        unknown += [f"qkv {' '.join(words)} {option}" for option in options if option not in helped.output]
    assert unknown == []
