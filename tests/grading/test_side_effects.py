"""What a call does besides returning, checked for any suite: arguments changed in place, warnings where a
test refuses them, the dtype of the result, and NumPy's crashes explained with the call's shapes.

The suite here belongs to no lesson: small functions that make each kind of mistake possible. The programs
under side_effects/ are graded for real in the sandbox; each names the message (a regular expression) and
the hint it must get, or ``# expected: pass``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from qkv.grading import (
    Close,
    Grader,
    Limits,
    Mutated,
    Raised,
    Suite,
    TestCase,
    Warned,
    sandbox_available,
)
from qkv.grading.feedback.diagnosis import crash_diagnosis
from qkv.grading.grader_report import interpret
from qkv.grading.sandbox.process import RawRun
from qkv.grading.values import MalformedReport, decode_value

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent
Array = np.ndarray[Any, Any]

MUTATED_SCORES = "S -= S.max(...) shifts the caller's scores too: write S = S - S.max(...)."
DIVIDED_BY_ZERO = (
    "Divide only where the divisor is not zero (np.divide with where=), so that no warning comes."
)
TRANSPOSED_WEIGHTS = "A.T @ V transposes the weights: the output is A @ V."


def _softmax(S: Array) -> Array:
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]


def _safe_ratio(a: Array, b: Array) -> Array:
    out = np.zeros_like(a, dtype=float)
    np.divide(a, b, out=out, where=b != 0)
    return out


def _scores(rng: np.random.Generator) -> tuple[Array]:
    return (rng.normal(size=(3, 4)) * 3,)


def _ratio_args(rng: np.random.Generator) -> tuple[Array, Array]:
    b = rng.integers(1, 5, size=(2, 3)).astype(float)
    b[0, 1] = 0.0
    return rng.normal(size=(2, 3)), b


def _weights(rng: np.random.Generator) -> tuple[Array, Array]:
    A = _softmax(rng.normal(size=(2, 3)))
    return A, rng.normal(size=(3, 4))


SUITE = Suite(
    ["row_softmax", "safe_ratio", "weighted", "center", "masked_fill", "halve", "shift", "total"],
    [
        TestCase(
            "row_softmax", "row_softmax", _scores, _softmax, hints=[Mutated(MUTATED_SCORES, argument=0)]
        ),
        TestCase(
            "row_softmax keeps float32",
            "row_softmax",
            lambda rng: (rng.normal(size=(2, 3)).astype(np.float32),),
            _softmax,
            Close(rtol=1e-4, dtype="expected"),
            hints=[Mutated(MUTATED_SCORES, argument=0)],
        ),
        TestCase(
            "safe_ratio gives 0 where b is 0, without a warning",
            "safe_ratio",
            _ratio_args,
            _safe_ratio,
            refuse_warnings=True,
            hints=[Warned(DIVIDED_BY_ZERO, "RuntimeWarning", contains="encountered in divide")],
        ),
        TestCase(
            "weighted",
            "weighted",
            _weights,
            lambda A, V: A @ V,
            hints=[
                Raised(TRANSPOSED_WEIGHTS, "ValueError", pattern="^matmul:", when=lambda A, V: A.ndim == 2)
            ],
        ),
        TestCase("center", "center", _scores, lambda x: x - x.mean(axis=-1, keepdims=True)),
        TestCase(
            "masked_fill",
            "masked_fill",
            lambda rng: (rng.normal(size=(3, 4)), np.array([[True, False, True, True]])),
            lambda x, mask: np.where(mask, x, 0.0),
        ),
        TestCase("halve", "halve", lambda rng: (rng.integers(1, 9, size=4),), lambda v: v / 2),
        TestCase(
            "shift",
            "shift",
            lambda rng: ({"w": rng.normal(size=3), "b": rng.normal(size=3)}, rng.normal(size=3)),
            lambda params, x: x * params["w"] + params["b"],
        ),
        TestCase(
            "total",
            "total",
            lambda rng: ([rng.normal(size=2) for _ in range(3)],),
            lambda rows: sum(rows),
        ),
    ],
)


def corpus() -> list[Path]:
    return sorted((HERE / "side_effects").glob("*.py"))


def expectations(path: Path) -> tuple[str | None, str | None]:
    text = path.read_text()
    if "# expected: pass" in text:
        return None, None
    message = re.search(r"^# expected message: (.+)$", text, re.MULTILINE)
    hint = re.search(r"^# expected hint: (\w+)$", text, re.MULTILINE)
    assert message, f"{path.name} says neither the message it expects nor that it passes"
    return message.group(1), globals()[hint.group(1)] if hint else None


@pytest.mark.parametrize("path", corpus(), ids=lambda p: p.stem)
@pytest.mark.parametrize("seed", [3, 41])
def test_each_program_gets_its_message_and_hint(grader: Grader, path: Path, seed: int) -> None:
    result = grader.grade(path.read_text(), SUITE, seed=seed)
    pattern, hint = expectations(path)
    failing = [test for test in result.tests if test.status != "pass"]
    if pattern is None:
        assert result.status == "pass", [(test.name, test.message) for test in failing]
        return
    assert result.status == "fail", result.message
    matching = [test for test in failing if re.search(pattern, test.message or "", re.DOTALL)]
    assert matching, [(test.name, test.message) for test in failing]
    # Where no lesson's hint is expected, the grader's own sentence about the crashing line may speak.
    said = {None if test.hint_source == "crash" else test.hint for test in matching}
    assert said == {hint}, [test.hint for test in matching]
    # Only the one function the program gets wrong fails.
    assert len({test.function for test in failing}) == 1, [test.name for test in failing]


def _grade(grader: Grader, source: str, suite: Suite = SUITE, seed: int = 5) -> dict[str, Any]:
    result = grader.grade(source, suite, seed=seed)
    return {test.name: test for test in result.tests}


CORRECT = (HERE / "side_effects" / "correct.py").read_text()
IN_PLACE = (HERE / "side_effects" / "inplace_softmax.py").read_text()


def test_a_suite_or_a_row_can_switch_the_input_check_off(grader: Grader) -> None:
    off = Suite(SUITE.functions, SUITE.table, check_inputs=False)
    assert _grade(grader, IN_PLACE, off)["row_softmax"].status == "pass"
    row = SUITE.table[0]
    one_off = Suite(
        SUITE.functions, [TestCase(row.name, row.function, row.args, row.expect, check_inputs=False)]
    )
    assert _grade(grader, IN_PLACE, one_off)["row_softmax"].status == "pass"
    assert _grade(grader, IN_PLACE)["row_softmax"].status == "fail"


def test_warnings_count_only_where_a_test_refuses_them(grader: Grader) -> None:
    warning = (HERE / "side_effects" / "divide_warning.py").read_text()
    table = [
        TestCase(row.name, row.function, row.args, row.expect, row.compare, row.hints, refuse_warnings=False)
        for row in SUITE.table
    ]
    result = grader.grade(warning, Suite(SUITE.functions, table), seed=5)
    assert result.status == "pass"
    assert "RuntimeWarning" in result.output  # not refused: Python prints it, as it would for the learner


def test_a_module_level_seterr_does_not_hide_a_warning_from_a_test_that_refuses_them(grader: Grader) -> None:
    warning = (HERE / "side_effects" / "divide_warning.py").read_text()
    silenced = warning.replace("import numpy as np\n", "import numpy as np\n\nnp.seterr(all='ignore')\n", 1)
    test = _grade(grader, silenced)["safe_ratio gives 0 where b is 0, without a warning"]
    assert test.status == "fail" and test.hint == DIVIDED_BY_ZERO


def test_silencing_inside_the_function_is_the_function_s_own_choice(grader: Grader) -> None:
    # np.errstate around the division: the caller sees no warning, which is what the test asks for.
    quiet = CORRECT.replace(
        "    out = np.zeros_like(a, dtype=float)\n    np.divide(a, b, out=out, where=b != 0)\n    return out",
        "    with np.errstate(divide='ignore', invalid='ignore'):\n        return np.where(b != 0, a / b, 0.0)",
    )
    assert quiet != CORRECT
    assert _grade(grader, quiet)["safe_ratio gives 0 where b is 0, without a warning"].status == "pass"


def test_a_crash_names_the_arguments_by_position_when_the_function_hides_its_parameters(
    grader: Grader,
) -> None:
    star = CORRECT.replace(
        "def center(x):\n    return x - x.mean(axis=-1, keepdims=True)",
        "def center(*args):\n    x = args[0]\n    return x - x.mean(axis=-1)",
    )
    test = _grade(grader, star)["center"]
    assert test.status == "error"
    assert "It was called with an array of shape (3, 4). NumPy could not line up" in (test.message or "")


def test_an_argument_mutated_then_restored_while_the_result_is_described_is_still_seen(
    grader: Grader,
) -> None:
    # The correct program, with the hostile row_softmax defined after (and so instead of) its own.
    sneaky = CORRECT + "\n" + (HERE / "hostile" / "unchanged_by_restoring_late.py").read_text()
    tests = _grade(grader, sneaky)
    assert tests["row_softmax"].status == "fail"
    assert (tests["row_softmax"].message or "").startswith(
        "The result is right, but row_softmax changed its first argument (S) in place"
    )


def test_swapping_the_argument_or_rebinding_the_harness_globals_hides_nothing(grader: Grader) -> None:
    sneaky = CORRECT + "\n" + (HERE / "hostile" / "unchanged_by_swapping_arguments.py").read_text()
    result = grader.grade(sneaky, SUITE, seed=5)
    assert result.status != "pass"
    softmax = [test for test in result.tests if test.function == "row_softmax"]
    assert all(test.status != "pass" for test in softmax), [(t.name, t.message) for t in softmax]
    assert "changed its first argument (S) in place" in (softmax[0].message or "")


@pytest.mark.sandbox
@pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
@pytest.mark.parametrize("name", ["unchanged_by_restoring_late.py", "unchanged_by_swapping_arguments.py"])
def test_the_hostile_programs_pass_nothing_on_their_own(grader: Grader, name: str) -> None:
    result = grader.grade((HERE / "hostile" / name).read_text(), SUITE, seed=9)
    assert result.status == "fail"
    assert not [test.name for test in result.tests if test.status == "pass"]


# ------------------------------------------------------------------------- the parent's side, unit by unit
CASES = SUITE.cases(1)
SOFTMAX = CASES[0]


def _judge(**fields: Any) -> tuple[str, str | None, list[Any]]:
    value = {"t": "ndarray", "dtype": "float64", "shape": list(SOFTMAX.expected.shape)}
    value["data"] = SOFTMAX.expected.ravel().tolist()
    first = {"event": "result", "id": 0, "outcome": "returned", "value": value, **fields}
    rest = [{"event": "result", "id": i, "outcome": "returned", "value": {"t": "none"}} for i in range(1, 9)]
    events = [{"event": "imported"}, first, *rest, {"event": "done"}]
    return interpret(RawRun(events=events), CASES, Limits())


def test_a_reported_change_is_described_from_the_grader_s_own_copy() -> None:
    after = SOFTMAX.args[0] - 1.0
    changed = [
        {
            "arg": 0,
            "value": {"t": "ndarray", "dtype": "float64", "shape": [3, 4], "data": after.ravel().tolist()},
        }
    ]
    _, _, tests = _judge(changed=changed, params=["S"])
    assert tests[0].status == "fail"
    first = SOFTMAX.args[0][0, 0]
    assert tests[0].message.startswith(
        "The result is right, but row_softmax changed its first argument (S) in place: 12 of its 12 values "
        f"changed; the first, at [0, 0], went from {first:.6f}".rstrip("0")[:-1]
    )
    assert tests[0].hint == MUTATED_SCORES


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (
            {"changed": [{"arg": 1, "value": {"t": "none"}}]},
            "a changed argument is not named by its position",
        ),
        ({"changed": [{"arg": 0}]}, "a changed argument is not named by its position"),
        ({"changed": "S"}, "the changed arguments are not a list"),
        ({"warnings": []}, "warnings were reported for a test that does not record them"),
        ({"changed": [], "params": ["not a name"]}, "the parameter names are not a list of names"),
    ],
)
def test_side_effect_facts_outside_the_protocol_are_tampering(fields: dict[str, Any], reason: str) -> None:
    status, message, _ = _judge(**fields)
    assert status == "error"
    assert reason in (message or "")


def test_no_reported_change_and_the_right_value_passes() -> None:
    _, _, tests = _judge(changed=[])
    assert tests[0].status == "pass"


def test_a_report_keeps_the_dtype_of_the_learner_s_array() -> None:
    assert decode_value({"t": "ndarray", "dtype": "float32", "shape": [1], "data": [0.5]}).dtype == np.float32
    assert decode_value({"t": "ndarray", "dtype": "int32", "shape": [2], "data": [1, 2]}).dtype == np.int32
    with pytest.raises(MalformedReport, match="too large for int8"):
        decode_value({"t": "ndarray", "dtype": "int8", "shape": [1], "data": [300]})
    with pytest.raises(MalformedReport, match="other than 0 and 1"):
        decode_value({"t": "ndarray", "dtype": "bool", "shape": [1], "data": [2]})


def test_close_checks_the_expected_dtype() -> None:
    want = np.ones(2, dtype=np.float32)
    assert Close(dtype="expected").mismatch(np.ones(2, dtype=np.float32), want) is None
    mismatch = Close(dtype="expected").mismatch(np.ones(2), want, "A")
    assert mismatch is not None
    assert mismatch.message == (
        "Expected A as float32 numbers (the dtype of the expected result), but it has the dtype float64."
    )


def _numpy_error(action: Any) -> str:
    try:
        action()
    except Exception as error:  # the installed NumPy's own words, so the patterns follow its version
        return str(error)
    raise AssertionError("the action did not raise")


@pytest.mark.parametrize(
    ("action", "words"),
    [
        (lambda: np.ones((3, 4)) - np.ones(3), "the shapes (3, 4) and (3,)"),
        (lambda: np.ones((2, 3, 4)) @ np.ones((3, 4, 2)), "the shapes (2, 3, 4) and (3, 4, 2)"),
        (lambda: np.ones((3, 4)) @ np.ones((3, 4)), "the left operand's last size is 4 but the right"),
        (lambda: np.dot(np.ones((2, 3)), np.ones((2, 3))), "the shapes (2, 3) and (2, 3) give 3 and 2"),
        (
            lambda: np.ones((3, 4))[np.ones((1, 4), bool)],
            "along axis 0 the array has 3 entries but the mask has 1",
        ),
        (lambda: np.arange(4).__itruediv__(2), "a float64 result cannot be stored in an int64 array"),
        (lambda: np.ones(3).sum(axis=1), "The array has 1 axis, so there is no axis 1"),
        (lambda: np.ones(12).reshape(5, -1), "12 elements cannot fill the shape (5, -1)"),
        (
            lambda: np.ones((3, 4)).__setitem__(0, np.ones((2, 4))),
            "an array of shape (2, 4) does not fit into",
        ),
    ],
)
def test_numpy_s_errors_are_explained(action: Any, words: str) -> None:
    diagnosis = crash_diagnosis(_numpy_error(action))
    assert diagnosis is not None and words in diagnosis, diagnosis
