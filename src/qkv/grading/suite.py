"""Test suites as tables: each row names a function, its inputs, how the expected value is made, how it is
compared and which hints name known mistakes.

A lesson's grading module (``grading.py`` in its folder) builds a :class:`Suite` per code exercise from
rows of :class:`TestCase`. The grader knows nothing of any lesson: it asks the suite for the concrete
:class:`Case` list of one seed, runs the calls in the sandbox and compares.

Inputs are either fixed or drawn by a generator from the run's seed, so a recorded seed repeats a run
exactly and answers copied from an earlier run fail on the next.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from qkv.grading.compare import Close, Comparator
from qkv.grading.display import python_call
from qkv.grading.hints import Hint, missing_function_hint

__all__ = ["Case", "Raises", "Suite", "TestCase", "called_again", "check_raises"]

ArgumentMaker = Callable[[np.random.Generator], Sequence[Any]]


@dataclass(frozen=True)
class Raises:
    """The expected outcome of a call whose inputs are invalid: this exception, and why.

    Parameters
    ----------
    exception : str
        The name of a built-in exception, such as ``"ValueError"``.
    reason : str
        Why the inputs are invalid, completing "Expected ValueError because …".
    checked : bool
        The learner's own check must raise it: a ``raise`` statement in their file, not NumPy or an
        operator failing on the same inputs (``Q @ K.T`` raises a ValueError of its own when the sizes
        do not fit, so a function without the check would pass). False accepts the exception from
        anywhere.
    """

    exception: str
    reason: str
    checked: bool = True


@dataclass(frozen=True)
class TestCase:
    """One row of a suite's table.

    Parameters
    ----------
    name : str
        What the test checks, in words; the same for every seed.
    function : str
        The learner's function to call.
    args : tuple or callable
        The arguments, or a function of a ``numpy.random.Generator`` that draws them.
    expect : callable or Raises
        The reference implementation, called with the same arguments to make the expected value (from
        ``qkv`` or from the lesson's folder); or the exception the call must raise.
    compare : Comparator
        How the returned value is compared with the expected one (ignored for ``Raises``).
    hints : sequence of Hint
        Rules that name known mistakes, tried in order when the test fails.
    check_inputs : bool or None
        Fail the test when the function changes one of its arguments in place (an array's values, shape or
        dtype; an item of a list or dict). None (the default) takes the suite's ``check_inputs``.
    refuse_warnings : bool or None
        Fail the test when the call emits a warning (such as NumPy's ``RuntimeWarning: invalid value
        encountered in divide``). None (the default) takes the suite's ``refuse_warnings``.
    again : str or None
        The name of an earlier row whose arguments this row repeats (fresh copies of the same values):
        the same call made twice in one process, which tells a function that keeps state between
        calls. Its ``args`` are then not drawn.
    fresh : bool
        With ``again``: the entries of each float array of those arguments shuffled (the same shapes
        and the same numbers, in new places), so that a function keeping a result by its inputs' shapes
        is called with new values.
    """

    __test__ = False  # not a pytest test class, despite its name

    name: str
    function: str
    args: Sequence[Any] | ArgumentMaker
    expect: Callable[..., Any] | Raises
    compare: Comparator = field(default_factory=Close)
    hints: Sequence[Hint] = ()
    check_inputs: bool | None = None
    refuse_warnings: bool | None = None
    again: str | None = None
    fresh: bool = False

    def draw_args(self, rng: np.random.Generator) -> tuple[Any, ...]:
        """The arguments of this row for one run."""
        return tuple(self.args(rng) if callable(self.args) else self.args)


@dataclass(frozen=True)
class Case:
    """One test of one run: the call, what it must give, and how the result is judged."""

    name: str
    function: str
    args: tuple[Any, ...]
    expected: Any
    compare: Comparator
    hints: Sequence[Hint] = ()
    missing_hint: str = ""
    check_inputs: bool = True
    refuse_warnings: bool = False
    reference: str | None = field(default=None, repr=False, compare=False)
    shapes: Mapping[str, Sequence[str]] = field(default_factory=dict, repr=False, compare=False)
    explain: bool = True

    @property
    def call(self) -> str:
        """The call as the learner would write it to repeat this test, e.g. ``volume(3, 5, 7)``."""
        return python_call(self.function, self.args)


@dataclass(frozen=True)
class Suite:
    """The hidden tests of one code exercise.

    Parameters
    ----------
    functions : sequence of str
        The functions the learner writes (the starter code defines each one).
    table : sequence of TestCase
        Every test, in its stable order.
    time_limit_s : float, optional
        The wall-clock limit of one run, when the exercise needs less than the grader's (an endless loop
        then holds a grader for this long, not for the grader's whole limit); shown on the page.
    check_inputs : bool
        Fail a test whose call changes one of its arguments in place (on by default; a row can say
        otherwise with its own ``check_inputs``).
    refuse_warnings : bool
        Fail a test whose call emits a warning (off by default; a row can say otherwise with its own
        ``refuse_warnings``).
    reference : str, optional
        The exercise's reference solution, as a program. The grader derives mutants from it (wrong
        versions made by generic changes, :mod:`qkv.grading.mutants`) to name a mistake no hint lists;
        the lessons layer sets it from the exercise's ``solution``.
    shapes : mapping of str to sequence of str, optional
        The names of the axes of the reference's array parameters, e.g. ``{"Q": ("n_q", "d_k")}``, so
        that sentences about a wrong value speak of ``d_k``, not of 4 (:mod:`qkv.grading.sizes`).
    explain : bool
        Look for relations and mutants when a value differs (on by default).

    Raises
    ------
    ValueError
        If a row calls a function that is not in ``functions``, or two rows share a name.

    Examples
    --------
    >>> from qkv.grading.compare import Whole
    >>> def volume(a, b, c):
    ...     return a * b * c
    >>> suite = Suite(["volume"], [
    ...     TestCase("volume of a unit cube", "volume", (1, 1, 1), volume, Whole()),
    ...     TestCase("volume of a random box", "volume", lambda rng: rng.integers(2, 9, size=3).tolist(),
    ...              volume, Whole()),
    ... ])
    >>> [case.call for case in suite.cases(seed=4)][0]
    'volume(1, 1, 1)'
    >>> suite.cases(seed=4) == suite.cases(seed=4)
    True
    >>> quiet = TestCase("no warning", "volume", (1, 2, 3), volume, refuse_warnings=True)
    >>> strict = Suite(["volume"], [quiet])
    >>> case = strict.cases(seed=4)[0]
    >>> case.check_inputs, case.refuse_warnings
    (True, True)
    """

    functions: Sequence[str]
    table: Sequence[TestCase]
    time_limit_s: float | None = None
    check_inputs: bool = True
    refuse_warnings: bool = False
    reference: str | None = field(default=None, repr=False, compare=False)
    shapes: Mapping[str, Sequence[str]] = field(default_factory=dict, repr=False)
    explain: bool = True

    def __post_init__(self) -> None:
        if self.time_limit_s is not None and not (
            isinstance(self.time_limit_s, int | float)
            and not isinstance(self.time_limit_s, bool)
            and 0 < self.time_limit_s <= 60
        ):
            raise ValueError(
                f"time_limit_s must be a number of seconds above 0 and at most 60, not {self.time_limit_s!r}."
            )
        for option in ("check_inputs", "refuse_warnings"):
            if not isinstance(getattr(self, option), bool):
                raise ValueError(f"{option} must be True or False, not {getattr(self, option)!r}.")
            for row in self.table:
                if getattr(row, option) is not None and not isinstance(getattr(row, option), bool):
                    raise ValueError(
                        f"The test {row.name!r} has {option}={getattr(row, option)!r}; it must be True, "
                        "False or None (the suite's setting)."
                    )
        names = [row.name for row in self.table]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"Two tests of a suite share the name {twice[0]!r}; every test needs its own.")
        earlier = [row.name for row in self.table]
        for index, row in enumerate(self.table):
            if row.again is not None and row.again not in earlier[:index]:
                raise ValueError(
                    f"The test {row.name!r} repeats the call of {row.again!r}, which is not an earlier test "
                    "of the suite."
                )
        unknown = [row.function for row in self.table if row.function not in self.functions]
        if unknown:
            raise ValueError(
                f"A test calls {unknown[0]!r}, which is not one of the suite's functions "
                f"({', '.join(self.functions)})."
            )

    def cases(self, seed: int) -> list[Case]:
        """The concrete tests of one run, in the table's order.

        Raises
        ------
        AssertionError
            If the reference accepts the inputs of a row that expects an exception (a bug in the table).
        """
        rng = np.random.default_rng(seed)
        missing = missing_function_hint(self.functions)
        cases = []
        drawn: dict[str, tuple[Any, ...]] = {}
        for row in self.table:
            # A row that repeats an earlier one (the suite checked it is earlier) gets copies of its args.
            args = copy.deepcopy(drawn[row.again]) if row.again is not None else row.draw_args(rng)
            if row.fresh:  # its own generator: the other rows draw what they drew before
                args = _shuffled(args, np.random.default_rng([seed, len(drawn)]))
            drawn[row.name] = args
            expected = row.expect if isinstance(row.expect, Raises) else row.expect(*args)
            cases.append(
                Case(
                    row.name,
                    row.function,
                    args,
                    expected,
                    row.compare,
                    row.hints,
                    missing,
                    check_inputs=self.check_inputs if row.check_inputs is None else row.check_inputs,
                    refuse_warnings=self.refuse_warnings
                    if row.refuse_warnings is None
                    else row.refuse_warnings,
                    reference=self.reference,
                    shapes=self.shapes,
                    explain=self.explain,
                )
            )
        return cases


def _shuffled(value: Any, rng: np.random.Generator) -> Any:
    """The value with the entries of each float array in new places (containers item by item)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size > 1:
        flat = value.reshape(-1).copy()
        for _ in range(4):  # a permutation that moves something, unless every entry is the same
            rng.shuffle(flat)
            if not np.array_equal(flat, value.reshape(-1)):
                break
        return flat.reshape(value.shape)
    if isinstance(value, dict):
        return {key: _shuffled(item, rng) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_shuffled(item, rng) for item in value)
    return value


def called_again(row: TestCase) -> list[TestCase]:
    """Two rows that call ``row``'s function again in the same process: with the very same inputs, and
    (where ``row`` draws its inputs) with new values of the same shapes. A function that keeps state
    from one call to the next (a cache keyed by shapes, a global list, a class attribute) fails one of
    them, and the grader says so (:mod:`qkv.grading.explain`).

    Examples
    --------
    >>> row = TestCase("twice of 3", "twice", lambda rng: (rng.normal(size=3),), lambda x: 2 * x)
    >>> [again.name for again in called_again(row)]
    ['twice of 3, called again with the same inputs', 'twice of 3, again with new values of the same shapes']
    """
    same = replace(row, name=f"{row.name}, called again with the same inputs", again=row.name)
    fresh = replace(same, name=f"{row.name}, again with new values of the same shapes", fresh=True)
    return [same, fresh]


def check_raises(reference: Callable[..., Any], expected: Raises) -> Callable[..., Raises]:
    """An ``expect`` that first checks the reference really raises for the drawn inputs.

    Examples
    --------
    >>> def half(n):
    ...     if n % 2:
    ...         raise ValueError("odd")
    ...     return n // 2
    >>> check_raises(half, Raises("ValueError", "n is odd"))(3).reason
    'n is odd'
    """
    exception = getattr(builtins, expected.exception)

    def expect(*args: Any) -> Raises:
        try:
            reference(*args)
        except exception:
            return expected
        raise AssertionError(f"the reference accepted inputs that must raise {expected.exception}")

    return expect
