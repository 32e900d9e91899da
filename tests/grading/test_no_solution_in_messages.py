"""No message of the grader quotes the reference solution: a mutant's message names the change in words
and quotes the mutant's side only, and no run of LEAK_CHARACTERS characters of the solution's code
(whitespace and quotes ignored, as the hints' rule reads code) shows in it. Checked on every single
change of every lesson's reference, and for real in the sandbox on each lesson's wrong
corpus and of the unlisted mistakes (every program), with the lessons' own hints switched off so the
grader speaks."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from qkv.grading.feedback import explain as explaining
from qkv.grading.feedback.explain_search import mutant_sentence, seen_sentence
from qkv.grading.feedback.leaks import SolutionSpans
from qkv.grading.feedback.mutants import Mutants, prepare
from qkv.grading.suite import Suite
from qkv.lessons import load_catalog
from tests.lesson_contract import corpus_folder

pytestmark = pytest.mark.timeout(300)
CATALOG = load_catalog()
EXERCISES = [entry for entry in CATALOG.code_exercises() if entry.suite.reference]
TESTS = Path(__file__).resolve().parents[1]


def spans_of(entry: Any, learner: str = "") -> SolutionSpans:
    """The code of the exercise's solution (the reference the grader holds and the one a learner sees),
    less what the learner is given (the starter code, the functions' names) or wrote themselves."""
    given = "\n".join([entry.exercise.starter_code or "", *entry.suite.functions, learner])
    return SolutionSpans(entry.suite.reference + "\n" + (entry.exercise.solution or ""), given=given)


def test_the_spans_find_a_quote_whatever_its_spacing_and_quotes() -> None:
    spans = SolutionSpans("def f(p, x):\n    return np.tanh(x @ p['W1'] + p['b1'])\n")
    assert spans.found('it is `np.tanh(x@p["W1"] + p["b1"])`') == ['np.tanh(x@p["W1"] + p["b1"])']
    assert spans.found("np.tanh(x @ p['W1']") == []  # 15 characters squeezed: a piece, not the answer
    cut = spans.redacted("first np.tanh(x @ p['W1'] + p['b1']) then np.tanh(x @ p['W1'] + p['b1'])")
    assert cut.startswith("first np.tanh(x @ p[… then np.tanh(") and cut.endswith("…")
    assert spans.found(cut) == []


@pytest.mark.parametrize("entry", EXERCISES, ids=lambda entry: entry.id)
def test_no_single_change_of_a_reference_is_said_with_the_reference_s_code(entry: Any) -> None:
    spans = spans_of(entry)
    found = Mutants(entry.suite.reference)
    said = 0
    for function in entry.suite.functions:
        for key in found.singles(function):
            mutant = found.mutant(key)
            for sentence in (mutant_sentence(mutant), seen_sentence(mutant)):
                assert spans.found(sentence) == [], sentence
            said += 1
    assert said > 0  # every reference has changes to say


@pytest.mark.parametrize("entry", EXERCISES, ids=lambda entry: entry.id)
def test_pairs_of_changes_are_said_without_the_reference_s_code(entry: Any) -> None:
    spans = spans_of(entry)
    found = Mutants(entry.suite.reference)
    function = entry.suite.functions[0]
    singles = [key[0] for key in found.singles(function)]
    for first, second in itertools.combinations(singles[:40], 2):
        sentence = mutant_sentence(found.mutant((first, second)))
        assert spans.found(sentence) == [], sentence


def without_hints(suite: Suite) -> Suite:
    """The suite with the lesson's own hints switched off: relations and mutants alone speak."""
    return dataclasses.replace(suite, table=[dataclasses.replace(row, hints=()) for row in suite.table])


def listed() -> list[tuple[Any, Path]]:
    """Every wrong program of each lesson's corpus, with its exercise."""
    pairs = []
    for entry in EXERCISES:
        folder = corpus_folder(entry)
        if (folder / "graded-in.txt").is_file():
            folder = TESTS / (folder / "graded-in.txt").read_text().split()[0]
        pairs += [(entry, path) for path in sorted((folder / "wrong").glob("*.py"))]
    return pairs


def unlisted() -> list[tuple[Any, Path]]:
    pairs = []
    for path in sorted((TESTS / "grading" / "unlisted").glob("*/*.py")):
        match = re.search(r"^# exercise: (.+)$", path.read_text(), re.MULTILINE)
        assert match, path
        pairs.append((CATALOG.code_exercise(match.group(1).strip()), path))
    return pairs


@pytest.mark.parametrize(
    ("entry", "path"), listed() + unlisted(), ids=lambda item: getattr(item, "stem", getattr(item, "id", ""))
)
def test_no_first_failing_message_quotes_the_solution(
    grader: Any, entry: Any, path: Path, monkeypatch: Any
) -> None:
    # What is tested is what the messages say, not how fast a busy machine finds a mutant.
    monkeypatch.setattr(explaining, "BUDGET_S", 10.0)
    suite = without_hints(entry.suite)
    prepare(suite.reference, suite.functions)
    result = grader.grade(path.read_text(), suite, seed=7)
    assert result.status == "fail", result.message
    first = next(test for test in result.tests if test.status not in ("pass", "not_run"))
    spans = spans_of(entry, learner=path.read_text())  # a message may quote the learner's own code
    for text in (first.hint or "", first.message or "", result.message or ""):
        assert spans.found(text) == [], (first.hint_source, text)


def test_words_that_would_quote_the_reference_give_way_to_the_operator_s_own() -> None:
    found = Mutants(
        "def f(S, E):\n    return (S - S.max(axis=-1, keepdims=True)) / E.sum(axis=-1, keepdims=True)\n"
    )
    said = {found.change(key[0]).operator: found.mutant(key).describe() for key in found.singles("f")}
    assert said["keepdims"].startswith("without keepdims=True: ")  # a keyword's name is not the answer
    described = [found.mutant(key).describe() for key in found.singles("f")]
    assert any(text.startswith("without the term after -: ") for text in described), described
    assert any(text.startswith("with a square root added: ") for text in described), described
    assert any(text.startswith("with * and / exchanged: ") for text in described), described
    assert not any("S.max(axis=-1, keepdims=True)" in text for text in described)
