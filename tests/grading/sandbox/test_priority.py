"""A sandbox taken up at background priority runs its program there, in the real sandbox (bubblewrap).

The grading line names a priority (``qkv.grading.sandbox.priority.running_at``); the grader sets it on every
process of the sandbox before the program runs, whether the sandbox was forked by the zygote for it, was a
warm spare started before anyone knew whose it would be (a program in the background leaves the last one
while programs at normal priority arrive), or started fresh without the zygote. The program itself reports
its nice value.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from qkv.grading import Exact, Grader, Suite, TestCase
from qkv.grading.sandbox.priority import SandboxPriority, current_priority, lower, lower_session, running_at

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
]

# The program answers the nice value of its own process and of a child it starts (children inherit it).
NICE = """
import os

def niceness():
    child = os.fork()
    if child == 0:
        os._exit(os.getpriority(os.PRIO_PROCESS, 0))
    _, status = os.waitpid(child, 0)
    return [os.getpriority(os.PRIO_PROCESS, 0), os.waitstatus_to_exitcode(status)]
"""


def _suite(expected: int) -> Suite:
    case = TestCase("its nice value", "niceness", (), lambda: [expected, expected], Exact())
    return Suite(["niceness"], [case])


@pytest.mark.parametrize(
    ("spares", "zygote"), [(0, True), (2, True), (0, False)], ids=["forked", "warm spare", "fresh"]
)
def test_a_sandbox_runs_its_program_at_the_priority_it_was_taken_up_at(spares: int, zygote: bool) -> None:
    with Grader(require_sandbox=True, warm_spares=spares, zygote=zygote) as grader:
        if grader.spares is not None:
            assert grader.spares.wait_until_full(60)
        normal = grader.grade(NICE, _suite(0), seed=1)
        if grader.spares is not None:
            assert grader.spares.wait_until_full(60)
        with running_at(SandboxPriority.BACKGROUND):
            background = grader.grade(NICE, _suite(SandboxPriority.BACKGROUND.value), seed=1)
        after = grader.grade(NICE, _suite(0), seed=1)  # the next sandbox is not lowered
    for result in (normal, background, after):
        assert result.status == "pass", (result.message, [test.message for test in result.tests])


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
