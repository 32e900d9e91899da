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
"""

from __future__ import annotations

import itertools
import logging
import opcode
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from qkv.grading.compare import Comparator, Items, Keys, agrees
from qkv.grading.feedback.hints import _NOTHING, STUB, Mistake, Outcome, _compute, _item
from qkv.grading.feedback.mutants import Mutant, Mutants, mutants_for
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
from qkv.grading.suite import Case, Raises

__all__ = ["BUDGET_S", "MAX_PAIRS", "PAIR_POOL", "explain", "mutant_sentence", "seen_sentence"]

_log = logging.getLogger(__name__)
BUDGET_S = 0.08  # seconds of mutant search per grading, at most
PAIR_POOL = 10  # singles closest to the learner's result, combined in pairs when no single holds
MAX_PAIRS = 300  # pairs tried at most, per function
LEADERS = 3  # the closest singles, each paired with every other single
RAISE_OPCODE = opcode.opmap["RAISE_VARARGS"]  # the instruction a raise statement compiles to
NAMED, RELATED, UNNAMED = 0, 1, 2  # how much a failing test's hint says, for the order shown


@dataclass
class _Test:
    index: int
    case: Case
    result: TestResult
    outcome: Outcome | None

    @property
    def failed_value(self) -> bool:
        """A returned value that differs (not a side effect alone, not an exception)."""
        outcome = self.outcome
        return (
            self.result.status != "pass"
            and outcome is not None
            and outcome.has_returned
            and not isinstance(self.case.expected, Raises)
            and not agrees(self.case.compare, outcome.returned, self.case.expected)
        )

    @property
    def deliberate(self) -> bool:
        """Whether what the call did besides returning a value is behaviour the mutants must share: a
        test that expects an exception, or an exception the learner's own raise statement raised (a
        crash inside NumPy where a value is expected constrains nothing, as before)."""
        outcome = self.outcome
        if outcome is None:
            return False
        return isinstance(self.case.expected, Raises) or (not outcome.has_returned and outcome.own_raise)

    @property
    def failed_behaviour(self) -> bool:
        """A failure the mutants can share that is not a wrong value: an exception missing, of another
        class or raised by NumPy instead of a check, or raised where a value belongs."""
        return self.result.status not in ("pass", "not_run") and self.deliberate


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


@dataclass(frozen=True)
class _Places:
    """The suite's functions (those it tests) and those whose tests all pass."""

    tested: frozenset[str] = frozenset()
    right: frozenset[str] = frozenset()
    learner: LearnerCode | None = None  # the learner's code, to tell whether it shows a mutant's change

    def tier(self, changed: str, function: str) -> int:
        """How likely a change of ``changed`` explains ``function``'s results: 0 most, 2 least."""
        if changed == function or (changed in self.tested and changed not in self.right):
            return 0
        return 1 if changed not in self.tested else 2


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


def _behaves_alike(mutant: Mutant, group: list[_Test]) -> bool:
    """Whether the mutant raises (or returns) as the learner's code does on every test where that is
    what the test judges."""
    function = group[0].case.function
    return all(
        _alike_behaviour(test, _behaviour(mutant, function, test.case.args))
        for test in group
        if test.deliberate
    )


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


def _alike(comparator: Comparator, got: Any, value: Any) -> bool:
    """The comparator's verdict, with NaN equal to NaN where both break alike (an overflow)."""
    try:
        if agrees(comparator, got, value):
            return True
        mine, theirs = _flat(got), _flat(value)
        if mine is None or theirs is None or mine.shape != theirs.shape or not np.isnan(theirs).any():
            return False
        with np.errstate(all="ignore"):
            return bool(np.allclose(mine, theirs, equal_nan=True))
    except Exception:
        return False


# --------------------------------------------------------------------------------------------- relations
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


# ----------------------------------------------------------------------------------------------- mutants
def mutant_sentence(mutant: Mutant) -> str:
    """What a mutant changed, as the hint of a test whose results it explains.

    Examples
    --------
    >>> from qkv.grading.feedback.mutants import Mutants
    >>> found = Mutants("def f(S):\\n    return S / S.sum(axis=-1, keepdims=True)\\n")
    >>> key = next(k for k in found.singles("f") if found.mutant(k).changes[0].operator == "keepdims")
    >>> mutant_sentence(found.mutant(key))
    'Your results are what the reference solution gives with one change, without keepdims=True: \
S.sum(axis=-1) (in f).'
    """
    count = "one change" if len(mutant.changes) == 1 else f"{len(mutant.changes)} changes"
    return f"Your results are what the reference solution gives with {count}, {mutant.describe()}."


def seen_sentence(mutant: Mutant) -> str:
    """What a mutant's results show, where the learner's code does not make its change: the numbers,
    not a cause.

    Examples
    --------
    >>> from qkv.grading.feedback.mutants import Mutants
    >>> found = Mutants("def f(S):\\n    return S / S.sum(axis=-1, keepdims=True)\\n")
    >>> key = next(k for k in found.singles("f") if found.mutant(k).changes[0].operator == "keepdims")
    >>> seen_sentence(found.mutant(key)).endswith("has the same effect on these inputs: find it.")
    True
    """
    count = "one change" if len(mutant.changes) == 1 else f"{len(mutant.changes)} changes"
    return (
        f"Your results are the numbers the reference solution gives with {count}, {mutant.describe()}. "
        "Your code does not make that change as written, so some other step of yours has the same effect "
        "on these inputs: find it."
    )


Found = tuple[Mutant, bool]  # a mutant whose results fit, and whether the learner's code shows its change


def _search(
    group: list[_Test], deadline: float, places: _Places | None = None, behaviour: bool = False
) -> Found | None:
    """The mutant whose results equal the learner's on every test of the function that returned (with
    ``behaviour``, that also raises where the learner's code raised on purpose or a test expects an
    exception, and explains first the exception missing or of another class).

    Singles are tried in three tiers (:meth:`_Places.tier`): the function's own changes and those of
    failing callees, their pairs, the changes of callees the suite does not test, the pairs of all
    (those not tried yet), then the changes of callees whose own tests all pass. A mutant whose change
    the learner's code does not show is kept aside while the singles of its tier go on: a single of that
    tier the code shows is said instead.
    """
    reference = group[0].case.reference
    mutants = mutants_for(reference)
    # For an exception, the tests that judge one and the values that are right constrain the mutant (a
    # wrong value is the value search's to explain: a program may have both mistakes).
    returned = [
        test
        for test in group
        if test.outcome is not None
        and (
            (test.outcome.has_returned and not isinstance(test.case.expected, Raises))
            or (behaviour and test.deliberate)
        )
        and not (behaviour and test.failed_value)
    ]
    wrong = [test for test in returned if test.failed_behaviour] if behaviour else []
    failing = wrong + [test for test in returned if test.failed_value]
    if mutants is None or not failing:
        return None
    function = group[0].case.function
    singles = mutants.singles(function)
    where = places or _Places()
    tiers: list[list[tuple[int, ...]]] = [[], [], []]
    for key in singles:
        tiers[where.tier(mutants.change(key[0]).function, function)].append(key)
    scored: list[tuple[float, tuple[int, ...]]] = []
    paired: set[tuple[int, ...]] = set()
    aside: Found | None = None
    # The pairs of the likeliest singles before the singles of code the exercise gives (a block's two
    # residuals moved before every change of the attention it calls), then the pairs of all.
    for keys in (tiers[0], None, tiers[1], None, tiers[2]):
        if aside is not None:
            return aside  # the rest of its tier was tried: a search that goes on costs the learner time
        candidates = [p for p in _pairs(mutants, scored) if p not in paired] if keys is None else keys
        paired |= set(candidates) if keys is None else set()
        for key in candidates:
            if time.perf_counter() > deadline:
                return aside
            found = _try(mutants, key, function, failing[0], returned, scored if keys is not None else None)
            if found is not None and mutants.shown_by(key, where.learner):
                return found, True
            if found is not None and aside is None:
                aside = found, False
    return aside


def _pairs(mutants: Mutants, scored: list[tuple[float, tuple[int, ...]]]) -> list[tuple[int, ...]]:
    """The pairs worth trying, at most :data:`MAX_PAIRS`: two changes that exchange two names, the same
    change in two places, two of one kind on one line, two among the singles that came closest to the
    learner's result, any two on one line, two terms dropped anywhere in the function, and the closest
    singles with any other; taken from each of these kinds in turn, so that a reference with many names
    to exchange does not crowd out the same slip made twice."""
    keys = [key for _, key in scored]
    lines: dict[tuple[str, int], list[tuple[int, ...]]] = {}
    for key in keys:
        change = mutants.change(key[0])
        lines.setdefault((change.function, change.line), []).append(key)

    def kind(key: tuple[int, ...]) -> str:
        return mutants.change(key[0]).operator

    same_line = [(a, b) for listed in lines.values() for i, a in enumerate(listed) for b in listed[i + 1 :]]
    pool = [key for _, key in sorted(scored, reverse=True)[:PAIR_POOL]]
    exchanges = [(*a, *b) for a, b in same_line if kind(a) == kind(b) and _exchanged_changes(mutants, a, b)]
    # The same slip made twice (a mean and a variance both over axis 0, on two lines).
    by_words: dict[tuple[str, str], list[tuple[int, ...]]] = {}
    for key in keys:
        change = mutants.change(key[0])
        by_words.setdefault((change.function, change.words), []).append(key)
    twice = [(*a, *b) for listed in by_words.values() for i, a in enumerate(listed) for b in listed[i + 1 :]]
    # The same slip everywhere it can be made (every product of a function transposed alike).
    everywhere = [tuple(k for key in listed for k in key) for listed in by_words.values() if len(listed) > 2]
    kinds = [(*a, *b) for a, b in same_line if kind(a) == kind(b)]
    closest = [(*a, *b) for i, a in enumerate(pool) for b in pool[i + 1 :]]
    anything = [(*a, *b) for a, b in same_line]
    # Two terms left out anywhere in the function (a scale's // h and a last projection both forgotten):
    # few changes drop a term, so all their pairs are few.
    drops = [key for key in keys if kind(key) == "drop"]
    dropped = [(*a, *b) for i, a in enumerate(drops) for b in drops[i + 1 :]]
    # The closest singles with any other (a check made stricter, and another check left out); of singles
    # as close, the likeliest first (the order they were tried in).
    leaders = [key for _, key in sorted(scored, key=lambda item: item[0], reverse=True)[:LEADERS]]
    best = [(*leader, *key) for key in keys for leader in leaders if key != leader]
    turns = itertools.zip_longest(exchanges, twice, everywhere, kinds, closest, anything, dropped, best)
    pairs = [pair for turn in turns for pair in turn if pair is not None]
    return list(dict.fromkeys(pairs))[:MAX_PAIRS]


def _exchanged_changes(mutants: Mutants, a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two changes exchange two names: one puts y where x belongs, the other x where y does."""
    one, two = mutants.change(a[0]).exchange, mutants.change(b[0]).exchange
    return one is not None and two is not None and one == two[::-1]


def _try(
    mutants: Mutants,
    key: tuple[int, ...],
    function: str,
    first: _Test,
    returned: list[_Test],
    scored: list[tuple[float, tuple[int, ...]]] | None,
) -> Mutant | None:
    mutant = mutants.mutant(key)
    if mutant.functions is None or function not in mutant.functions:
        return None
    behaviour = _behaviour(mutant, function, first.case.args)
    if not _alike_behaviour(first, behaviour):
        got = first.outcome.returned if first.outcome is not None else None
        if scored is not None and first.failed_value:
            close = behaviour[0] == "returned"
            scored.append((_closeness(got, behaviour[1], first.case.expected) if close else 0.0, key))
        elif scored is not None:  # an exception missing or of another class: how many such tests agree
            wrong = [test for test in returned if test.failed_behaviour and test is not first][:3]
            alike = sum(
                _alike_behaviour(test, _behaviour(mutant, function, test.case.args)) for test in wrong
            )
            scored.append((alike / max(1, len(wrong)), key))
        return None
    others = [test for test in returned if test is not first]
    if scored is None:  # a pair: it holds or it does not
        alike = all(_alike_behaviour(test, _behaviour(mutant, function, test.case.args)) for test in others)
        return mutant if alike else None
    fits = [_alike_behaviour(test, _behaviour(mutant, function, test.case.args)) for test in others]
    if all(fits):
        return mutant
    # Alike on the first failing test (a value or an exception), not on every other: closer than any
    # single that is not, and the more tests it fits the closer, so it is paired (one of three weights
    # transposed where all three were, when the first test's other two are symmetric; a check made
    # stricter, where the row check is missing too).
    scored.append((1.0 + sum(fits) / len(fits), key))
    return None


Behaviour = tuple[
    str, Any
]  # ("returned", value), ("raised", (nearest built-in class, own raise)), ("failed", None)


def _behaviour(mutant: Mutant, function: str, args: Sequence[Any]) -> Behaviour:
    """What the mutant does on these arguments: the value it returns, or the exception it raises."""
    try:
        return "returned", mutant.call(function, args)
    except Exception as error:  # a mutant that cannot run gives no value; its exception may be the point
        return "raised", (_builtin_class(error), _raised_by_a_raise(error))


def _alike_behaviour(test: _Test, behaviour: Behaviour) -> bool:
    """Whether the mutant did what the learner's code did on this test (NaN equal to NaN)."""
    outcome = test.outcome
    if outcome is None:
        return False
    kind, what = behaviour
    if outcome.has_returned:
        return kind == "returned" and _same(test.case, outcome.returned, what)
    return kind == "raised" and what == (outcome.exception, outcome.own_raise)


def _builtin_class(error: BaseException) -> str:
    """The nearest built-in class of an exception (NumPy's AxisError is a ValueError)."""
    return next(cls.__name__ for cls in type(error).__mro__ if cls.__module__ == "builtins")


def _raised_by_a_raise(error: BaseException) -> bool:
    """Whether a raise statement of the mutant raised it (its check), not NumPy or an operator."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or not tb.tb_frame.f_code.co_filename.startswith("<reference"):
        return False
    code, at = tb.tb_frame.f_code.co_code, tb.tb_lasti
    return 0 <= at < len(code) and code[at] == RAISE_OPCODE


def _same(case: Case, got: Any, value: Any) -> bool:
    """The test's own comparison, with NaN equal to NaN (a mutant may break exactly where the learner's
    code does). A test that expects an exception has no comparison meant for values (its comparator
    may not take a tuple of arrays of several shapes): the two values are compared item by item."""
    if isinstance(case.expected, Raises):
        return _equal_values(got, value)
    return _alike(case.compare, got, value)


def _equal_values(got: Any, value: Any) -> bool:
    """Whether two returned values are the same: containers item by item, arrays by shape and close
    numbers (NaN equal to NaN), anything else by ``==``."""
    if isinstance(got, dict) or isinstance(value, dict):
        return (
            type(got) is type(value)
            and got.keys() == value.keys()
            and all(_equal_values(got[key], value[key]) for key in got)
        )
    if isinstance(got, tuple | list) or isinstance(value, tuple | list):
        return (
            type(got) is type(value)
            and len(got) == len(value)
            and all(_equal_values(a, b) for a, b in zip(got, value, strict=True))
        )
    try:
        if isinstance(got, np.ndarray) or isinstance(value, np.ndarray):
            mine, theirs = np.asarray(got), np.asarray(value)
            with np.errstate(all="ignore"):
                return mine.shape == theirs.shape and bool(np.allclose(mine, theirs, equal_nan=True))
        return bool(got == value)
    except Exception:  # values that cannot be compared are not the same
        return False


def _flat(value: Any) -> np.ndarray[Any, Any] | None:
    """Every number of a value (an array, or a tuple of arrays) in one float array, or None."""
    try:
        if isinstance(value, tuple | list) and value and all(isinstance(v, np.ndarray) for v in value):
            return np.concatenate([np.asarray(v, dtype=np.float64).reshape(-1) for v in value])
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return array.reshape(-1)


def _closeness(got: Any, value: Any, expected: Any) -> float:
    """How many of the numbers that the learner has wrong the mutant has the same: pairs start there."""
    mine, theirs, want = _flat(got), _flat(value), _flat(expected)
    if mine is None or theirs is None or want is None or not (mine.shape == theirs.shape == want.shape):
        return 0.0
    with np.errstate(all="ignore"):
        wrong = ~np.isclose(mine, want, equal_nan=True)
        same = np.isclose(mine, theirs, equal_nan=True)
    return float((wrong & same).sum()) / max(1, int(wrong.sum()))


# ------------------------------------------------------------------------------------------------- order
def _ordered(results: list[TestResult], cases: Sequence[Case], ranks: dict[int, int]) -> list[TestResult]:
    """Each function's failing tests, in the places they hold, ordered by how much their hint says."""
    out = list(results)
    for function in dict.fromkeys(case.function for case in cases):
        places = [i for i, case in enumerate(cases) if case.function == function and i in ranks]
        ordered = sorted(places, key=lambda i: ranks[i])  # stable: the suite's order within a rank
        for place, source in zip(places, ordered, strict=True):
            out[place] = results[source]
    return out
