"""Gradings at normal priority announce themselves; background work waits for a gap (``live_gradings``).

The lock file is the real one, in a folder of this test's own (``XDG_RUNTIME_DIR``), so that other test
processes' gradings are not seen. The grader's part runs the real sandbox.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import threading
from pathlib import Path

import pytest

from qkv.grading import Exact, Grader, Suite, TestCase
from qkv.grading.sandbox.live_gradings import announced, lock_path, wait_for_a_gap
from qkv.grading.sandbox.priority import SandboxPriority, running_at


@pytest.fixture(autouse=True)
def _own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))


def test_the_lock_file_is_this_users_in_the_runtime_folder(tmp_path: Path) -> None:
    assert lock_path() == str(tmp_path / f"qkv-live-gradings-{os.getuid()}.lock")


def test_announcing_alone_leaves_no_file_and_the_first_waiter_makes_it() -> None:
    with announced():
        pass
    assert not os.path.exists(lock_path())  # `qkv check` on a learner's machine leaves nothing behind
    assert wait_for_a_gap(0)
    assert os.stat(lock_path()).st_mode & 0o777 == 0o600


def test_no_gap_comes_while_a_grading_is_announced_and_one_comes_once_it_ends() -> None:
    assert wait_for_a_gap(0)
    with announced():
        assert not wait_for_a_gap(0)
        assert not wait_for_a_gap(0.03)  # asked again until the bound passed
    assert wait_for_a_gap(0)


def test_one_grading_ending_does_not_end_another_threads_announcement() -> None:
    assert wait_for_a_gap(0)
    first_in, first_may_end = threading.Event(), threading.Event()

    def first() -> None:
        with announced():
            first_in.set()
            first_may_end.wait(30)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert first_in.wait(30)
        with announced():
            pass  # a second grading, on this thread, begins and ends
        assert not wait_for_a_gap(0)  # the first still runs
    finally:
        first_may_end.set()
        thread.join()
    assert wait_for_a_gap(0)


def test_a_link_in_the_files_place_is_not_followed_and_nobody_waits(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    os.symlink(target, lock_path())
    with announced():
        assert wait_for_a_gap(0)  # nothing can be known: background work goes on
    assert not target.exists()


def test_a_negative_bound_is_refused_with_its_value() -> None:
    with pytest.raises(ValueError, match=r"bound_s must be zero or more seconds, but it is -1"):
        wait_for_a_gap(-1)


# Sleeps while it loads (bounded), so that the grading is surely running while the test looks.
SLOW = "import time\ntime.sleep(2)\n\ndef one():\n    return 1\n"
ONE = Suite(["one"], [TestCase("one", "one", (), lambda: 1, Exact())])


@pytest.mark.sandbox
@pytest.mark.timeout(120)
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.parametrize("priority", [SandboxPriority.NORMAL, SandboxPriority.BACKGROUND])
def test_a_grader_announces_its_gradings_at_normal_priority_only(priority: SandboxPriority) -> None:
    assert wait_for_a_gap(0)  # a regrade has come by (and made the file)
    with Grader(require_sandbox=True) as grader:

        def grade() -> str:
            with running_at(priority):
                return grader.grade(SLOW, ONE, seed=1).status

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            graded = pool.submit(grade)
            seen_announced = False
            while not graded.done() and not seen_announced:
                seen_announced = not wait_for_a_gap(0.01)
            assert graded.result() == "pass"
    assert seen_announced is (priority is SandboxPriority.NORMAL)
    assert wait_for_a_gap(0)  # the announcement ended with the grading
