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

from qkv.grading.compare import Close, Comparator, Items
from qkv.grading.display import python_call
from qkv.grading.feedback.hints import Hint, missing_function_hint

__all__ = [
    "FLOAT32_RTOL",
    "Case",
    "Raises",
    "Suite",
    "TestCase",
    "by_keyword",
    "called_again",
    "check_raises",
    "in_dtype",
]

FLOAT32_RTOL = 1e-4  # float32 keeps about 7 digits: a few roundings of a short sum stay well inside this
FLOAT32_ATOL = 1e-5

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
    keywords : sequence of str
        The parameter names under which the last ``len(keywords)`` arguments are passed, in the order
        of the statement's signature: ``("mask",)`` calls ``f(Q, K, V, mask=…)``. The arguments stay
        in the signature's order, so every rule that reads them by position (hints, relations,
        mutants) reads the same values; the expected value comes from the same keyword call of
        ``expect``. An argument with a default in the statement's signature is left out by giving
        fewer arguments.
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
    keywords: Sequence[str] = ()

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
    keywords: tuple[str, ...] = ()

    @property
    def call(self) -> str:
        """The call as the learner would write it to repeat this test, e.g. ``volume(3, 5, c=7)``."""
        return python_call(self.function, self.args, self.keywords)


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
        versions made by generic changes, :mod:`qkv.grading.feedback.mutants`) to name a mistake no hint
        lists; the lessons layer sets it from the exercise's ``solution``.
    shapes : mapping of str to sequence of str, optional
        The names of the axes of the reference's array parameters, e.g. ``{"Q": ("n_q", "d_k")}``, so
        that sentences about a wrong value speak of ``d_k``, not of 4 (:mod:`qkv.grading.feedback.sizes`).
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
        for row in self.table:
            _check_keywords(row)
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
            keywords = tuple(row.keywords)
            if len(keywords) > len(args):
                raise ValueError(
                    f"The test {row.name!r} passes {len(keywords)} arguments by keyword but has only "
                    f"{len(args)} arguments."
                )
            expected = (
                row.expect if isinstance(row.expect, Raises) else _keyword_call(row.expect, args, keywords)
            )
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
                    keywords=keywords,
                )
            )
        return cases


def _check_keywords(row: TestCase) -> None:
    """A row's keyword names are distinct identifiers (the harness passes them as they are)."""
    names = list(row.keywords)
    if isinstance(row.keywords, str) or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ValueError(
            f"The test {row.name!r} has keywords={row.keywords!r}; it must be a sequence of parameter names."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"The test {row.name!r} passes the same keyword twice: {names!r}.")


def _keyword_call(function: Callable[..., Any], args: tuple[Any, ...], keywords: tuple[str, ...]) -> Any:
    """``function`` called as the learner's function is: the last arguments by their names."""
    split = len(args) - len(keywords)
    return function(*args[:split], **dict(zip(keywords, args[split:], strict=True)))


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
    them, and the grader says so (:mod:`qkv.grading.feedback.explain`).

    Examples
    --------
    >>> row = TestCase("twice of 3", "twice", lambda rng: (rng.normal(size=3),), lambda x: 2 * x)
    >>> [again.name for again in called_again(row)]
    ['twice of 3, called again with the same inputs', 'twice of 3, again with new values of the same shapes']
    """
    same = replace(row, name=f"{row.name}, called again with the same inputs", again=row.name)
    fresh = replace(same, name=f"{row.name}, again with new values of the same shapes", fresh=True)
    return [same, fresh]


def by_keyword(row: TestCase, *names: str, name: str | None = None) -> TestCase:
    """The same test with its last arguments passed by the names the statement's signature gives them:
    a function whose parameter is named otherwise, or stands in another place, fails it.

    Examples
    --------
    >>> row = TestCase("layer of 3", "layer", (1.0, 2.0, 0.5), lambda x, g, eps: (x - g) / eps)
    >>> again = by_keyword(row, "eps")
    >>> again.name, again.keywords
    ('layer of 3, eps passed by name', ('eps',))
    >>> Suite(["layer"], [again]).cases(seed=1)[0].call
    'layer(1.0, 2.0, eps=0.5)'
    """
    words = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return replace(row, name=name or f"{row.name}, {words} passed by name", keywords=names)


def in_dtype(row: TestCase, dtype: str, name: str | None = None) -> TestCase:
    """The same test with every float array of its inputs as ``dtype`` (``"float32"``; an integer dtype
    rounds the entries first), compared with tolerances fit for float32 when the dtype is one. Nothing
    is said about the dtype of the result: a statement that promises one says so in the row's own
    comparator, which is kept.

    Examples
    --------
    >>> row = TestCase("double", "double", lambda rng: (rng.normal(size=2),), lambda x: 2 * x)
    >>> single = in_dtype(row, "float32")
    >>> single.name, single.compare.rtol
    ('double, in float32', 0.0001)
    >>> Suite(["double"], [single]).cases(seed=3)[0].args[0].dtype
    dtype('float32')
    """
    wanted = np.dtype(dtype)
    args = row.args

    def draw(rng: np.random.Generator) -> tuple[Any, ...]:
        drawn = args(rng) if callable(args) else args
        return tuple(_as_dtype(arg, wanted) for arg in drawn)

    fixed = None if callable(args) else tuple(_as_dtype(arg, wanted) for arg in args)
    return replace(
        row,
        name=name or f"{row.name}, in {wanted}",
        args=draw if fixed is None else fixed,
        compare=_loosened(row.compare) if wanted.kind == "f" and wanted.itemsize < 8 else row.compare,
    )


def _as_dtype(value: Any, dtype: np.dtype[Any]) -> Any:
    """A float array as ``dtype`` (rounded first for an integer dtype); containers item by item."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return (np.round(value) if dtype.kind in "iu" else value).astype(dtype)
    if isinstance(value, dict):
        return {key: _as_dtype(item, dtype) for key, item in value.items()}
    if isinstance(value, list | tuple) and any(isinstance(item, np.ndarray | dict) for item in value):
        return type(value)(_as_dtype(item, dtype) for item in value)
    return value


def _loosened(compare: Comparator) -> Comparator:
    """``compare`` with float32's tolerances where its own are tighter (item by item in a tuple)."""
    if isinstance(compare, Close):
        return replace(compare, rtol=max(compare.rtol, FLOAT32_RTOL), atol=max(compare.atol, FLOAT32_ATOL))
    if isinstance(compare, Items):
        return replace(compare, items=tuple(_loosened(item) for item in compare.items))
    return compare


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

    def expect(*args: Any, **keywords: Any) -> Raises:
        try:
            reference(*args, **keywords)
        except exception:
            return expected
        raise AssertionError(f"the reference accepted inputs that must raise {expected.exception}")

    return expect
