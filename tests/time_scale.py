"""The one factor by which every deadline and time limit of the tests is scaled, and waiting on a state.

Tests wait on events or on states that persist; where a bound on wall time is left (a deadline for a
state to come about, a program's time limit that a right program must finish within, a client's
timeout, pytest-timeout's limit), it is written as ``scaled(seconds)``. A busy CI machine raises the
factor with ``QKV_TEST_TIME_SCALE`` (``make test-under-load`` sets it); the default is 1. A bound a test
checks *against* (a loop must be stopped by its limit) needs no scaling: it holds however slow the
machine.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

__all__ = ["TIME_SCALE", "scaled", "time_scale", "wait_for"]


def time_scale(environ: dict[str, str] | os._Environ[str] = os.environ) -> float:
    """The factor ``QKV_TEST_TIME_SCALE`` sets (1 when unset or empty).

    Raises
    ------
    ValueError
        If it is set to anything but a finite number of at least 1.

    Examples
    --------
    >>> time_scale({})
    1.0
    >>> time_scale({"QKV_TEST_TIME_SCALE": "3"})
    3.0
    """
    text = environ.get("QKV_TEST_TIME_SCALE", "").strip()
    if not text:
        return 1.0
    try:
        factor = float(text)
    except ValueError:
        factor = math.nan
    if not math.isfinite(factor) or factor < 1:
        raise ValueError(
            f"QKV_TEST_TIME_SCALE must be a number of at least 1 (how much slower than a quiet machine this "
            f"one is), not {text!r}."
        )
    return factor


TIME_SCALE = time_scale()


def scaled(seconds: float) -> float:
    """``seconds`` times the suite's factor: a deadline or time limit that a busy machine may stretch.

    Examples
    --------
    >>> scaled(2.0) == 2.0 * TIME_SCALE
    True
    """
    return seconds * TIME_SCALE


def wait_for(
    condition: Callable[[], bool], what: str, timeout_s: float = 30.0, poll_s: float = 0.005
) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``scaled(timeout_s)``.

    Wait only for states that persist once reached (a transient one can be missed by any poll on a
    loaded machine): the deadline is a guard against a hang, never the measure of a test.

    Raises
    ------
    AssertionError
        If ``condition`` did not hold within the scaled deadline.

    Examples
    --------
    >>> wait_for(lambda: True, "nothing")
    """
    limit = scaled(timeout_s)
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:g} s for {what}")
        time.sleep(poll_s)
