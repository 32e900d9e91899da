"""The explanation pass: every test of a function looked at together, after each was judged alone.

A test's hint is first the lesson's own (:func:`qkv.grading.feedback.hints.first_hint`, in the verdict). This
pass then, per function:

1. checks that a hand-written :class:`~qkv.grading.feedback.hints.Mistake` that matched is what the results
show
   on *every* test of the function: one that another test contradicts (there it computes a wrong value
   that the learner's result is not) gives way to a later rule that holds everywhere, or to a mutant or a
   relation that names a different cause;
2. where no rule matched, searches the mutants of the reference solution (:mod:`qkv.grading.feedback.mutants`)
   for one whose results equal the learner's on every test of the function, and says what it changed;
3. where neither did, looks for a relation between the returned value and the expected one
   (:mod:`qkv.grading.feedback.relations`);
4. orders the function's failing tests so that the first shown carries a named mistake or a mutant,
   else a relation, whenever any of its failures has one (the page and ``qkv check`` open each function
   at its first failure).

The mutant search is bounded: singles are tried on the first failing test only and confirmed on the
others; pairs only when no single holds, among the singles closest to the learner's result; and the whole
pass stops looking after :data:`BUDGET_S` seconds of one grading.

The search itself (the mutants tried, in what order, and the sentences that say one) is
:mod:`qkv.grading.feedback.explain_search`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from qkv.grading.compare import Comparator, Items, Keys, agrees
from qkv.grading.feedback.explain_search import (
    Found,
    _alike,
    _behaves_alike,
    _equal_values,
    _flat,
    _ordered,
    _Places,
    _search,
    _Test,
    mutant_sentence,
    seen_sentence,
)
from qkv.grading.feedback.hints import _NOTHING, STUB, Mistake, Outcome, _compute, _item
from qkv.grading.feedback.relations import Relation, find_relation
from qkv.grading.feedback.sizes import (
    call_sizes,
    output_sizes,
    reference_axes,
    reference_outputs,
    reference_params,
)
from qkv.grading.feedback.support import LearnerCode
from qkv.grading.results import TestResult
from qkv.grading.suite import Case

__all__ = ["BUDGET_S", "explain"]

_log = logging.getLogger(__name__)
BUDGET_S = 0.08  # seconds of mutant search per grading, at most
NAMED, RELATED, UNNAMED = 0, 1, 2  # how much a failing test's hint says, for the order shown


def explain(
    results: list[TestResult], cases: Sequence[Case], seen: dict[str, Outcome], source: str | None = None
) -> list[TestResult]:
    """The results with hints explained across each function's tests, and failures ordered.

    Parameters
    ----------
    results, cases : sequences
        Every test's result and case, in the suite's order.
    seen : dict
        The outcome of every test that returned a value, by test name (from the verdict).
    source : str, optional
        The learner's file: a mutant's change is said as the cause only where this code shows it
        (:mod:`qkv.grading.feedback.support`); without it, every change counts as shown.

    Returns
    -------
    list of TestResult
        The results, hints explained and failures ordered; the results as given where the pass itself
        failed (an explanation is help on top of a verdict: a fault in it never costs the learner theirs).
    """
    try:
        return _explained(results, cases, seen, LearnerCode.parse(source))
    except Exception:
        _log.exception("The explanation pass failed; the verdict is kept without its explanations.")
        return list(results)


def _explained(
    results: list[TestResult], cases: Sequence[Case], seen: dict[str, Outcome], learner: LearnerCode | None
) -> list[TestResult]:
    deadline = time.perf_counter() + BUDGET_S
    tests = [
        _Test(i, case, result, seen.get(case.name))
        for i, (case, result) in enumerate(zip(cases, results, strict=True))
    ]
    out = list(results)
    ranks: dict[int, int] = {}
    functions = dict.fromkeys(case.function for case in cases)
    # Where a caller's mutants are searched, a callee that the suite tests and that fails is a likely
    # place of the mistake; one it does not test (code the exercise gives) less so; one whose own tests
    # all pass is taken to be right (the learner's caller calls the learner's right callee).
    right = {f for f in functions if all(t.result.status == "pass" for t in tests if t.case.function == f)}
    places = _Places(frozenset(functions), frozenset(right), learner)
    for function in functions:
        group = [test for test in tests if test.case.function == function]
        for test, (hint, rank, source) in _explain_function(group, deadline, places).items():
            out[test] = replace(out[test], hint=hint, hint_source=source)
            ranks[test] = rank
    return _ordered(out, cases, ranks)


Choice = tuple[str | None, int, str | None]  # the hint, how much it says, and where it came from


def _explain_function(group: list[_Test], deadline: float, places: _Places) -> dict[int, Choice]:
    failing = [test for test in group if test.result.status not in ("pass", "not_run")]
    if not failing:
        return {}
    explaining = group[0].case.explain
    verdicts: dict[int, bool] = {}  # whether a rule is contradicted, by the rule's id
    rules = {test.index: _rules(test, group, verdicts) for test in failing if test.failed_value}
    # The mutants are searched only where a failing value has no rule that holds on every test, or a
    # failing behaviour (an exception) has no hint of the lesson's.
    unexplained = any(test.failed_behaviour and test.result.hint is None for test in failing)
    wanted = explaining and any(not holding for _, holding in rules.values())
    mutant = _search(group, deadline, places) if wanted else None
    # An exception missing or of another class is searched apart (a program may have a wrong value and
    # a missing check, two mistakes): unless the value's mutant shares the behaviour too.
    behaving = mutant if mutant is not None and _behaves_alike(mutant[0], group) else None
    if explaining and unexplained and behaving is None:
        behaving = _search(group, deadline, places, behaviour=True)
    choices = {
        test.index: _choose(
            test, rules.get(test.index), behaving if test.failed_behaviour else mutant, explaining
        )
        for test in failing
    }
    for test in failing if explaining else ():
        repeated = _repeated(test, group)
        if repeated is not None and choices[test.index][2] != "lesson":
            choices[test.index] = repeated, NAMED, "relation:repeat"
    return choices


def _repeated(test: _Test, group: list[_Test]) -> str | None:
    """Where another test of the function made the very same call and the function answered otherwise
    there: state kept from one call to the next (a global, a cache, a class attribute, a changed
    default), whatever the values say."""
    mine = test.outcome
    if mine is None:
        return None
    for other in group:
        theirs = other.outcome
        if other is test or theirs is None or not _equal_values(test.case.args, other.case.args):
            continue
        if mine.has_returned != theirs.has_returned or (
            mine.has_returned and not _equal_values(mine.returned, theirs.returned)
        ):
            return (
                f"Called twice with the same inputs (here and in the test {other.case.name!r}), "
                f"{test.case.function} gave two different "
                "results: it keeps something from one call to the next (a global or a class attribute, a "
                "cache, a default argument it changes). Compute each result from the arguments alone."
            )
    return _stale(test, group)


def _all_new(args: Sequence[Any], others: Sequence[Any]) -> bool:
    """Whether two calls have arrays of the same shapes in every place, each with other values (a
    function that ignores one of its inputs gives equal results without keeping any state)."""
    arrays = [(a, b) for a, b in zip(args, others, strict=False) if isinstance(a, np.ndarray)]
    return (
        len(args) == len(others)
        and bool(arrays)
        and all(
            isinstance(b, np.ndarray) and a.shape == b.shape and a.size > 0 and not np.array_equal(a, b)
            for a, b in arrays
        )
        and all(
            _equal_values(a, b) for a, b in zip(args, others, strict=False) if not isinstance(a, np.ndarray)
        )
    )


def _constant(value: Any) -> bool:
    """Whether a value holds one number everywhere (or is not an array of several numbers)."""
    flat = _flat(value)
    return flat is None or flat.size < 4 or bool(np.all(flat == flat[0]))


def _kept(mine: Any, theirs: Any, expected: Any, other: Any) -> bool:
    """Whether a value (or one item of a tuple) is the one returned for the other call, where the right
    answers differ and the value is not one number everywhere."""
    pairs = [(mine, theirs, expected, other)]
    values = (mine, theirs, expected, other)
    if all(isinstance(v, tuple | list) for v in values) and len({len(v) for v in values}) == 1:
        pairs = list(zip(mine, theirs, expected, other, strict=True))
    return any(
        not _constant(a) and _equal_values(a, b) and not _equal_values(want, wanted)
        for a, b, want, wanted in pairs
    )


def _stale(test: _Test, group: list[_Test]) -> str | None:
    """A wrong value that is what the function returned on another call, with other inputs whose right
    answer differs: a result kept from that call (a cache keyed by the shapes alone)."""
    mine = test.outcome
    if mine is None or not test.failed_value:
        return None
    for other in group:
        theirs = other.outcome
        if other is test or theirs is None or not theirs.has_returned:
            continue
        if not _all_new(test.case.args, other.case.args):
            continue
        if _kept(mine.returned, theirs.returned, test.case.expected, other.case.expected):
            return (
                f"{test.case.function} returned here (in part) exactly what it returned for another call, "
                f"with other inputs (the test {other.case.name!r}): it keeps a result from one "
                "call to the next (a cache, a global or a class attribute) and gives it back for new "
                "inputs. Compute each result from the arguments alone."
            )
    return None


Rules = tuple[list[Any], list[Any]]  # the lesson's rules that match a test, and those not contradicted


def _rules(test: _Test, group: list[_Test], verdicts: dict[int, bool]) -> Rules:
    """The lesson's rules that match the test (from the one the verdict chose on), and of those the first
    that no other test contradicts. Later rules are asked only when the chosen one is contradicted:
    each one computes its mistake, which is the costly part."""
    outcome = test.outcome
    assert outcome is not None
    rules: list[Any] = list(test.case.hints)
    chosen = next((i for i, rule in enumerate(rules) if rule.message == test.result.hint), None)
    if chosen is None:
        return [], []
    matching: list[Any] = []
    for rule in rules[chosen:]:
        if not _matches(rule, outcome):
            continue
        matching.append(rule)
        if not isinstance(rule, Mistake):
            return matching, [rule]
        if id(rule) not in verdicts:
            verdicts[id(rule)] = _contradicted(rule, group)
        if not verdicts[id(rule)]:
            return matching, [rule]
    return matching, []


def _choose(test: _Test, rules: Rules | None, found: Found | None, explaining: bool) -> Choice:
    """The hint of one failing test, how much it says, and its source: ``lesson`` (a hand-written rule,
    or the grader's own for a stub or a missing function), ``mutant`` (a change the learner's code
    shows), ``relation:KIND``, or ``seen:mutant`` (the numbers of a change the code does not show, said
    as what the results are, not as their cause)."""
    hint = test.result.hint
    if hint is None and rules is None and found is not None and explaining and test.failed_behaviour:
        return _mutant_choice(found)
    if hint == STUB or rules is None:
        return hint, NAMED if hint else UNNAMED, (test.result.hint_source or "lesson") if hint else None
    _, holding = rules
    if holding:
        return holding[0].message, NAMED, "lesson"
    if found is not None and explaining and found[1]:
        return _mutant_choice(found)
    relation = _relation(test) if explaining else None
    # A rule that matched here but that another test contradicts does not fire: its mistake is not what
    # the results show (an input where two mistakes happen to give the same numbers). A relation is a
    # fact about the result: it goes before a mutant whose change the learner's code does not show.
    if relation is not None:
        return relation.sentence, RELATED, f"relation:{relation.kind}"
    if found is not None and explaining:
        return _mutant_choice(found)
    return None, UNNAMED, None


def _mutant_choice(found: Found) -> Choice:
    mutant, shown = found
    if shown:
        return mutant_sentence(mutant), NAMED, "mutant"
    return seen_sentence(mutant), RELATED, "seen:mutant"


def _matches(rule: Any, outcome: Outcome) -> bool:
    try:
        return bool(rule.matches(outcome))
    except Exception:  # a lesson's predicate that trips over an odd value matches nothing
        return False


def _contradicted(rule: Mistake, group: list[_Test]) -> bool:
    """Whether some test of the function shows that the learner did not make this mistake: there the
    mistake computes a wrong value and the learner's result is not that value, or the mistake computes
    the right value and the learner's result is wrong, and no rule with the same sentence matches."""
    for test in group:
        outcome = test.outcome
        rows_rules: list[Any] = list(test.case.hints)
        if outcome is None or not outcome.has_returned or not any(hint is rule for hint in rows_rules):
            continue
        wrong = _compute(rule.compute, test.case.args)
        expected = test.case.expected
        comparator: Comparator | None = test.case.compare
        if rule.at is not None:
            found = test.case.compare.item(rule.at)
            if found is None:
                continue
            comparator, key = found
            expected = _item(expected, key)
        if wrong is _NOTHING or comparator is None:
            continue
        got = _item(outcome.returned, key) if rule.at is not None else outcome.returned
        if got is _NOTHING:
            continue
        if agrees(comparator, wrong, expected):
            wrong_here = test.failed_value and not agrees(comparator, got, expected)
        else:
            wrong_here = not _alike(comparator, got, wrong)
        # Another rule of the row with the same sentence may name this test (the same mistake with a
        # second slip the first rule does not compute): the sentence still holds there.
        if wrong_here and not _named_alike(rule.message, rows_rules, outcome):
            return True
    return False


def _named_alike(message: str, rules: list[Any], outcome: Outcome) -> bool:
    return any(getattr(other, "message", None) == message and _matches(other, outcome) for other in rules)


def _sizes(case: Case) -> list[tuple[str, int]]:
    params = reference_params(case.reference, case.function)
    found = call_sizes(case.args, params, case.shapes, reference_axes(case.reference, case.function))
    named = dict(found)
    for name, size in output_sizes(case.expected, reference_outputs(case.reference, case.function)):
        named.setdefault(name, size)
    return list(named.items())


def _relation(test: _Test) -> Relation | None:
    outcome = test.outcome
    assert outcome is not None
    got, expected, compare = outcome.returned, test.case.expected, test.case.compare
    sizes = _sizes(test.case)
    if isinstance(compare, Items) and isinstance(got, tuple | list) and len(got) == len(compare.items) > 1:
        swapped = list(reversed(got))
        if all(
            agrees(item, mine, want)
            for item, mine, want in zip(compare.items, swapped, expected, strict=True)
        ):
            return Relation(
                "swapped_items",
                "Your result holds the right values, in the other order: return them in the order the "
                "exercise asks for.",
            )
    alone = _one_item(got, expected, compare)
    if alone is not None:
        return alone
    if outcome.at is None or not isinstance(compare, Items | Keys):
        return _related(got, expected, compare, "your result", sizes, test.case.args)
    # The item the mismatch named first, then every other item that differs.
    keys = [outcome.at, *_other_items(compare, got, expected, outcome.at)]
    for key in keys:
        found = compare.item(key)
        if found is None:
            continue
        item, index = found
        mine, theirs = _item(got, index), _item(expected, index)
        if mine is _NOTHING or theirs is _NOTHING or agrees(item, mine, theirs):
            continue
        label = f"your {key}" if isinstance(key, str) else f"item {key} of your result"
        relation = _related(mine, theirs, item, label, sizes, test.case.args)
        if relation is not None:
            return relation
    return None


def _one_item(got: Any, expected: Any, compare: Comparator) -> Relation | None:
    """One item of the expected tuple returned alone (the output without its weights)."""
    if (
        not isinstance(compare, Items)
        or isinstance(got, tuple | list)
        or not isinstance(expected, tuple | list)
    ):
        return None
    for index, (item, want) in enumerate(zip(compare.items, expected, strict=False)):
        if _alike(item, got, want):
            name = compare.names[index] if index < len(compare.names) else f"item {index}"
            whole = compare.description or f"a tuple of {len(compare.items)} items"
            return Relation(
                "one_item",
                f"Your result is the expected {name} alone, where the function should return {whole}: "
                "return every item, in that order.",
            )
    return None


def _other_items(compare: Items | Keys, got: Any, expected: Any, first: str | int) -> list[str | int]:
    if isinstance(compare, Items):
        keys: list[str | int] = list(compare.names) or list(range(len(compare.items)))
    else:
        keys = list(expected) if isinstance(expected, dict) else []
    return [key for key in keys if key != first]


def _related(
    got: Any, expected: Any, compare: Comparator, label: str, sizes: list[tuple[str, int]], args: Any
) -> Relation | None:
    rtol, atol = getattr(compare, "rtol", 1e-5), getattr(compare, "atol", 1e-8)
    return find_relation(got, expected, sizes=sizes, args=args, label=label, rtol=rtol, atol=atol)


def _key(compare: Comparator, key: str | int) -> str | int:
    found = compare.item(key)
    return found[1] if found is not None else key
