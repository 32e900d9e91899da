"""Behaviour signatures, graded for real: the probes run after the tests and never change the verdict; the
same values in other styles share a signature, another result or exception class does not."""

from __future__ import annotations

import pytest

from qkv.grading import Grader, Suite, TestCase, sandbox_available
from qkv.grading.behaviour import PROBE_SEED, probe_cases
from qkv.grading.compare import Whole

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is needed to grade programs"),
]


def _double(x: int) -> int:
    return 2 * x


SUITE = Suite(
    ["double"],
    [
        TestCase("double of 3", "double", (3,), _double, Whole()),
        TestCase("double of any", "double", lambda rng: (int(rng.integers(10, 10_000)),), _double, Whole()),
    ],
    time_limit_s=3,
)
PROBE = probe_cases(SUITE)[0].args[0]


def _graded(grader: Grader, program: str, seed: int = 1) -> tuple[str, dict[str, str], list[str]]:
    result = grader.grade(program, SUITE, seed=seed)
    return result.status, result.signatures, [test.status for test in result.tests]


def test_styles_of_one_mistake_share_a_signature_and_others_do_not(grader: Grader) -> None:
    times_three = _graded(grader, "def double(x):\n    return 3 * x\n")
    loop = _graded(
        grader,
        "def double(x):\n    total = 0\n    for _ in range(3):\n        total += x\n    return total\n",
    )
    assert times_three[0] == loop[0] == "fail"
    assert times_three[1] == loop[1] and len(times_three[1]["double"]) == 32
    plus_one = _graded(grader, "def double(x):\n    return 2 * x + 1\n")
    raises = _graded(grader, "def double(x):\n    raise KeyError(x)\n")
    raises_other = _graded(grader, "def double(x):\n    raise IndexError(x)\n")
    assert (
        len({times_three[1]["double"], plus_one[1]["double"], raises[1]["double"], raises_other[1]["double"]})
        == 4
    )
    assert _graded(grader, "def double(x):\n    return x + x\n")[:2] == ("pass", {})
    assert _graded(grader, "x = 1\n")[1] == {}, "a function the program does not define is no behaviour"
    assert times_three[1] == _graded(grader, "def double(x):\n    return 3 * x\n", seed=77)[1], "any seed"


def test_a_program_stopped_in_a_probe_is_judged_on_its_tests_alone(grader: Grader) -> None:
    assert PROBE_SEED and 10 <= PROBE <= 10_000
    seed = next(s for s in range(100) if SUITE.cases(s)[1].args[0] != PROBE)
    program = f"def double(x):\n    while x == {PROBE}:\n        pass\n    return 2 * x + (x == 3)\n"
    result = grader.grade(program, SUITE, seed=seed)
    assert (result.status, [t.status for t in result.tests]) == ("fail", ["fail", "pass"])
    assert result.message == "1 of 2 tests passed."
    right = f"def double(x):\n    while x == {PROBE}:\n        pass\n    return 2 * x\n"
    assert grader.grade(right, SUITE, seed=seed).status == "pass", "a probe never fails a program"
