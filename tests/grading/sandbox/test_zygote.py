"""Sandboxes forked from the zygote: each is as new as a freshly started one, and the zygote survives them.

The hostile and red-team corpora run in both kinds of sandbox (tests/grading/test_hostile.py and
test_redteam.py); these are the properties that only a forked sandbox could lose: capabilities left over
from building it, a way back into a user namespace, and anything shared with an earlier or concurrent
submission (files, processes, module state).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

import qkv.grading.grader as grader_module
from qkv.grading import Grader, GradeResult, SandboxStart, sandbox_available
from qkv.grading.compare import Whole
from qkv.grading.sandbox.cgroups import cgroups_available
from qkv.grading.sandbox.process import drop_to_unprivileged_uid
from qkv.grading.sandbox.zygote_client import Zygote, ZygoteError
from qkv.grading.suite import Suite, TestCase
from tests.builtin_lessons import L41_SUITE
from tests.time_scale import scaled

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not sandbox_available() or not cgroups_available(),
        reason="the zygote needs bubblewrap (apt-get install bubblewrap) and cgroups",
    ),
]

ONE = Suite(["one"], [TestCase("one", "one", (), lambda: 1, Whole())])
ONE_PATIENT = Suite(
    ["one"], [TestCase("one", "one", (), lambda: 1, Whole())], time_limit_s=min(60.0, scaled(30.0))
)
PASSING = "def one():\n    return 1\n"

PRIVILEGES = (
    """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)

def attempt(name, call):
    ctypes.set_errno(0)
    result = call()
    print(name, "ok" if result != -1 else errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))

with open("/proc/self/status") as status:
    for line in status:
        if line.startswith(("Cap", "NoNewPrivs", "Seccomp:", "Uid")):
            print(line.strip().replace("\\t", " "))
CLONE_NEWUSER, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x40000000, 17
attempt("unshare-user", lambda: libc.unshare(CLONE_NEWUSER))
attempt("clone-user", lambda: libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0))
attempt("clone-net", lambda: libc.syscall(56, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0))
attempt("clone3", lambda: libc.syscall(435, 0, 0))
attempt("mount", lambda: libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None))
attempt("setuid-0", lambda: libc.setuid(0))
try:
    with open("/proc/1/mem", "rb") as memory:  # the sandbox's init: same uid, but not dumpable
        print("init-memory", "readable")
except OSError as error:
    print("init-memory", errno.errorcode[error.errno])
pid = os.fork()  # plain forks still work
if pid == 0:
    os._exit(7)
print("fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""
    + PASSING
)


@pytest.fixture(scope="module")
def forking_grader() -> Iterator[Grader]:
    with Grader(require_sandbox=True) as grader:
        assert grader.start_mode is SandboxStart.FORKED
        yield grader


def output_of(grader: Grader, source: str) -> str:
    result = grader.grade(source, ONE, seed=1)
    assert result.status == "pass", (result.message, result.output)
    return result.output


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the program calls x86-64 system call numbers")
def test_a_forked_sandbox_holds_no_capability_and_cannot_make_namespaces(forking_grader: Grader) -> None:
    lines = dict(line.split(" ", 1) for line in output_of(forking_grader, PRIVILEGES).splitlines())
    for capabilities in ("CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"):
        assert int(lines[capabilities], 16) == 0, (capabilities, lines[capabilities])
    assert lines["NoNewPrivs:"] == "1" and lines["Seccomp:"] == "2"
    assert lines["unshare-user"] == "EPERM"  # refused by the filter
    assert lines["clone-user"] == "EPERM" and lines["clone-net"] == "EPERM"  # clone's namespace flags
    assert lines["clone3"] == "ENOSYS"  # its flags are out of the filter's reach: the C library falls back
    assert lines["mount"] == "EPERM"
    assert lines["setuid-0"] == "EPERM"
    assert lines["init-memory"] == "EACCES"
    assert lines["fork"] == "7"


def test_nothing_of_one_submission_reaches_the_next(forking_grader: Grader) -> None:
    polluter = (
        "import builtins, json, numpy, sys\n"
        "builtins.left_behind = 1\n"
        "numpy.left_behind = 1\n"
        "json.dumps = None\n"
        "sys.modules['left_behind'] = sys\n"
        "open('/tmp/left-behind', 'w').write('x')\n" + PASSING
    )
    looker = (
        "import builtins, json, numpy, os, sys\n"
        "print('builtins', hasattr(builtins, 'left_behind'), 'numpy', hasattr(numpy, 'left_behind'))\n"
        "print('json', json.dumps is None, 'modules', 'left_behind' in sys.modules)\n"
        "print('tmp', sorted(os.listdir('/tmp')))\n" + PASSING
    )
    output_of(forking_grader, polluter)
    assert output_of(forking_grader, looker).splitlines() == [
        "builtins False numpy False",
        "json False modules False",
        "tmp []",
    ]


def test_concurrent_sandboxes_do_not_see_each_other(forking_grader: Grader) -> None:
    sleeper = "import time\nopen('/tmp/sleeper-was-here', 'w').write('x')\ntime.sleep(2)\n" + PASSING
    looker = (
        "import os\n"
        "print('pids', sorted(int(pid) for pid in os.listdir('/proc') if pid.isdigit()))\n"
        "print('tmp', sorted(os.listdir('/tmp')))\n" + PASSING
    )
    neighbour = threading.Thread(target=output_of, args=(forking_grader, sleeper))
    neighbour.start()
    try:
        time.sleep(0.5)  # the sleeper is running (its sandbox started well within this)
        lines = output_of(forking_grader, looker).splitlines()
    finally:
        neighbour.join()
    assert lines == ["pids [1, 2]", "tmp []"]  # its own init and itself; nobody's files


def test_a_killed_zygote_is_replaced_and_grading_goes_on() -> None:
    with Grader(require_sandbox=True) as grader:
        assert grader.start_mode is SandboxStart.FORKED
        first = grader._zygotes[0]
        os.kill(first.host_pid, signal.SIGKILL)
        first.process.wait(timeout=scaled(10))
        result = grader.grade(PASSING, ONE, seed=1)
        assert result.status == "pass", result.message
        assert grader.start_mode is SandboxStart.FORKED
        assert grader._zygotes[0] is not first


def test_a_sandbox_killed_mid_run_leaves_the_zygote_serving(forking_grader: Grader) -> None:
    looping = "while True:\n    pass\n"
    stopped = forking_grader.grade_first_slice(looping, L41_SUITE, seed=1, slice_s=0.2)
    assert not isinstance(stopped, GradeResult) and stopped.paused
    stopped.discard()  # the set-aside sandbox is killed from outside, mid-run
    assert forking_grader.grade(PASSING, ONE, seed=2).status == "pass"


def test_without_the_zygote_sandboxes_start_fresh_interpreters() -> None:
    with Grader(require_sandbox=True, zygote=False) as grader:
        assert grader.start_mode is SandboxStart.FRESH
        result = grader.grade("import sys\nprint(sys.argv[0])\n" + PASSING, ONE, seed=1)
    assert result.status == "pass" and result.output.strip() == "/grader/harness.pyc"


def test_a_zygote_whose_children_cannot_set_up_fails_its_probe_with_their_reason() -> None:
    prefix = drop_to_unprivileged_uid()[0] if os.geteuid() == 0 else []
    broken_filter = bytes(8)  # one instruction the kernel refuses (opcode 0 with nothing after it)
    zygote = Zygote(1 << 20, broken_filter, prefix)
    try:
        with pytest.raises(
            ZygoteError, match=r"did not get ready \(the sandbox could not be set up: .*seccomp"
        ):
            zygote.probe()
        assert zygote.alive()  # the zygote itself is fine: only what its children do was refused
    finally:
        zygote.close()


def test_a_grader_whose_zygote_fails_its_probe_starts_fresh_interpreters(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(grader_module, "filter_for_this_machine", lambda: bytes(8))
    with Grader(require_sandbox=True) as grader:
        assert grader.start_mode is SandboxStart.FRESH
        assert grader.grade(PASSING, ONE, seed=1).status == "pass"
    assert "Sandboxes will start fresh interpreters" in caplog.text and "seccomp" in caplog.text


@pytest.mark.parametrize("start", list(SandboxStart), ids=lambda start: start.name.lower())
def test_signals_reach_the_learners_code_as_in_a_fresh_interpreter(start: SandboxStart) -> None:
    # Python turns SIGINT into KeyboardInterrupt; a forked harness must not differ from a fresh one. The
    # handler runs at the interpreter's next check, which a loaded machine may put after a bare return:
    # the code waits for it (a harness that ignored the signal would run into the time limit instead).
    source = (
        "import os, signal, time\n\ndef one():\n    os.kill(os.getpid(), signal.SIGINT)\n"
        "    while True:\n        time.sleep(0.01)\n"
    )
    # The grader runs with SIGINT ignored, as a server started by nohup or in the background does: a
    # sandbox must not pass that on to the learner's code.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Grader(require_sandbox=True, zygote=start is SandboxStart.FORKED) as grader:
            assert grader.start_mode is start
            result = grader.grade(source, ONE, seed=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.status == "fail"
    assert [test.status for test in result.tests] == ["error"]
    assert "KeyboardInterrupt" in (result.tests[0].message or "") + (result.tests[0].got or "")
