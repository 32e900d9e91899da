"""Where the mutant search looks (qkv.grading.feedback.explain_search): a single that matches the first failing test but
not the others is kept for pairs (the same slip made on every product), and a test that expects an
exception compares the values a mutant and the learner returned item by item (a tuple of arrays of
several shapes). Graded for real in the sandbox."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from qkv.grading import Close, Items, Raises, Suite, TestCase
from qkv.grading.feedback import explain as explaining
from qkv.grading.feedback.explain_search import _equal_values
from qkv.grading.feedback.mutants import prepare

pytestmark = pytest.mark.timeout(120)
REFERENCE = """import numpy as np


def project(X, Wa, Wb, Wc):
    X, Wa, Wb, Wc = (np.asarray(m, dtype=float) for m in (X, Wa, Wb, Wc))
    for W in (Wa, Wb, Wc):
        if W.shape[0] != X.shape[1]:
            raise ValueError("a weight matrix needs one row per column of X")
    if Wa.shape[1] != Wb.shape[1]:
        raise ValueError("Wa and Wb need as many columns")
    return X @ Wa, X @ Wb, X @ Wc
"""
NAMESPACE: dict[str, Any] = {}
exec(REFERENCE, NAMESPACE)
THREE = Items((Close(), Close(), Close()), ("A", "B", "C"))
ROWS = Raises("ValueError", "a weight matrix does not have one row per column of X")
COLUMNS = Raises("ValueError", "Wa and Wb have different numbers of columns")


def _example(rng: Any) -> tuple[Any, ...]:
    # Wb and Wc symmetric: one of the three products transposed gives the same result as all three.
    symmetric = np.array([[2.0, 1.0], [1.0, 3.0]])
    return np.array([[1.0, 2.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]), symmetric, symmetric


def _draw(n: int, d: int, a: int, b: int, c: int, rows: int | None = None) -> Any:
    return lambda rng: (
        rng.normal(size=(n, d)),
        rng.normal(size=(rows or d, a)),
        rng.normal(size=(d, b)),
        rng.normal(size=(d, c)),
    )


SUITE = Suite(
    ["project"],
    [
        TestCase("project on the example", "project", _example, NAMESPACE["project"], THREE),
        TestCase("project with square weights", "project", _draw(4, 3, 3, 3, 3), NAMESPACE["project"], THREE),
        TestCase(
            "project with non-square weights", "project", _draw(4, 3, 2, 2, 5), NAMESPACE["project"], THREE
        ),
        TestCase("project raises ValueError (rows)", "project", _draw(4, 3, 2, 2, 2, rows=4), ROWS),
        TestCase("project raises ValueError (columns)", "project", _draw(4, 3, 2, 4, 2), COLUMNS),
    ],
    reference=REFERENCE,
)


@pytest.fixture(autouse=True)
def _prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    prepare(REFERENCE, ["project"])
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)  # what is found, not how fast a busy machine finds it


def _first_failure(grader: Any, source: str) -> Any:
    result = grader.grade(source, SUITE, seed=3)
    return next(test for test in result.tests if test.status not in ("pass", "not_run"))


def test_the_same_transpose_on_every_product_is_named_though_one_alone_fits_the_first_test(
    grader: Any,
) -> None:
    first = _first_failure(
        grader, REFERENCE.replace("return X @ Wa, X @ Wb, X @ Wc", "return X @ Wa.T, X @ Wb.T, X @ Wc.T")
    )
    assert first.name == "project on the example"
    assert first.hint_source == "mutant", first
    assert first.hint.startswith("Your results are what the reference solution gives with 3 changes")
    assert first.hint.endswith(
        "the right operand of @ transposed, 3 times: (X @ Wa.T, X @ Wb.T, X @ Wc.T) (in project)."
    )


def test_two_checks_left_out_are_named_where_the_program_returns_arrays_of_several_shapes(
    grader: Any,
) -> None:
    source = "\n".join(line for line in REFERENCE.splitlines() if "if W" not in line and "raise" not in line)
    source = source.replace("    for W in (Wa, Wb, Wc):\n", "")
    first = _first_failure(grader, source)
    assert first.name == "project raises ValueError (rows)"
    assert first.hint_source == "mutant", first
    assert first.hint.startswith("Your results are what the reference solution gives with 2 changes")
    assert first.hint.count("without the input check that raises") == 2


def test_values_are_the_same_item_by_item_whatever_their_shapes() -> None:
    ragged = (np.ones((2, 3)), np.zeros((2, 4)))
    assert _equal_values(ragged, (np.ones((2, 3)), np.zeros((2, 4))))
    assert not _equal_values(ragged, (np.ones((2, 3)), np.zeros((4, 2))))
    assert not _equal_values(ragged, [np.ones((2, 3)), np.zeros((2, 4))])  # a list is not the tuple
    assert _equal_values({"Q": (2, 3)}, {"Q": (2, 3)}) and not _equal_values({"Q": (2, 3)}, {"q": (2, 3)})
    assert _equal_values(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert not _equal_values(np.array(["a"]), np.array([1.0]))


SCALED = """import numpy as np


def mix(X, W, h):
    d_head = X.shape[1] // h
    return X / np.sqrt(d_head) @ W
"""
SCALED_NAMESPACE: dict[str, Any] = {}
exec(SCALED, SCALED_NAMESPACE)


def _mixed(n: int, d: int, h: int) -> Any:
    return lambda rng: (rng.normal(size=(n, d)), rng.normal(size=(d, d)), h)


SCALED_SUITE = Suite(
    ["mix"],
    [
        TestCase(f"mix of {n} rows, {d} columns, {h} heads", "mix", _mixed(n, d, h), SCALED_NAMESPACE["mix"])
        for n, d, h in ((3, 4, 2), (2, 6, 3), (4, 8, 4))
    ],
    reference=SCALED,
)


def test_two_terms_left_out_on_two_lines_are_named_together(grader: Any) -> None:
    # A scale by the whole width (// h dropped) and the last projection forgotten (@ W dropped).
    prepare(SCALED, ["mix"])
    source = SCALED.replace("X.shape[1] // h", "X.shape[1]").replace(" @ W\n", "\n")
    result = grader.grade(source, SCALED_SUITE, seed=3)
    first = next(test for test in result.tests if test.status != "pass")
    assert first.hint_source == "mutant", first
    assert "with 2 changes, without the // h" in first.hint and "without the @ W: " in first.hint


def test_a_stricter_check_and_a_check_left_out_are_named_together(grader: Any) -> None:
    # Wc's columns compared too (a value test with d_c ≠ d_a raises), and no row check at all: the
    # closest single (the stricter check, which fits every test but the row test) is paired with any other.
    source = """import numpy as np


def project(X, Wa, Wb, Wc):
    if not Wa.shape[1] == Wb.shape[1] == Wc.shape[1]:
        raise ValueError("all three need as many columns")
    return X @ Wa, X @ Wb, X @ Wc
"""
    first = _first_failure(grader, source)
    assert first.name == "project with non-square weights"
    assert first.hint_source == "mutant", first
    # The reference's own check (Wa.shape[1] != Wb.shape[1]) is cut short: a message never quotes it.
    assert "with 2 changes, with Wc compared too: Wa.shape[1] !… or Wa.shape[1] != Wc.shape[1]" in first.hint
    assert "without the input check that raises" in first.hint
