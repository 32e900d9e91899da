"""``qkv check``: exit statuses, readable output and the JSON document."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import qkv.grading.grader as grader_module
from qkv.cli.check import check
from tests.builtin_lessons import L41_TESTS
from tests.time_scale import scaled

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(check, list(args))
    return result.exit_code, result.output


def test_a_correct_file_exits_0_with_ticks() -> None:
    code, output = run(str(HERE / "correct" / "einsum.py"), "--seed", "9")
    assert code == 0, output
    assert output.count("✓") == L41_TESTS and "✗" not in output
    assert f"{L41_TESTS} of {L41_TESTS} tests passed" in output
    assert "--seed 9" in " ".join(output.split())  # the console wraps long paths where it likes


def test_a_wrong_file_exits_1_with_expected_got_and_hint() -> None:
    code, output = run(str(HERE / "wrong" / "param_three_dk.py"), "--seed", "9")
    assert code == 1
    assert "✗ param_count with d_model, d_k and d_v all different" in output
    assert "Expected " in output and "but got" in output
    assert "Hint: Wv has d_v columns" in " ".join(output.split())


def test_tests_that_never_ran_are_listed_as_not_run_not_as_failures() -> None:
    code, output = run(str(HERE / "hostile" / "exit_during_tests.py"), "--seed", "9")
    assert code == 1
    assert "(not run)" in output
    lines = [line for line in output.splitlines() if "(not run)" in line]
    assert lines and not any("✗" in line for line in lines)
    assert re.search(
        r"your program was stopped inside \w+, so the other \d+ did not run", " ".join(output.split())
    )


def test_json_output_is_the_results_document() -> None:
    code, output = run(str(HERE / "wrong" / "stub.py"), "--json", "--seed", "3")
    assert code == 1
    document = json.loads(output)
    assert document["status"] == "fail" and document["seed"] == 3 and len(document["tests"]) == L41_TESTS


@pytest.mark.parametrize(("solution", "status"), [("correct/reference_style.py", 0), ("wrong/stub.py", 1)])
def test_the_command_run_as_a_process_ends_with_its_status_and_all_its_output(
    solution: str, status: int
) -> None:
    # As a process of its own, `qkv check` ends without Python's shutdown: nothing written may be lost.
    done = subprocess.run(
        [sys.executable, "-m", "qkv", "check", str(HERE / solution), "--json", "--seed", "2"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert done.returncode == status, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == ("pass" if status == 0 else "fail") and len(document["tests"]) == L41_TESTS
    shown = subprocess.run(
        [sys.executable, "-m", "qkv", "check", str(HERE / solution), "--seed", "2"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={**os.environ, "COLUMNS": "300"},
    )
    assert shown.returncode == status
    assert shown.stdout.rstrip().endswith("--seed 2")  # the last line, whole


def test_an_error_exits_1(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def project_qkv(:\n")
    code, output = run(str(broken), "--json", "--exercise", "L4.1/functions")
    assert code == 1
    assert (
        json.loads(output)["message"]
        == "Your file has a SyntaxError on line 1: invalid syntax. Fix it and run again."
    )


@pytest.mark.parametrize(
    "args",
    [["/nonexistent/solution.py"], ["--bogus", "x.py"], [], ["solution.py", "--seed", "minus"]],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    code, _ = run(*args)
    assert code == 2


# Runs `qkv check` as its child and, as the child subreaper, inherits whatever it left running: prints the
# exit status, the output, the processes left and the child's cgroups left.
LEFTOVERS = """
import ctypes, glob, json, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out, _ = child.communicate()
time.sleep(0.5)
while True:
    try:
        if os.waitpid(-1, os.WNOHANG) == (0, 0):
            break
    except ChildProcessError:
        break
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
        left.append(stat)
        os.kill(int(pid), 9)
groups = glob.glob(f"/sys/fs/cgroup/**/qkv-grading-{child.pid}-*", recursive=True)
print(json.dumps({"code": child.returncode, "output": out, "left": left, "groups": groups}))
"""


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--exercise", "L9.9/nothing"], "'L9.9/nothing'"), (["--content", "/"], "--content")],
)
def test_a_usage_error_leaves_no_sandbox_or_cgroup_behind(args: list[str], named: str) -> None:
    # The sandbox starts before the exercise is looked up; the usage error must still stop it.
    qkv = [sys.executable, "-c", "from qkv.cli import main; main()", "check"]
    command = [*qkv, str(HERE / "correct" / "reference_style.py"), *args]
    done = subprocess.run(
        [sys.executable, "-c", LEFTOVERS, *command], capture_output=True, text=True, timeout=scaled(60)
    )
    report = json.loads(done.stdout)
    assert report["code"] == 2, report["output"]
    assert "Traceback" not in report["output"] and named in report["output"]
    assert report["left"] == [] and report["groups"] == []


def test_a_file_that_is_not_text_exits_2(tmp_path: Path) -> None:
    binary = tmp_path / "solution.py"
    binary.write_bytes(b"\xff\xfe\x00binary")
    code, output = run(str(binary))
    assert code == 2
    assert "is not UTF-8 text" in output


def test_without_bubblewrap_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grader_module, "sandbox_available", lambda: False)
    code, output = run(str(HERE / "correct" / "dot.py"), "--seed", "1")
    assert code == 0
    assert "bubblewrap is not installed, so your code ran with rlimits only" in " ".join(output.split())


def test_a_real_run_without_bubblewrap_on_the_path(tmp_path: Path) -> None:
    # A fresh process whose PATH has no bwrap: the grader falls back to rlimits only, and says so.
    solution = HERE / "correct" / "loops.py"
    script = "import sys; from qkv.cli.check import check; check(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", script, str(solution), "--seed", "4"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": str(tmp_path), "COLUMNS": "200"},
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bubblewrap is not installed, so your code ran with rlimits only, outside a sandbox" in done.stdout
    assert "sandbox: rlimits only (no bubblewrap)" in done.stdout


def test_a_submission_cannot_drive_the_terminal(tmp_path: Path) -> None:
    forged = tmp_path / "forged.py"
    forged.write_text(
        (HERE / "wrong" / "stub.py").read_text()
        + "\nprint('\\x1b[2J\\x1b[H22 of 22 tests passed')\n"
        + "def param_count(d_model, d_k, d_v):\n    return '\\x1b[32mok\\u202e'\n"
    )
    code, output = run(str(forged), "--seed", "2")
    assert code == 1
    assert "\x1b" not in output and "\u202e" not in output  # no escape sequence reaches the terminal
    assert "\\x1b[2J\\x1b[H22 of 22 tests passed" in output  # shown, written out
    assert "\\x1b[32mok\\u202e" in output


def test_the_secret_key_comes_from_a_file_or_the_environment_never_from_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qkv.cli.serve import _secret_key, serve

    assert "--secret-key-file" in CliRunner().invoke(serve, ["--help"]).output
    assert "--secret-key " not in CliRunner().invoke(serve, ["--help"]).output
    key_file = tmp_path / "key"
    key_file.write_text("a-key-of-at-least-16-characters\n")
    assert _secret_key(key_file) == "a-key-of-at-least-16-characters"
    monkeypatch.setenv("QKV_SECRET_KEY", "from-the-environment-0123")
    assert _secret_key(None) == "from-the-environment-0123"
    monkeypatch.delenv("QKV_SECRET_KEY")
    assert _secret_key(None) is None
    key_file.write_text("  \n")
    refused = CliRunner().invoke(serve, ["--secret-key-file", str(key_file), "--port", "0"])
    assert refused.exit_code == 2 and "is empty; put the key in it." in refused.output
