"""How much a program may report: bounded by what its exercise's tests need, not by a fixed size.

A report holds, per test, the value the learner's function returned (or the exception it raised), the
arguments it changed in place and the warnings it gave. An honest report is therefore about as large as
the tests' expected values and arguments; the bound allows several times that, plus room for messages
per test, and never more than the sandbox's fixed ceiling (``MAX_REPORT_BYTES``). Reading and judging a
report costs the server time in proportion to its size, so a program that reports far more than its
exercise needs is stopped when it passes the bound, and the learner is told so in a sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from qkv.grading.sandbox.report_reader import MAX_REPORT_BYTES

__all__ = [
    "REPORT_BASE_BYTES",
    "TEST_SLACK_BYTES",
    "bound_of_shares",
    "encoded_size",
    "report_bound",
    "share_of_test",
]

REPORT_BASE_BYTES = 16 * 1024  # the start, imported, timing and done lines, an import error's message
TEST_SLACK_BYTES = 16 * 1024  # per test: an exception's message, parameter names, eight warnings
VALUE_FACTOR = 4  # a wrong answer may be larger than the right one (a wrong shape, a tuple for an array)
ARGUMENT_FACTOR = 2  # arguments changed in place are reported as they are after the call
_NUMBER_BYTES = 24  # a float written out by JSON, with its comma: at most 24 characters
_TEXT_BYTES = 6  # a character of reported text, written as a JSON escape at worst
# The harness's own limits (it imports nothing of ours, so they are repeated; a test holds them equal).
MAX_ITEMS, MAX_ELEMENTS, MAX_TEXT = 64, 4096, 1000


def encoded_size(value: Any, depth: int = 0) -> int:
    """An upper estimate of the bytes the harness writes to describe ``value``.

    Examples
    --------
    >>> encoded_size(np.zeros((2, 3))) == 96 + 6 * 24
    True
    >>> encoded_size((1, "ab")) == 48 + 48 + 32 + 2 * 6
    True
    """
    if depth > 6:
        return 128
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biuf" and value.size <= MAX_ELEMENTS:
            return 96 + _NUMBER_BYTES * int(value.size)
        return 128 + _TEXT_BYTES * MAX_TEXT  # described by its clipped repr
    if isinstance(value, tuple | list):
        return 48 + sum(encoded_size(item, depth + 1) for item in value[:MAX_ITEMS])
    if isinstance(value, dict):
        pairs = list(value.items())[:MAX_ITEMS]
        return 48 + sum(encoded_size(k, depth + 1) + encoded_size(v, depth + 1) for k, v in pairs)
    if isinstance(value, str):
        return 32 + _TEXT_BYTES * min(len(value), MAX_TEXT)
    if value is None or isinstance(value, bool | int | float | np.generic):
        return 48
    return 128 + _TEXT_BYTES * MAX_TEXT


def report_bound(expected: Sequence[Any], arguments: Sequence[Sequence[Any]]) -> int:
    """The most a report may hold for tests with these expected values and arguments (bytes).

    Parameters
    ----------
    expected : sequence
        Each test's expected value.
    arguments : sequence of sequences
        Each test's arguments.

    Returns
    -------
    int
        ``REPORT_BASE_BYTES`` + per test ``TEST_SLACK_BYTES`` + 4 × its expected value + 2 × its
        arguments (as the harness writes them), at most ``MAX_REPORT_BYTES``.

    Examples
    --------
    >>> small = report_bound([np.zeros((4, 2))] * 3, [(np.zeros((4, 4)),)] * 3)
    >>> small < 100 * 1024, small == REPORT_BASE_BYTES + 3 * (TEST_SLACK_BYTES + 4 * 288 + 2 * (48 + 480))
    (True, True)
    >>> report_bound([np.zeros(4096)] * 100, [()] * 100) == MAX_REPORT_BYTES
    True
    """
    return bound_of_shares(
        [share_of_test(value, args) for value, args in zip(expected, arguments, strict=True)]
    )


def share_of_test(expected: Any, arguments: Sequence[Any]) -> int:
    """One test's share of the bound: ``TEST_SLACK_BYTES`` + 4 × its expected value + 2 × its arguments.

    >>> share_of_test(0.5, ()) == TEST_SLACK_BYTES + 4 * 48 + 2 * 48
    True
    """
    return (
        TEST_SLACK_BYTES
        + VALUE_FACTOR * encoded_size(expected)
        + ARGUMENT_FACTOR * encoded_size(tuple(arguments))
    )


def bound_of_shares(shares: Sequence[int]) -> int:
    """The bound for tests with these shares: ``REPORT_BASE_BYTES`` + their sum, at most ``MAX_REPORT_BYTES``.

    >>> bound_of_shares([]) == REPORT_BASE_BYTES
    True
    """
    return min(REPORT_BASE_BYTES + sum(shares), MAX_REPORT_BYTES)
