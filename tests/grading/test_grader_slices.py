"""Grading in slices (``Grader.grade_first_slice``), in the real sandbox: a program that outgrows its first
slice is set aside (frozen, or stopped to run again) and later finished with the verdict it would have had.
Bounded: every looping program here has a 5 s time limit. A right program gets a first slice and a time
limit it cannot outgrow on a loaded machine (``tests.time_scale``): a loop outgrows any slice, however slow
the machine, so only the loops' slices are short."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from qkv.grading import Grader, GradeResult, Suite, TestCase, Unfinished, Whole, sandbox_available
from qkv.grading.sandbox.cgroups import CgroupKind, choose
from qkv.grading.sandbox.process import SandboxProcess
from tests.time_scale import scaled

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
    ),
]

CASES = [
    TestCase("a 2 by 3 by 4 box", "volume", (2, 3, 4), lambda a, b, c: a * b * c, Whole()),
    TestCase("a 5 by 1 by 2 box", "volume", (5, 1, 2), lambda a, b, c: a * b * c, Whole()),
]
# For the loops. A slice is CPU time, the limit wall-clock time: the limit must outlast a slice's CPU on a
# loaded machine, or a loop would end by its limit before outgrowing its first slice.
SUITE = Suite(["volume"], CASES, time_limit_s=5.0)
RIGHT_SUITE = Suite(["volume"], CASES, time_limit_s=min(60.0, scaled(20.0)))  # a right program ends within it
RIGHT = "def volume(a, b, c):\n    return a * b * c\n"
LOOP = "def volume(a, b, c):\n    while True:\n        pass\n"
SLICE_S = 0.2


@pytest.fixture(scope="module")
def grader() -> Iterator[Grader]:
    with Grader(require_sandbox=True) as grader:
        yield grader


def _freezer_here() -> bool:
    """Whether sandboxes here get a freezer (v1 as root, or a v2 group), so that a program can be paused."""
    choice = choose()
    if choice.kind is CgroupKind.V1:
        return os.path.isfile("/sys/fs/cgroup/freezer/tasks")
    return choice.kind is CgroupKind.V2


def test_a_program_that_ends_within_its_slice_gets_its_verdict_at_once(grader: Grader) -> None:
    result = grader.grade_first_slice(RIGHT, RIGHT_SUITE, seed=1, slice_s=scaled(20.0))
    assert isinstance(result, GradeResult)
    assert result.status == "pass" and result.score == (2, 2)


def test_a_quick_program_s_cpu_count_is_read_once_not_on_every_wake_up(
    grader: Grader, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until the slice could have run out (its CPU seconds over the machine's cores, in wall time), the
    sandbox's CPU count is not read again: each read opens a file."""
    reads: list[float] = []
    original = SandboxProcess._cpu_or_clock

    def counted(process: SandboxProcess) -> float:
        reads.append(original(process))
        return reads[-1]

    monkeypatch.setattr(SandboxProcess, "_cpu_or_clock", counted)
    result = grader.grade_first_slice(RIGHT, RIGHT_SUITE, seed=2, slice_s=scaled(20.0))
    assert isinstance(result, GradeResult) and result.status == "pass"
    assert len(reads) == 1  # the slice's start only


def test_a_loop_outgrows_its_slice_and_finishes_later_with_the_time_limit_verdict(grader: Grader) -> None:
    unfinished = grader.grade_first_slice(LOOP, SUITE, seed=1, slice_s=SLICE_S)
    assert isinstance(unfinished, Unfinished)
    assert unfinished.paused is _freezer_here()
    result = unfinished.finish()
    whole = grader.grade(LOOP, SUITE, seed=1)
    assert result.status == whole.status == "fail"
    assert result.message == whole.message
    assert [test.status for test in result.tests] == [test.status for test in whole.tests]
    assert "timeout" in {test.status for test in result.tests}
    with pytest.raises(RuntimeError, match="already finished or discarded"):
        unfinished.finish()


def test_a_set_aside_program_is_frozen_in_its_sandbox_or_holds_none(grader: Grader) -> None:
    unfinished = grader.grade_first_slice(LOOP, SUITE, seed=2, slice_s=SLICE_S)
    assert isinstance(unfinished, Unfinished)
    process = unfinished._process
    if not _freezer_here():  # stopped: nothing of it is left running while it waits
        assert process is None and not unfinished.paused
        unfinished.discard()
        return
    assert process is not None and process.cgroup is not None
    assert process.cgroup.frozen(), "the set-aside sandbox is not frozen"
    group = process.cgroup.procs_dir
    unfinished.discard()
    assert not os.path.exists(group), "a discarded program's sandbox group is still there"


def test_beyond_max_paused_a_program_is_stopped_and_runs_again_in_a_fresh_sandbox() -> None:
    with Grader(require_sandbox=True, max_paused=0) as grader:
        unfinished = grader.grade_first_slice(LOOP, SUITE, seed=3, slice_s=SLICE_S)
        assert isinstance(unfinished, Unfinished) and not unfinished.paused
        result = unfinished.finish()
    assert result.status == "fail"
    assert sorted(test.status for test in result.tests) == ["not_run", "timeout"]


def test_timing_lines_written_by_the_submission_change_no_verdict(grader: Grader) -> None:
    # A submission can write to the report descriptor (it writes to every descriptor it has here), but a
    # timing line is only advisory: it neither breaks a right program's pass nor makes a wrong one pass.
    forge = (
        "import os\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        '        os.write(fd, b\'{"event": "timing", "phase": "tests", "t": 0, "cpu": 0}\\n\')\n'
        "    except OSError:\n"
        "        pass\n"
    )
    right = grader.grade(forge + RIGHT, RIGHT_SUITE, seed=4)
    wrong = grader.grade(forge + "def volume(a, b, c):\n    return a + b + c\n", RIGHT_SUITE, seed=4)
    assert right.status == "pass"
    assert wrong.status == "fail" and wrong.score == (0, 2)


def test_a_grading_reports_its_phases_outside_the_results_document(grader: Grader) -> None:
    result = grader.grade(RIGHT, RIGHT_SUITE, seed=5)
    assert result.phases is not None
    assert set(result.phases.wall) == {"sandbox start", "imports", "set-up", "tests", "verdict"}
    assert all(seconds >= 0 for seconds in result.phases.wall.values())
    assert "phases" not in result.to_dict()
