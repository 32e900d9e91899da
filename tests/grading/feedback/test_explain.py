"""The explanation pass (qkv.grading.feedback.explain): every test of a function together, after each was judged.

The learner's functions run here, in-process, and their values go through the harness's own encoding
and the grader's real verdict; only the sandbox is left out (tests/grading/test_unlisted.py grades real
programs in it). The suite below is a small exercise of this file's own, with a reference solution."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from qkv.grading import Close, Items, Limits, Mistake, Suite, TestCase, called_again, writes_number
from qkv.grading.feedback import explain as explaining
from qkv.grading.feedback import explain_search
from qkv.grading.feedback.explain import explain
from qkv.grading.feedback.hints import Outcome
from qkv.grading.feedback.mutants import prepare
from qkv.grading.results import TestResult
from qkv.grading.sandbox.harness import encode
from qkv.grading.verdict import judge

REFERENCE = """import numpy as np


def weights(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)  # (n_q, n_k)


def attend(Q, K, V):
    A = weights(Q @ K.T / np.sqrt(Q.shape[1]))
    return A @ V, A  # (n_q, d_v), (n_q, n_k)
"""
NAMESPACE: dict[str, Any] = {}
exec(REFERENCE, NAMESPACE)
SCALE_BY_DK = "You divided the scores by d_k: divide by its square root."
# A hand-written rule that only holds where d_k = 4 (there √d_k = 2): it names a cause that is not the one.
BY_TWO = "You divided by 2, a constant: divide by √d_k."


def _by_dk(Q: Any, K: Any, V: Any) -> Any:
    A = NAMESPACE["weights"](Q @ K.T / Q.shape[1])
    return A @ V, A


def _draw(n_q: int, n_k: int, d_k: int, d_v: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v)))

    return draw


PAIR = Items([Close(), Close()], names=("O", "A"), description="the tuple (O, A)")


def suite(hints: list[Any]) -> Suite:
    def row(name: str, sizes: tuple[int, int, int, int]) -> TestCase:
        return TestCase(name, "attend", _draw(*sizes), NAMESPACE["attend"], PAIR, hints)

    weights_rows = [
        TestCase(f"weights {i}", "weights", (np.arange(6.0).reshape(2, 3) * i,), NAMESPACE["weights"])
        for i in (1, 2)
    ]
    rows = [row("attend, d_k = 4", (3, 5, 4, 2)), row("attend, d_k = 9", (2, 4, 9, 3)), *weights_rows]
    return Suite(["attend", "weights"], rows, reference=REFERENCE)


def grade(learner: str, tested: Suite, seed: int = 1) -> list[TestResult]:
    """Judge the learner's functions on every test the way the grader does, then explain."""
    namespace: dict[str, Any] = {}
    exec(learner, namespace)
    cases = tested.cases(seed)
    seen: dict[str, Outcome] = {}
    results = []
    for case in cases:
        with np.errstate(all="ignore"):
            value = namespace[case.function](*case.args)
        event = {"outcome": "returned", "value": encode(value)}
        results.append(judge(case, event, Limits(), seen, learner))
    return explain(results, cases, seen, learner)


def learner(old: str, new: str, function_old: str = "", function_new: str = "") -> str:
    return REFERENCE.replace(old, new).replace(function_old, function_new)


@pytest.fixture(autouse=True)
def _prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(REFERENCE, ["attend", "weights"])
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)  # what is found, not how fast a busy machine finds it


def test_a_mutant_names_what_no_hint_lists() -> None:
    wrong = learner("E.sum(axis=-1, keepdims=True)", "E.sum(axis=0, keepdims=True)")
    results = grade(wrong, suite([]))
    failing = [test for test in results if test.status != "pass"]
    assert failing and all(test.hint_source == "mutant" for test in failing)
    assert "over axis 0 instead of axis -1: E.sum(axis=0, keepdims=True)" in (failing[0].hint or "")


def test_a_relation_where_no_mutant_holds() -> None:
    wrong = learner("return A @ V, A", "return (A @ V).T, A")
    results = grade(wrong, suite([]))
    first = next(test for test in results if test.status != "pass")
    assert first.hint_source == "relation:transposed"
    assert (first.hint or "").startswith("Your O is the expected value transposed")


def test_the_lesson_s_hint_that_holds_is_kept() -> None:
    wrong = learner("np.sqrt(Q.shape[1])", "Q.shape[1]")
    results = grade(wrong, suite([Mistake(SCALE_BY_DK, _by_dk)]))
    failing = [test for test in results if test.status != "pass"]
    assert {test.hint for test in failing} == {SCALE_BY_DK}
    assert {test.hint_source for test in failing} == {"lesson"}


def test_a_hint_contradicted_by_another_test_yields_to_the_mutant() -> None:
    """By two is right on the test where d_k = 4 only; on d_k = 9 the learner's result is not what it
    computes, so the mutant that holds on both names the cause."""
    by_two = Mistake(BY_TWO, lambda Q, K, V: _scaled(Q, K, V, 2.0))
    wrong = learner("np.sqrt(Q.shape[1])", "Q.shape[1] ** 0.5 * 1.0")  # right: a control
    assert all(test.status == "pass" for test in grade(wrong, suite([by_two])))
    wrong = learner("np.sqrt(Q.shape[1])", "Q.shape[1]")
    results = grade(wrong, suite([by_two]))
    failing = [test for test in results if test.status != "pass"]
    assert BY_TWO not in {test.hint for test in failing}
    assert {test.hint_source for test in failing} == {"mutant"}


def _scaled(Q: Any, K: Any, V: Any, scale: float) -> Any:
    A = NAMESPACE["weights"](Q @ K.T / scale)
    return A @ V, A


def test_the_first_failure_shown_carries_a_hint() -> None:
    """weights fails twice; the second test's failure has a relation, the first none: the one with the
    relation is shown first, and the passing tests keep their places."""
    wrong = learner(
        "    return E / E.sum(axis=-1, keepdims=True)",
        "    return E / E.sum(axis=-1, keepdims=True) if S[0, 1] < 2 else E / E.sum(axis=-1, keepdims=True) / 3",
    )
    plain = suite([])
    quiet = dataclasses.replace(plain, reference=None)  # no mutants: relations only
    results = grade(wrong, quiet)
    names = [test.name for test in results if test.function == "weights"]
    assert [test.status for test in results if test.function == "weights"] == ["pass", "fail"]
    assert names == ["weights 1", "weights 2"]
    assert results[-1].hint_source == "relation:factor"

    wrong_both = learner(
        "    return E / E.sum(axis=-1, keepdims=True)",
        "    return E / E.sum(axis=-1, keepdims=True) + (S[0, 1] >= 1) * np.arange(E.size).reshape(E.shape) ** 2"
        " if S[0, 1] < 2 else E / E.sum(axis=-1, keepdims=True) / 3",
    )
    results = grade(wrong_both, quiet)
    shown = [test for test in results if test.function == "weights" and test.status != "pass"]
    assert [test.name for test in shown] == ["weights 2", "weights 1"]  # the named one first
    assert shown[0].hint_source == "relation:factor" and shown[1].hint is None


def test_no_mutant_after_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explaining, "BUDGET_S", -1.0)
    wrong = learner("E.sum(axis=-1, keepdims=True)", "E.sum(axis=0, keepdims=True)")
    results = grade(wrong, suite([]))
    first = next(test for test in results if test.status != "pass")
    assert first.hint_source != "mutant"  # a relation (normalised along axis 0) still names it
    assert first.hint_source == "relation:normalised"


def test_switched_off_the_lesson_s_hints_alone_remain() -> None:
    wrong = learner("E.sum(axis=-1, keepdims=True)", "E.sum(axis=0, keepdims=True)")
    quiet = dataclasses.replace(suite([]), explain=False)
    assert all(test.hint is None for test in grade(wrong, quiet))


def test_a_contradicted_hint_does_not_fire_even_alone() -> None:
    """Without mutants, the contradicted rule still stays silent: its mistake is not what the results show."""
    by_two = Mistake(BY_TWO, lambda Q, K, V: _scaled(Q, K, V, 2.0))
    wrong = learner("np.sqrt(Q.shape[1])", "Q.shape[1]")
    results = grade(wrong, dataclasses.replace(suite([by_two]), reference=None))
    failing = [test for test in results if test.status != "pass"]
    assert failing and BY_TWO not in {test.hint for test in failing}
    assert all(test.hint_source != "lesson" for test in failing)


def test_the_changes_of_a_callee_whose_tests_pass_are_tried_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """The learner's attend calls the learner's weights; where weights passes its own tests, the changes
    of weights come after every change of attend and after the pairs; where it fails, among the rest."""
    tried: list[str] = []
    original = explain_search._try

    def recording(mutants: Any, key: tuple[int, ...], *args: Any) -> Any:
        tried.append(",".join(mutants.change(k).function for k in key))
        return original(mutants, key, *args)

    monkeypatch.setattr(explain_search, "_try", recording)
    wrong = learner("return A @ V, A", "return (A @ V).T, A")  # no mutant holds: every change is tried
    grade(wrong, suite([]))
    assert "weights" in tried and "attend" in tried
    assert tried.index("weights") > max(i for i, functions in enumerate(tried) if "," in functions)
    tried.clear()
    broken = learner("return A @ V, A", "return (A @ V).T, A", "E.sum(axis=-1", "E.sum(axis=0")
    results = grade(broken, suite([]))
    assert any(test.status != "pass" for test in results if test.name.startswith("weights"))
    pairs = [i for i, functions in enumerate(tried) if "," in functions]
    assert tried.index("weights") < min(pairs, default=len(tried))  # among the likely ones now


def test_one_item_returned_where_a_tuple_belongs() -> None:
    wrong = learner("return A @ V, A", "return A @ V")
    first = next(test for test in grade(wrong, suite([])) if test.status != "pass")
    assert first.hint_source == "relation:one_item"
    assert first.hint == (
        "Your result is the expected O alone, where the function should return the tuple (O, A): return every "
        "item, in that order."
    )


def test_a_fault_in_the_explanation_pass_keeps_the_verdict(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in an operator or a relation must never cost the learner their verdict (nor show a traceback):
    the results come back as judged, unexplained, and the fault is logged for the maintainers."""

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("an operator's bug")

    monkeypatch.setattr(explaining, "_explain_function", broken)
    wrong = learner("E.sum(axis=-1, keepdims=True)", "E.sum(axis=0, keepdims=True)")
    with caplog.at_level("ERROR", logger="qkv.grading.feedback.explain"):
        results = grade(wrong, suite([]))
    assert [test.status for test in results].count("fail") >= 1
    assert all(test.hint_source is None for test in results)
    assert "The explanation pass failed" in caplog.text and "an operator's bug" in caplog.text


def test_a_change_the_code_does_not_show_is_said_as_what_the_results_are() -> None:
    # The sum runs down the columns through einsum, with no axis=0 anywhere in the code: the numbers are
    # the mutant's "over axis 0", but the code does not make that change, so it is not said as the cause.
    wrong = learner("return E / E.sum(axis=-1, keepdims=True)", "return E / np.einsum('ij->j', E)[None, :]")
    results = grade(wrong, suite([]))
    failing = [test for test in results if test.status != "pass" and test.function == "weights"]
    assert failing and all(test.hint_source != "mutant" for test in failing)
    assert all(test.hint_source is not None for test in failing)


def test_the_same_numbers_from_the_change_itself_are_said_as_its_cause() -> None:
    wrong = learner("return E / E.sum(axis=-1, keepdims=True)", "return E / np.sum(E, axis=0, keepdims=True)")
    results = grade(wrong, suite([]))
    first = next(test for test in results if test.status != "pass" and test.function == "weights")
    assert first.hint_source == "mutant"


def test_a_lesson_s_rule_whose_cause_the_inputs_cannot_have_gives_way() -> None:
    # The rule computes the learner's numbers, but declares that its cause needs d_k = 9: on d_k = 4 it
    # stays silent and the next explanation speaks.
    needs_nine = Mistake(SCALE_BY_DK, _by_dk, requires=lambda Q, K, V: Q.shape[1] == 9)
    wrong = learner("/ np.sqrt(Q.shape[1])", "/ Q.shape[1]")
    results = grade(wrong, suite([needs_nine]))
    by_name = {test.name: test for test in results}
    assert by_name["attend, d_k = 9"].hint == SCALE_BY_DK
    assert by_name["attend, d_k = 4"].hint != SCALE_BY_DK


def test_a_function_that_keeps_state_between_calls_is_named_by_its_repeated_call() -> None:
    stateful = learner(
        "def weights(S):\n",
        "CALLS = []\n\n\ndef weights(S):\n    CALLS.append(1)\n    S = S * len(CALLS)\n",
    )
    base = TestCase("weights of a matrix", "weights", _matrix, NAMESPACE["weights"])
    results = grade(stateful, Suite(["weights"], [base, *called_again(base)], reference=REFERENCE))
    failing = [test for test in results if test.status != "pass"]
    assert failing and failing[0].hint_source == "relation:repeat", failing
    assert "Called twice with the same inputs" in (failing[0].hint or "")


def test_a_result_kept_from_another_call_of_the_same_shapes_is_named() -> None:
    cached = learner(
        "def weights(S):\n",
        "KEPT = {}\n\n\ndef weights(S):\n    if S.shape in KEPT:\n        return KEPT[S.shape]\n"
        "    KEPT[S.shape] = _weights(S)\n    return KEPT[S.shape]\n\n\ndef _weights(S):\n",
    )
    rows = called_again(TestCase("weights of a matrix", "weights", _matrix, NAMESPACE["weights"]))
    base = TestCase("weights of a matrix", "weights", _matrix, NAMESPACE["weights"])
    results = grade(cached, Suite(["weights"], [base, *rows], reference=REFERENCE))
    fresh = next(test for test in results if test.name.endswith("new values of the same shapes"))
    assert fresh.status == "fail" and fresh.hint_source == "relation:repeat"
    assert "returned here (in part) exactly what it returned for another call" in (fresh.hint or "")


def _matrix(rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.normal(size=(3, 4)),)


def test_a_row_repeats_an_earlier_row_s_call_and_a_fresh_one_shuffles_its_numbers() -> None:
    rows = called_again(TestCase("weights of a matrix", "weights", _matrix, NAMESPACE["weights"]))
    base = TestCase("weights of a matrix", "weights", _matrix, NAMESPACE["weights"])
    cases = Suite(["weights"], [base, *rows]).cases(3)
    assert np.array_equal(cases[0].args[0], cases[1].args[0]) and cases[0].args[0] is not cases[1].args[0]
    assert cases[2].args[0].shape == cases[0].args[0].shape
    assert not np.array_equal(cases[2].args[0], cases[0].args[0])
    assert sorted(cases[2].args[0].ravel()) == sorted(cases[0].args[0].ravel())
    with pytest.raises(ValueError, match="not an earlier test"):
        Suite(["weights"], [rows[0], base])


def test_a_lesson_s_rule_whose_cause_the_code_does_not_write_gives_way() -> None:
    # Two mistakes give these numbers; the rule names one that the learner's code must write (here, a
    # marker number), and stays silent where the code does not.
    needs_marker = Mistake(SCALE_BY_DK, _by_dk, shows=writes_number(lambda value: value == 12345))
    wrong = learner("/ np.sqrt(Q.shape[1])", "/ Q.shape[1]")
    assert all(test.hint != SCALE_BY_DK for test in grade(wrong, suite([needs_marker])))
    marked = wrong.replace("def attend(Q, K, V):\n", "def attend(Q, K, V):\n    _ = 12345\n")
    assert any(test.hint == SCALE_BY_DK for test in grade(marked, suite([needs_marker])))
