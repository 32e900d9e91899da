"""Preconditions of hints: whether a test's inputs can produce a mistake's cause at all.

A lesson's hint may name a cause that only some inputs can show: a query whose keys are all masked, a row
of scores far below the matrix's maximum, scores large enough to overflow an exponential, float32 inputs.
A hint whose rule matches on other inputs (a NaN from another slip, a warning from another division)
would state a cause the test cannot have. Each rule of :mod:`qkv.grading.feedback.hints` takes ``requires=``,
a predicate of the test's arguments; these build the usual ones from the position of the argument (or a
function of the arguments) they look at. Nothing here knows a lesson.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "EXP_OVERFLOW",
    "UNDERFLOW_GAP",
    "exp_overflows",
    "fully_masked_row",
    "is_float32",
    "row_far_below_max",
    "writes_number",
]

EXP_OVERFLOW = 709.0  # np.exp of anything larger is inf in float64
UNDERFLOW_GAP = 745.0  # np.exp(-x) is 0 in float64 beyond this

Of = int | Callable[..., Any]  # an argument's position, or a function of all the arguments


def _value(of: Of, args: tuple[Any, ...]) -> Any:
    return args[of] if isinstance(of, int) else of(*args)


def fully_masked_row(of: Of) -> Callable[..., bool]:
    """A precondition: the mask (True = allowed) has a row with no True, broadcast to two axes.

    Examples
    --------
    >>> fully_masked_row(1)(None, np.array([[True, False], [False, False]]))
    True
    >>> fully_masked_row(1)(None, np.array([[True, False], [False, True]]))
    False
    """

    def holds(*args: Any) -> bool:
        value = _value(of, args)
        if value is None:  # no mask: every key allowed
            return False
        mask = np.asarray(value, dtype=bool)
        if mask.ndim == 0:
            return not bool(mask)
        return bool((~mask.any(axis=-1)).any())

    return holds


def exp_overflows(of: Of, shifted: bool = False) -> Callable[..., bool]:
    """A precondition: np.exp of the scores overflows float64 somewhere (``shifted``: after subtracting
    the whole matrix's maximum, which cannot overflow, so never).

    Examples
    --------
    >>> exp_overflows(0)(np.array([[1000.0, 0.0]])), exp_overflows(0)(np.array([[3.0, 1.0]]))
    (True, False)
    """

    def holds(*args: Any) -> bool:
        scores = np.asarray(_value(of, args), dtype=float)
        return not shifted and bool((scores > EXP_OVERFLOW).any())

    return holds


def row_far_below_max(of: Of) -> Callable[..., bool]:
    """A precondition: some row's maximum lies so far below the whole matrix's maximum that np.exp of
    that row, shifted by the matrix's maximum, underflows to 0 everywhere.

    Examples
    --------
    >>> row_far_below_max(0)(np.array([[1000.0, 999.0], [-1000.0, -999.0]]))
    True
    >>> row_far_below_max(0)(np.array([[3.0, 1.0], [2.0, 0.0]]))
    False
    """

    def holds(*args: Any) -> bool:
        scores = np.asarray(_value(of, args), dtype=float)
        if scores.size == 0:
            return False
        rows = scores.max(axis=-1) if scores.ndim else scores
        return bool((scores.max() - rows > UNDERFLOW_GAP).any())

    return holds


def is_float32(of: Of) -> Callable[..., bool]:
    """A precondition: the argument holds float32 numbers.

    Examples
    --------
    >>> is_float32(0)(np.ones(2, dtype=np.float32)), is_float32(0)(np.ones(2))
    (True, False)
    """

    def holds(*args: Any) -> bool:
        return np.asarray(_value(of, args)).dtype == np.float32

    return holds


def writes_number(test: Callable[[float], bool], names: tuple[str, ...] = ()) -> Callable[[Any], bool]:
    """A precondition on the learner's code: it writes a number for which ``test`` holds (a leading minus
    included), or one of ``names`` (a name, an attribute or a call: ``finfo``). For ``shows=``.

    Examples
    --------
    >>> large_fill = writes_number(lambda value: value <= -1e3, names=("finfo",))
    >>> large_fill(ast.parse("S[~m] = -1e9")), large_fill(ast.parse("S[~m] = -np.inf"))
    (True, False)
    >>> large_fill(ast.parse("S[~m] = np.finfo(float).min"))
    True
    """

    def holds(code: Any) -> bool:
        for node in ast.walk(code):
            value = node.operand if isinstance(node, ast.UnaryOp) else node
            if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
                number = float(value.value)
                if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                    number = -number
                if not isinstance(value.value, bool) and test(number):
                    return True
            if isinstance(node, ast.Attribute) and node.attr in names:
                return True
            if isinstance(node, ast.Name) and node.id in names:
                return True
        return False

    return holds
