"""Hostile submissions, run in the real sandbox: none may pass, and none may leave a trace."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy
import pytest

from qkv.grading import Grader, GradeResult, Limits, SandboxStart, sandbox_available
from qkv.grading.sandbox.cgroups import cgroups_available
from tests.builtin_lessons import L41_SUITE, L41_TESTS

HOSTILE = Path(__file__).parent / "hostile"
WALL_S = 2.0  # shorter than the real 10 s so that the looping ones keep the suite fast

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
    ),
]


@pytest.fixture(scope="module", params=list(SandboxStart), ids=lambda start: start.name.lower())
def strict_grader(request: pytest.FixtureRequest) -> Iterator[Grader]:
    """The corpus runs in both kinds of sandbox: forked from the zygote, and a fresh interpreter."""
    forked = request.param is SandboxStart.FORKED
    with Grader(require_sandbox=True, limits=Limits(wall_s=WALL_S), zygote=forked) as grader:
        assert grader.start_mode is request.param
        yield grader


def grade(grader: Grader, name: str, **replacements: str) -> GradeResult:
    source = (HOSTILE / name).read_text()
    for placeholder, value in replacements.items():
        source = source.replace(placeholder, value)
    result = grader.grade(source, L41_SUITE, seed=3)
    assert result.status != "pass", f"{name} passed: {result.message}"
    assert result.sandbox == "bubblewrap"
    return result


def processes_named(name: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            comm, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
            if comm == name and state != "Z":  # a zombie is already dead, only not yet reaped
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.slow
def test_an_infinite_loop_at_import_hits_the_wall_clock(strict_grader: Grader) -> None:
    result = grade(strict_grader, "infinite_loop.py")
    assert result.status == "error"
    assert result.message == (
        "Your code ran past the 2 s time limit, so it was stopped. "
        "This happened while your file was being loaded, so no test could run."
    )
    assert result.duration_ms >= WALL_S * 1000  # the clock, not something else, ended it


@pytest.mark.slow
def test_an_infinite_loop_in_a_test_times_out_that_test(strict_grader: Grader) -> None:
    result = grade(strict_grader, "infinite_loop_in_test.py")
    in_run_order = sorted(result.tests, key=lambda test: test.ran)  # the calls run in a shuffled order
    statuses = [test.status for test in in_run_order]
    first = statuses.index("timeout")
    assert in_run_order[first].name.startswith("param_count")
    assert in_run_order[first].message.startswith(
        "Your code ran past the 2 s time limit, so it was stopped. It was stopped inside "
    )
    assert set(statuses[:first]) <= {"pass"} and set(statuses[first + 1 :]) == {"not_run"}
    assert result.status == "fail"
    # Tests that never ran are counted apart: the summary does not call them failures.
    assert result.message is not None and "so the other" in result.message and "did not run" in result.message
    assert result.not_run == len(statuses) - first - 1


def test_a_memory_bomb_is_reported_by_name(strict_grader: Grader) -> None:
    result = grade(strict_grader, "memory_bomb.py")
    assert result.status == "error"
    assert result.message is not None
    assert result.message.startswith("Your code used more than 1 GiB of memory, so it was stopped.")


def test_a_memory_bomb_inside_a_function_fails_that_test(strict_grader: Grader) -> None:
    result = grade(strict_grader, "memory_bomb_numpy.py")
    errors = [test for test in result.tests if test.status == "error"]
    assert errors and all(test.name.startswith("output_shape") for test in errors)
    assert errors[0].message == "Your code used more than 1 GiB of memory, so it was stopped."


@pytest.mark.skipif(not cgroups_available(), reason="no pids cgroup (v1, or v2 with pids) can be made here")
def test_a_bounded_fork_flood_hits_the_process_limit_and_leaves_nothing(strict_grader: Grader) -> None:
    result = grade(strict_grader, "fork_flood.py")  # the file itself stops after 200 forks
    assert result.status == "error"
    assert result.message is not None
    assert result.message.startswith("Your code started too many processes (the limit is 16)")
    assert processes_named("qkvfloodchild") == []


def test_the_network_is_unreachable_even_on_loopback(strict_grader: Grader) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.2)
        result = grade(strict_grader, "network.py", PORT_PLACEHOLDER=str(server.getsockname()[1]))
        with pytest.raises(TimeoutError):
            server.accept()
    assert result.status == "error"
    # The seccomp filter refuses every socket family but AF_UNIX, before the (empty) network namespace is reached.
    assert "[Errno 97] Address family not supported by protocol" in (result.message or "")


def test_nothing_outside_tmp_is_writable(strict_grader: Grader) -> None:
    target = Path(__file__).parent / "escape-target.txt"
    result = grade(strict_grader, "write_outside_tmp.py", TARGET_PLACEHOLDER=str(target))
    assert result.status == "error"
    assert "nothing outside /tmp was writable" not in (result.message or "")  # SystemExit hides its text
    assert not target.exists()
    assert not Path("/escaped.txt").exists()


def test_secrets_and_the_project_are_invisible(strict_grader: Grader, tmp_path: Path) -> None:
    planted = [tmp_path / "planted-grades.db", Path(__file__).parent / "planted-id_rsa"]
    for path in planted:
        path.write_text("secret")
    try:
        result = grade(strict_grader, "search_secrets.py", PLANTED_PLACEHOLDER="planted")
    finally:
        for path in planted:
            path.unlink()
    assert result.status == "error"
    assert "planted" not in result.output
    assert "/work" not in result.output and "qkv" not in result.output


def test_the_qkv_package_cannot_be_imported(strict_grader: Grader) -> None:
    result = grade(strict_grader, "import_qkv.py")
    assert result.status == "error"
    assert result.message == (
        "Your file could not import a module on line 3 (No module named 'qkv'): only NumPy and Python's "
        "standard library are available."
    )


def test_printing_a_fake_result_changes_nothing(strict_grader: Grader) -> None:
    result = grade(strict_grader, "fake_print.py")
    assert result.status == "fail"
    assert result.score == (0, L41_TESTS)
    assert '"status": "pass"' in result.output  # it was printed, and ignored


def test_sys_exit_at_import_is_an_error(strict_grader: Grader) -> None:
    result = grade(strict_grader, "sys_exit.py")
    assert result.status == "error"
    assert result.message == (
        "Your file called sys.exit() or exit() while it was being loaded, so no test could run. Remove that call."
    )


def test_os_exit_at_import_is_an_error(strict_grader: Grader) -> None:
    result = grade(strict_grader, "os_exit.py")
    assert result.status == "error"
    assert result.message == (
        "Your code ended the program early (exit status 0): remove calls to sys.exit(), exit() or os._exit(). "
        "This happened while your file was being loaded, so no test could run."
    )
    assert result.output == "All tests passed!\n"


def test_exiting_during_the_tests_errors_that_test_and_the_rest_did_not_run(strict_grader: Grader) -> None:
    result = grade(strict_grader, "exit_during_tests.py")
    in_run_order = sorted(result.tests, key=lambda test: test.ran)  # the calls run in a shuffled order
    statuses = [test.status for test in in_run_order]
    stopped = statuses.index("error")  # the third project_qkv call, wherever the shuffle put it
    assert in_run_order[stopped].function == "project_qkv"
    assert [test.function for test in in_run_order[:stopped]].count("project_qkv") == 2
    assert set(statuses[:stopped]) <= {"pass", "fail"} and set(statuses[stopped + 1 :]) == {"not_run"}
    after = in_run_order[stopped + 1]
    assert after.message == "Not run: your program was stopped earlier, inside project_qkv."
    assert after.got is None and after.expected


def test_patching_numpy_comparisons_does_not_help(strict_grader: Grader) -> None:
    result = grade(strict_grader, "patch_numpy.py")
    assert result.status == "fail"
    structural = ("returns the tuple", "uses the keys", "each shape as a tuple", "returns a tuple")
    passed = [test.name for test in result.tests if test.status == "pass"]
    assert all(any(part in name for part in structural) for name in passed), passed


def test_tampering_with_the_harness_is_an_error(strict_grader: Grader) -> None:
    result = grade(strict_grader, "tamper_harness.py")
    assert result.status == "error"
    assert result.message is not None
    assert result.message.startswith("Your code interfered with the grader's report")


def test_killing_the_parent_leaves_the_grader_working(strict_grader: Grader) -> None:
    result = grade(strict_grader, "kill_parent.py")
    assert result.status == "fail"
    again = strict_grader.grade((Path(__file__).parent / "correct" / "dot.py").read_text(), L41_SUITE, seed=3)
    assert again.status == "pass"


def test_an_output_flood_is_cut_off_with_a_marker(strict_grader: Grader) -> None:
    result = grade(strict_grader, "output_flood.py")
    assert result.status == "fail", result.message
    marker = "[… output truncated: your code printed more than 64 KiB on stdout; the rest was discarded …]"
    assert result.output.endswith(marker + "\n")
    assert len(result.output) < 64 * 1024 + 200


def test_a_huge_file_in_tmp_is_stopped_by_name(strict_grader: Grader) -> None:
    result = grade(strict_grader, "file_size.py")
    assert result.status == "error"
    assert result.message == (
        "Your code wrote more than 16 MiB to a file or to /tmp, the most allowed, so the write failed. "
        "This happened while your file was being loaded, so no test could run."
    )


def test_too_many_open_files_are_stopped_by_name(strict_grader: Grader) -> None:
    result = grade(strict_grader, "open_files.py")
    assert result.status == "error"
    assert result.message == (
        "Your code opened more than 64 files at once, the most allowed. "
        "This happened while your file was being loaded, so no test could run."
    )


@pytest.mark.slow
def test_the_cpu_time_limit_is_reported_by_name() -> None:
    # A generous wall clock, so that the CPU limit strikes first even on a busy machine.
    with Grader(require_sandbox=True, limits=Limits(wall_s=60.0, cpu_s=1)) as grader:
        result = grade(grader, "cpu_burn.py")
    burnt = next(test for test in sorted(result.tests, key=lambda test: test.ran) if test.status == "error")
    assert burnt.function == "project_qkv"  # the first project_qkv call, wherever the shuffle put it
    assert burnt.message.startswith(
        "Your code used more than 1 s of CPU time, so it was stopped. It was stopped inside "
    )


def test_vsock_inet_system_v_ipc_and_terminals_are_refused_inside(strict_grader: Grader) -> None:
    result = grade(strict_grader, "ipc_and_terminals.py")
    lines = dict(line.split(": ", 1) for line in result.output.splitlines() if ": " in line)
    assert lines["vsock"] == "refused errno 97"  # EAFNOSUPPORT, from the seccomp filter
    assert lines["inet"] == "refused errno 97"
    assert lines["unix"] == "allowed None"  # what Python itself may need
    assert lines["shmget"] == lines["msgget"] == lines["semget"] == "refused errno 1"  # EPERM
    assert lines["openpty"].startswith("refused errno")  # no /dev/pts inside: no terminal to hold


def test_a_class_named_value_error_is_not_a_value_error(strict_grader: Grader) -> None:
    result = grade(strict_grader, "fake_value_error.py", PLACEHOLDER_BASE="TypeError")
    refused = [test for test in result.tests if "raises ValueError" in test.name]
    assert refused and all(test.status == "fail" for test in refused)
    assert refused[0].message is not None and refused[0].message.endswith(
        "(a class of your own named ValueError, which is a TypeError, not Python's ValueError)"
    )
    passed = {test.name for test in result.tests if test.status == "pass"}
    assert passed == {test.name for test in result.tests} - {test.name for test in refused}


def test_a_subclass_of_value_error_is_a_value_error(strict_grader: Grader) -> None:
    # isinstance, not the name: a learner's own ShapeError(ValueError) is a ValueError.
    source = (
        (HOSTILE / "fake_value_error.py")
        .read_text()
        .replace("class ValueError(PLACEHOLDER_BASE):", "class ShapeError(ValueError):")
        .replace('raise ValueError("bad shapes")', 'raise ShapeError("bad shapes")')
    )
    result = strict_grader.grade(source, L41_SUITE, seed=3)
    assert result.status == "pass", [
        (test.name, test.message) for test in result.tests if test.status != "pass"
    ]


REFUSED_CALLS = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "memfd_secret",
    "memfd_create",
    "ptrace",
    "bpf",
    "userfaultfd",
    "perf_event_open",
    "process_vm_readv",
    "kexec_load",
    "mount",
    "unshare",
    "pidfd_getfd",
)


def test_dangerous_calls_get_eperm_and_the_learner_an_ordinary_verdict(strict_grader: Grader) -> None:
    # The red-team's io_uring attack made and bound a vsock socket without socket(): io_uring_setup is
    # refused now, so no ring exists to submit IORING_OP_SOCKET to. The arguments make each call's own
    # answer differ from EPERM (EFAULT, EINVAL, a key id), so EPERM here is the filter's.
    result = grade(strict_grader, "refused_calls.py")
    lines = dict(line.split(": ", 1) for line in result.output.splitlines() if ": " in line)
    assert {name: lines.get(name) for name in REFUSED_CALLS} == dict.fromkeys(REFUSED_CALLS, "errno 1")
    assert lines["vsock"] == "errno 97"  # EAFNOSUPPORT: the socket is never made, so never bound
    assert "still running" in result.output  # a refusal is an error code, not a kill
    assert result.status == "fail"
    failed = {test.function for test in result.tests if test.status != "pass"}
    assert failed == {"param_count"}, [(test.name, test.message) for test in result.tests]


def test_proc_inside_shows_no_host_path_and_no_qkv_variable(strict_grader: Grader) -> None:
    result = grade(strict_grader, "proc_view.py")
    output = result.output
    if strict_grader.start_mode is SandboxStart.FORKED:  # it did read them: the sandbox's init is...
        assert "/proc/1/cmdline: /usr/bin/python3" in output and "/grader/zygote.pyc" in output  # ...a fork
    else:
        assert "/proc/1/cmdline: /usr/bin/bwrap --args" in output  # ...bubblewrap's
    assert "/proc/self/mountinfo: " in output and "sys.executable: /usr/bin/python" in output
    host = {
        "the repository": str(Path(__file__).resolve().parents[2]),
        "the virtual environment": os.path.realpath(sys.prefix),
        "the interpreter's home": os.path.realpath(sys.base_prefix),
        "the interpreter": os.path.realpath(sys._base_executable),  # type: ignore[attr-defined]
        "NumPy": os.path.dirname(os.path.realpath(numpy.__file__)),
    }
    # A system Python's own paths (/usr/bin/python3.11, /usr/lib/python3.11) are what the sandbox shows anyway.
    shown = {
        what: path for what, path in host.items() if path in output and not f"{path}/".startswith("/usr/")
    }
    assert shown == {}, "host paths visible inside the sandbox"
    assert "qkv" not in output.lower()  # no QKV_ variable, no path of the project


def test_the_page_cache_of_shared_files_carries_nothing_to_a_later_sandbox(strict_grader: Grader) -> None:
    # One learner's sandbox writes a 32-bit token into the page cache of NumPy files every sandbox reads
    # (evicting a page for a 0, reading it for a 1); a later one reads it back by asking which pages are
    # cached. Every call that evicts or asks is refused with EPERM, so the receiver can tell no bit; plain
    # reads and the advice malloc gives still work (docs/grading.md: what remains).
    token = "2781089686"  # 0xA5C30F96
    sent = grade(strict_grader, "page_cache_channel.py", MODE_PLACEHOLDER="send", TOKEN_PLACEHOLDER=token)
    got = grade(strict_grader, "page_cache_channel.py", MODE_PLACEHOLDER="receive", TOKEN_PLACEHOLDER="0")
    lines = {
        name: answer
        for output in (sent.output, got.output)
        for name, answer in (line.split(": ", 1) for line in output.splitlines() if ": " in line)
    }
    refused = ("fadvise64", "readahead", "madvise_pageout", "madvise_cold", "preadv2_nowait", "mincore")
    assert {name: lines.get(name) for name in refused} == dict.fromkeys(refused, "errno 1"), lines
    assert lines["madvise_dontneed"] == "allowed" and lines["preadv"] == "allowed"
    assert lines["received"] == "?" * 32
    assert "still running" in sent.output and "still running" in got.output
    assert {test.function for test in got.tests if test.status != "pass"} == {"param_count"}
