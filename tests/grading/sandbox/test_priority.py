"""A sandbox taken up at background priority runs its program there, in the real sandbox (bubblewrap).

The grading line names a priority (``qkv.grading.sandbox.priority.running_at``); the grader sets it on every
process of the sandbox before the program runs, whether the sandbox was forked by the zygote for it, was a
warm spare started before anyone knew whose it would be (a program in the background leaves the last one
while programs at normal priority arrive), or started fresh without the zygote. The program itself reports
its nice value.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import sys

import pytest

from qkv.grading import Exact, Grader, GradeResult, Suite, TestCase
from qkv.grading.sandbox.priority import SandboxPriority, current_priority, lower, lower_session, running_at

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

# The program answers the nice value of its own process, of a child it starts (children inherit it), and
# of its session's scheduling group where the kernel groups by session (None where it does not).
NICE = """
import os

def niceness():
    child = os.fork()
    if child == 0:
        os._exit(os.getpriority(os.PRIO_PROCESS, 0))
    _, status = os.waitpid(child, 0)
    try:
        with open("/proc/self/autogroup") as group:
            session = int(group.read().split()[-1])
    except OSError:
        session = None
    return [os.getpriority(os.PRIO_PROCESS, 0), os.waitstatus_to_exitcode(status), session]
"""
GROUPS = os.path.exists("/proc/self/autogroup")


def _suite(expected: int, session: int | None = 0) -> Suite:
    """The program's nice values should be ``expected``; its session's group's ``session``."""
    answer = [expected, expected, session if GROUPS else None]
    case = TestCase("its nice value", "niceness", (), lambda: answer, Exact())
    return Suite(["niceness"], [case])


def _passed(result: GradeResult) -> bool:
    return result.status == "pass"


@pytest.mark.parametrize(
    ("spares", "zygote"), [(0, True), (2, True), (0, False)], ids=["forked", "warm spare", "fresh"]
)
def test_a_sandbox_runs_its_program_at_the_priority_it_was_taken_up_at(spares: int, zygote: bool) -> None:
    # A forked sandbox shares the zygote's session (its nice value weighs among the zygote's children);
    # a fresh one leads sessions of its own, whose groups are lowered with it.
    background = SandboxPriority.BACKGROUND.value
    with Grader(require_sandbox=True, warm_spares=spares, zygote=zygote) as grader:
        if grader.spares is not None:
            assert grader.spares.wait_until_full(60)
        normal = grader.grade(NICE, _suite(0), seed=1)
        if grader.spares is not None:
            assert grader.spares.wait_until_full(60)
        with running_at(SandboxPriority.BACKGROUND):
            lowered = grader.grade(NICE, _suite(background, 0 if zygote else background), seed=1)
        after = grader.grade(NICE, _suite(0), seed=1)  # the next sandbox is not lowered
    for result in (normal, lowered, after):
        assert _passed(result), (result.message, [test.message for test in result.tests])


@pytest.mark.parametrize("zygote", [True, False], ids=["zygote", "fresh"])
def test_a_grader_started_in_the_background_keeps_every_sandbox_there(zygote: bool) -> None:
    # A regrade's thread runs at nice 19; its grader's sandboxes (the zygote, the warm spares) start new
    # sessions, and so new scheduling groups, which must not weigh as much as a live learner's.
    background = SandboxPriority.BACKGROUND.value

    def grade_from_a_lowered_thread() -> GradeResult:
        os.nice(background - os.nice(0))  # this thread only
        with Grader(require_sandbox=True, warm_spares=1, zygote=zygote) as grader:
            assert grader.spares is not None and grader.spares.wait_until_full(60)
            return grader.grade(NICE, _suite(background, background), seed=1)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(grade_from_a_lowered_thread).result()
    assert _passed(result), (result.message, [test.message for test in result.tests])


def test_a_program_in_the_background_leaves_the_last_warm_spare_while_normal_ones_arrive() -> None:
    with Grader(require_sandbox=True, warm_spares=1) as grader:
        assert grader.spares is not None
        grader.grade(NICE, _suite(0), seed=1)  # a program at normal priority, just now
        grader.spares.stop_refilling(60)  # the one spare ready, and no other started after it
        with running_at(SandboxPriority.BACKGROUND):
            background = grader.grade(NICE, _suite(SandboxPriority.BACKGROUND.value), seed=1)
        assert background.status == "pass"
        spare = grader.spares.take()  # left for a program at normal priority
        assert spare is not None
        spare.discard()


def test_where_every_program_is_in_the_background_they_take_the_spares() -> None:
    with Grader(require_sandbox=True, warm_spares=1) as grader:
        assert grader.spares is not None
        grader.spares.stop_refilling(60)
        with running_at(SandboxPriority.BACKGROUND):
            background = grader.grade(NICE, _suite(SandboxPriority.BACKGROUND.value), seed=1)
        assert background.status == "pass"
        assert grader.spares.take() is None  # it took the one spare, and none was started after it


def test_a_spare_pool_keeps_what_it_is_asked_to_keep() -> None:
    with Grader(require_sandbox=True, warm_spares=1) as grader:
        assert grader.spares is not None and grader.spares.wait_until_full(60)
        assert grader.spares.take(keep=1) is None  # the one ready spare stays
        spare = grader.spares.take()
        assert spare is not None
        spare.discard()


def test_lowering_raises_a_nice_value_and_never_lowers_one() -> None:
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert lower([sleeper.pid], SandboxPriority.BACKGROUND) == 1
        assert os.getpriority(os.PRIO_PROCESS, sleeper.pid) == SandboxPriority.BACKGROUND.value
        assert lower([sleeper.pid], SandboxPriority.BACKGROUND) == 0  # already there
        assert lower([sleeper.pid], SandboxPriority.NORMAL) == 0  # never back up
        assert os.getpriority(os.PRIO_PROCESS, sleeper.pid) == SandboxPriority.BACKGROUND.value
        if os.path.exists(f"/proc/{sleeper.pid}/autogroup"):  # the kernel groups tasks by session
            assert lower_session(sleeper.pid, SandboxPriority.BACKGROUND)
            with open(f"/proc/{sleeper.pid}/autogroup") as group:
                assert group.read().split()[-1] == str(SandboxPriority.BACKGROUND.value)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert lower([sleeper.pid], SandboxPriority.BACKGROUND) == 0  # gone: skipped
    assert current_priority() is SandboxPriority.NORMAL


# A harness's start, alone: loaded from its file (it imports nothing of ours), it keeps its starter's
# nice value for its session's group, then says the group's.
_HARNESS_START = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("harness", sys.argv[1])
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)
harness.keep_starters_priority()
print(open("/proc/self/autogroup").read().split()[-1])
"""


@pytest.mark.skipif(not GROUPS or shutil.which("setpriv") is None, reason="needs autogroups and setpriv")
def test_harnesses_started_together_in_the_background_all_keep_their_groups_lowered() -> None:
    # The kernel takes one autogroup change a tenth of a second from a process without CAP_SYS_ADMIN
    # (as in the sandbox) and refuses the others: six harnesses starting at once must all get theirs.
    from qkv.grading.sandbox import harness

    command = [
        "nice", "-n", str(SandboxPriority.BACKGROUND.value),
        "setpriv", "--inh-caps=-all", "--bounding-set=-all",
        sys.executable, "-c", _HARNESS_START, harness.__file__,
    ]  # fmt: skip
    starts = [subprocess.Popen(command, stdout=subprocess.PIPE, start_new_session=True) for _ in range(6)]
    groups = [start.communicate(timeout=60)[0].decode().strip() for start in starts]
    assert groups == [str(SandboxPriority.BACKGROUND.value)] * 6
