"""The hidden tests of the lesson's Part 2, with expected values from the ``qkv`` reference.

Every sentence of the Part 2 spec is covered: values on random shapes (one token, ``d_v ≠ d_k``,
non-square weights), each ``ValueError`` condition, the tuple and the dict keys, ``param_count`` on several
sizes, and the lesson's own ``x = [1, 2]`` example. Inputs are drawn from a seed, so a recorded seed repeats
a run exactly and answers copied from an earlier run fail on the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from qkv import output_shape, param_count, project_qkv, qkv_shapes

__all__ = ["SUITES", "Case", "Raises", "Suite"]

Array = np.ndarray[Any, np.dtype[Any]]


@dataclass(frozen=True)
class Raises:
    """The expected outcome of a test whose inputs are invalid: this exception, and why."""

    exception: str
    reason: str


@dataclass(frozen=True)
class Case:
    """One test: the function, its inputs and what the reference returns (or raises) for them.

    ``check`` names how the result is compared: ``"values"`` (numbers and shapes), ``"tuple"`` (the container
    type), ``"keys"`` (the dict's keys), ``"raises"`` (an exception is expected). ``tags`` describe the inputs
    for the hints (``"dv_differs"``, ``"columns_differ"`` …).
    """

    name: str
    function: str
    args: tuple[Any, ...]
    expected: Any
    check: str = "values"
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Suite:
    """A named list of tests built from a seed."""

    name: str
    functions: tuple[str, ...]
    build: Callable[[int], list[Case]]

    def cases(self, seed: int) -> list[Case]:
        """The suite's tests for ``seed``, in their stable order.

        Examples
        --------
        >>> suite = SUITES["L4.1-part2"]
        >>> [case.name for case in suite.cases(1)] == [case.name for case in suite.cases(2)]
        True
        >>> suite.cases(1)[0].expected
        (array([[3, 2]]), array([[2, 1]]), array([[2, 4]]))
        """
        return self.build(seed)


def _values(rng: np.random.Generator, *shape: int) -> Array:
    """Random weights with two decimals: readable in feedback, and never whole numbers by design."""
    values = np.round(rng.uniform(-2.0, 2.0, size=shape), 2)
    values[values == np.round(values)] += 0.25  # a whole number would hide truncation to int
    return values


def _projection(
    name: str, X: Array, Wq: Array, Wk: Array, Wv: Array, tags: set[str], check: str = "values"
) -> Case:
    return Case(name, "project_qkv", (X, Wq, Wk, Wv), project_qkv(X, Wq, Wk, Wv), check, frozenset(tags))


def _rejection(name: str, X: Array, Wq: Array, Wk: Array, Wv: Array, reason: str, tag: str) -> Case:
    try:
        project_qkv(X, Wq, Wk, Wv)
    except ValueError:
        return Case(
            name, "project_qkv", (X, Wq, Wk, Wv), Raises("ValueError", reason), "raises", frozenset({tag})
        )
    raise AssertionError(f"the reference accepted the inputs of the test {name!r}")  # a bug in this suite


def _distinct_sizes(rng: np.random.Generator, count: int, low: int = 2, high: int = 9) -> list[int]:
    return [int(n) for n in rng.choice(np.arange(low, high + 1), size=count, replace=False)]


def build_part2(seed: int) -> list[Case]:
    """All tests of L4.1 Part 2 for one seed."""
    rng = np.random.default_rng(seed)
    cases: list[Case] = []

    # project_qkv: values
    lesson = (
        np.array([[1, 2]]),
        np.array([[1, 0], [1, 1]]),
        np.array([[0, 1], [1, 0]]),
        np.array([[2, 0], [0, 2]]),
    )
    cases.append(_projection("project_qkv reproduces the lesson's example x = [1, 2]", *lesson, {"lesson"}))
    n, m = (int(v) for v in rng.integers(2, 5, size=2))
    n += 1
    cases.append(
        _projection(
            "project_qkv with square weights (d_model = d_k = d_v)",
            _values(rng, n, m),
            _values(rng, m, m),
            _values(rng, m, m),
            _values(rng, m, m),
            {"square"},
        )
    )
    d_model, d_k = _distinct_sizes(rng, 2, 2, 5)
    d_v = d_k + 1
    cases.append(
        _projection(
            "project_qkv with one token (n = 1)",
            _values(rng, 1, d_model),
            _values(rng, d_model, d_k),
            _values(rng, d_model, d_k),
            _values(rng, d_model, d_v),
            {"one_token", "dv_differs"},
        )
    )
    n, d_k = int(rng.integers(2, 6)), int(rng.integers(2, 5))
    d_v = d_k + int(rng.integers(1, 3))
    cases.append(
        _projection(
            "project_qkv with d_v different from d_k",
            _values(rng, n, d_k),
            _values(rng, d_k, d_k),
            _values(rng, d_k, d_k),
            _values(rng, d_k, d_v),
            {"dv_differs"},
        )
    )
    n, d_model, d_k = _distinct_sizes(rng, 3, 2, 6)
    cases.append(
        _projection(
            "project_qkv with non-square weights (d_model ≠ d_k)",
            _values(rng, n, d_model),
            _values(rng, d_model, d_k),
            _values(rng, d_model, d_k),
            _values(rng, d_model, d_k),
            {"non_square"},
        )
    )
    n, m = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    cases.append(
        _projection(
            "project_qkv returns the tuple (Q, K, V)",
            _values(rng, n, m),
            _values(rng, m, m),
            _values(rng, m, m),
            _values(rng, m, m),
            {"square"},
            check="tuple",
        )
    )

    # project_qkv: the ValueError conditions
    n, d_model, d_k = _distinct_sizes(rng, 3, 2, 5)
    X, good = _values(rng, n, d_model), _values(rng, d_model, d_k)
    bad_rows = _values(rng, d_model + 1, d_k)
    rows = "a weight matrix does not have d_model rows"
    cases.append(
        _rejection(
            "project_qkv raises ValueError when Wq does not have d_model rows",
            X,
            bad_rows,
            good,
            good,
            rows,
            "rows",
        )
    )
    cases.append(
        _rejection(
            "project_qkv raises ValueError when Wk does not have d_model rows",
            X,
            good,
            bad_rows,
            good,
            rows,
            "rows",
        )
    )
    cases.append(
        _rejection(
            "project_qkv raises ValueError when Wv does not have d_model rows",
            X,
            good,
            good,
            bad_rows,
            rows,
            "rows",
        )
    )
    cases.append(
        _rejection(
            "project_qkv raises ValueError when Wq and Wk have different numbers of columns",
            X,
            good,
            _values(rng, d_model, d_k + 1),
            good,
            "Wq and Wk have different numbers of columns",
            "columns_differ",
        )
    )

    # qkv_shapes
    cases.append(
        Case(
            "qkv_shapes for the lesson's sizes (n = 1, d_model = d_k = d_v = 2)",
            "qkv_shapes",
            (1, 2, 2, 2),
            qkv_shapes(1, 2, 2, 2),
        )
    )
    sizes = tuple(_distinct_sizes(rng, 4))
    cases.append(
        Case("qkv_shapes with n, d_model, d_k and d_v all different", "qkv_shapes", sizes, qkv_shapes(*sizes))
    )
    sizes = (1, *_distinct_sizes(rng, 3))
    cases.append(Case("qkv_shapes with one token (n = 1)", "qkv_shapes", sizes, qkv_shapes(*sizes)))
    sizes = tuple(_distinct_sizes(rng, 4))
    cases.append(
        Case('qkv_shapes uses the keys "Q", "K" and "V"', "qkv_shapes", sizes, qkv_shapes(*sizes), "keys")
    )
    sizes = tuple(_distinct_sizes(rng, 4))
    cases.append(
        Case("qkv_shapes gives each shape as a tuple", "qkv_shapes", sizes, qkv_shapes(*sizes), "tuple")
    )

    # output_shape
    n_q, n_k, d_v = _distinct_sizes(rng, 3)
    cases.append(
        Case(
            "output_shape with n_q, n_k and d_v all different",
            "output_shape",
            (n_q, n_k, d_v),
            output_shape(n_q, n_k, d_v),
        )
    )
    n_k, d_v = _distinct_sizes(rng, 2)
    cases.append(
        Case(
            "output_shape with one query (n_q = 1)", "output_shape", (1, n_k, d_v), output_shape(1, n_k, d_v)
        )
    )
    sizes = tuple(_distinct_sizes(rng, 3))
    cases.append(Case("output_shape returns a tuple", "output_shape", sizes, output_shape(*sizes), "tuple"))

    # param_count
    cases.append(
        Case("param_count for the lesson's sizes (2, 2, 2)", "param_count", (2, 2, 2), param_count(2, 2, 2))
    )
    sizes = tuple(_distinct_sizes(rng, 3, 2, 40))
    cases.append(
        Case("param_count with d_model, d_k and d_v all different", "param_count", sizes, param_count(*sizes))
    )
    d_model, d_k = _distinct_sizes(rng, 2, 2, 40)
    cases.append(
        Case(
            "param_count with d_v = d_k but d_model different",
            "param_count",
            (d_model, d_k, d_k),
            param_count(d_model, d_k, d_k),
        )
    )
    cases.append(
        Case(
            "param_count for a typical head (512, 64, 64)",
            "param_count",
            (512, 64, 64),
            param_count(512, 64, 64),
        )
    )
    return cases


SUITES: Mapping[str, Suite] = {
    "L4.1-part2": Suite(
        "L4.1-part2", ("project_qkv", "qkv_shapes", "output_shape", "param_count"), build_part2
    ),
}
