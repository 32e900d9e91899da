"""The bounded mutant search of the explanation pass: the mutants of a function's reference whose results
equal the learner's on every test of the function, and the sentences that say what one changed.

Singles are tried first on the first failing test and confirmed on the others; pairs only when no single
holds, among the :data:`PAIR_POOL` singles closest to the learner's result (at most :data:`MAX_PAIRS`).
The search stops at the deadline the pass gives it (:data:`qkv.grading.feedback.explain.BUDGET_S`).
"""

from __future__ import annotations

import itertools
import opcode
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from qkv.grading.compare import Comparator, agrees
from qkv.grading.feedback.hints import Outcome
from qkv.grading.feedback.mutants import Mutant, Mutants, mutants_for
from qkv.grading.feedback.support import LearnerCode
from qkv.grading.results import TestResult
from qkv.grading.suite import Case, Raises

__all__ = ["MAX_PAIRS", "PAIR_POOL", "mutant_sentence", "seen_sentence"]

PAIR_POOL = 10  # singles closest to the learner's result, combined in pairs when no single holds
MAX_PAIRS = 300  # pairs tried at most, per function
LEADERS = 3  # the closest singles, each paired with every other single
RAISE_OPCODE = opcode.opmap["RAISE_VARARGS"]  # the instruction a raise statement compiles to


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


def _behaves_alike(mutant: Mutant, group: list[_Test]) -> bool:
    """Whether the mutant raises (or returns) as the learner's code does on every test where that is
    what the test judges."""
    function = group[0].case.function
    return all(
        _alike_behaviour(test, _behaviour(mutant, function, test.case.args))
        for test in group
        if test.deliberate
    )


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


def _ordered(results: list[TestResult], cases: Sequence[Case], ranks: dict[int, int]) -> list[TestResult]:
    """Each function's failing tests, in the places they hold, ordered by how much their hint says."""
    out = list(results)
    for function in dict.fromkeys(case.function for case in cases):
        places = [i for i, case in enumerate(cases) if case.function == function and i in ranks]
        ordered = sorted(places, key=lambda i: ranks[i])  # stable: the suite's order within a rank
        for place, source in zip(places, ordered, strict=True):
            out[place] = results[source]
    return out
