"""Tests that call as the statement allows: arguments by keyword, defaults left out, float32 and integer
inputs (``TestCase.keywords``, :func:`qkv.grading.by_keyword`, :func:`qkv.grading.in_dtype`), graded
for real in the sandbox; and the unlisted programs that only such calls reveal."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from qkv.grading import Close, Grader, Suite, TestCase, by_keyword, in_dtype
from qkv.grading.feedback.mutants import prepare
from qkv.lessons import load_catalog

UNLISTED = Path(__file__).parent / "unlisted"


def scaled(x: np.ndarray, by: float = 2.0) -> np.ndarray:
    return x * by


ROW = TestCase("scaled by 3", "scaled", lambda rng: (np.round(rng.normal(size=3), 2), 3.0), scaled)
SUITE = Suite(
    ["scaled"],
    [
        ROW,
        by_keyword(ROW, "by"),
        TestCase("scaled by the default", "scaled", lambda rng: (np.round(rng.normal(size=3), 2),), scaled),
        in_dtype(ROW, "float32"),
        in_dtype(ROW, "int64", name="scaled, integers"),
    ],
)


def _outcomes(grader: Grader, source: str) -> dict[str, tuple[str, str | None, str | None]]:
    result = grader.grade(source, SUITE, seed=5)
    return {test.name: (test.status, test.hint, test.call) for test in result.tests}


def test_a_keyword_row_passes_its_argument_by_name_and_writes_the_call_so(grader: Grader) -> None:
    # A keyword-only parameter takes its value by name alone: the keyword row passes, the positional fails.
    source = "def scaled(x, *, by=2.0):\n    return x * by\n"
    outcomes = _outcomes(grader, source)
    assert outcomes["scaled by 3, by passed by name"][0] == "pass"
    assert outcomes["scaled by 3"][0] == "error"
    case = SUITE.cases(5)[1]
    assert case.call.endswith(", by=3.0)") and case.call.startswith("scaled(np.array([")


def test_a_parameter_named_otherwise_is_told_to_take_the_statements_name(grader: Grader) -> None:
    outcomes = _outcomes(grader, "def scaled(x, factor=2.0):\n    return x * factor\n")
    status, hint, call = outcomes["scaled by 3, by passed by name"]
    assert status == "error" and call is not None and call.endswith("by=3.0)")
    assert hint == (
        "This test passes by by name, scaled(…, by=…), as the statement's signature names it, but your "
        "scaled has no parameter called by: name and order scaled's parameters as the statement does."
    )
    assert outcomes["scaled by 3"][0] == outcomes["scaled by the default"][0] == "pass"


def test_a_default_the_learner_left_out_is_named(grader: Grader) -> None:
    status, hint, call = _outcomes(grader, "def scaled(x, by):\n    return x * by\n")["scaled by the default"]
    assert status == "error" and call is not None and "by" not in call
    assert hint == (
        "This test leaves out by, which has a default in the statement's signature, but your scaled "
        "requires it: give by the statement's default value."
    )


def test_float32_and_integer_twins_of_a_row() -> None:
    cases = {case.name: case for case in SUITE.cases(5)}
    single, whole = cases["scaled by 3, in float32"], cases["scaled, integers"]
    assert single.args[0].dtype == np.float32 and single.args[1] == 3.0
    assert single.expected.dtype == np.float32 and single.compare == Close(rtol=1e-4, atol=1e-5)
    assert whole.args[0].dtype == np.int64 and whole.compare == Close()
    assert single.call.startswith("scaled(np.array([") and "dtype=np.float32" in single.call


def test_a_float32_result_computed_in_float32_passes_and_an_integer_buffer_fails(grader: Grader) -> None:
    in_single = "import numpy as np\ndef scaled(x, by=2.0):\n    return (x.astype(np.float32) * by).astype(np.float32)\n"
    assert {status for status, _, _ in _outcomes(grader, in_single).values()} == {"pass"}
    buffered = (
        "import numpy as np\ndef scaled(x, by=2.0):\n    out = np.zeros_like(x)\n"
        "    out[:] = x * by + 0.5\n    return out - 0.5\n"
    )
    outcomes = _outcomes(grader, buffered)
    assert outcomes["scaled, integers"][0] == "fail" and outcomes["scaled by 3"][0] == "pass"


def test_keywords_are_checked_when_the_suite_is_built() -> None:
    with pytest.raises(ValueError, match="must be a sequence of parameter names"):
        Suite(["scaled"], [TestCase("bad", "scaled", (1.0, 2.0), scaled, keywords="by")])
    with pytest.raises(ValueError, match="passes the same keyword twice"):
        Suite(["scaled"], [TestCase("twice", "scaled", (1.0, 2.0), scaled, keywords=("by", "by"))])
    with pytest.raises(ValueError, match="passes 3 arguments by keyword but has only 2"):
        Suite(["scaled"], [TestCase("more", "scaled", (1.0, 2.0), scaled, keywords=("a", "b", "c"))]).cases(1)


@pytest.mark.parametrize(
    "program",
    ["L4.4/mask_named_attn_mask", "L4.6/layer_norm_epsilon_named", "L4.3/softmax_into_zeros_like"],
)
def test_an_unlisted_program_only_the_new_calls_reveal_fails_now(grader: Grader, program: str) -> None:
    """Without the keyword, float32 and integer rows these programs passed every test; now they fail,
    and the first failure names their cause."""
    text = (UNLISTED / f"{program}.py").read_text()
    exercise = re.search(r"^# exercise: (\S+)", text, re.MULTILINE)
    cause = re.search(r"^# cause: (.+)$", text, re.MULTILINE)
    assert exercise is not None and cause is not None
    suite = load_catalog().code_exercise(exercise.group(1)).suite
    prepare(suite.reference, suite.functions)
    new = [row for row in suite.table if row.keywords or re.search(r", in float32|integer", row.name)]
    assert new
    before = Suite(
        suite.functions,
        [row for row in suite.table if row not in new],
        refuse_warnings=suite.refuse_warnings,
        reference=suite.reference,
        shapes=suite.shapes,
    )
    assert grader.grade(text, before, seed=7).status == "pass"
    result = grader.grade(text, suite, seed=7)
    first = next(test for test in result.tests if test.status in ("fail", "error"))
    assert result.status == "fail" and first.name in {row.name for row in new}
    assert first.hint is not None and re.search(cause.group(1), first.hint), first.hint
