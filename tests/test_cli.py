"""The ``qkv`` command as a learner or instructor starts it: help, version, both entry points."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import qkv


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "qkv", *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"qkv, version {qkv.__version__}"


def test_help_lists_every_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("check", "lessons", "progress", "serve"):
        assert f"  {command} " in result.stdout


def test_the_console_script_is_the_same_program() -> None:
    script = shutil.which("qkv", path=str(Path(sys.executable).parent))
    assert script is not None, "the qkv console script is not installed next to this Python"
    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == f"qkv, version {qkv.__version__}"


def test_an_unknown_command_is_a_usage_error() -> None:
    result = run("grade")
    assert result.returncode == 2
    assert "No such command 'grade'" in result.stderr
