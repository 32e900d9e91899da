"""The hidden tests of T1.1's code exercise; the expected values come from the reference below."""

from __future__ import annotations

import numpy as np

from qkv.grading import (
    Close,
    Mistake,
    Raised,
    Raises,
    Returned,
    Suite,
    TestCase,
    Whole,
    check_raises,
)

PERIMETER_FOR_AREA = "That is the perimeter, 2·(w + h); the area multiplies the sides: w·h."
HALF_WAY_ROUND = "That is w + h, half the way round: a rectangle has two sides of each length, so 2·(w + h)."
NO_SIGN_CHECK = "Raise ValueError when a side is negative: no rectangle has a negative width."
ASSERTED = "Use raise ValueError(...) for a bad side, not assert: asserts vanish under python -O."


def area(w: float, h: float) -> float:
    """The reference: w·h, and ValueError for a negative side."""
    if w < 0 or h < 0:
        raise ValueError(f"A rectangle's sides cannot be negative, but they are {w} and {h}.")
    return w * h


def perimeter(w: float, h: float) -> float:
    """The reference: 2·(w + h)."""
    return 2 * (w + h)


def _sides(rng: np.random.Generator) -> list[int]:
    """Two different sides, so that a swapped pair or a square hides nothing."""
    return [int(n) for n in rng.choice(range(2, 20), size=2, replace=False)]


AREA_HINTS = [Mistake(PERIMETER_FOR_AREA, perimeter)]
PERIMETER_HINTS = [Mistake(HALF_WAY_ROUND, lambda w, h: w + h)]

shapes = Suite(
    ["area", "perimeter"],
    [
        TestCase("area of a 3 by 4 rectangle", "area", (3, 4), area, Whole(), AREA_HINTS),
        TestCase("area of a random rectangle", "area", _sides, area, Whole(), AREA_HINTS),
        TestCase(
            "area raises ValueError for a negative side",
            "area",
            (-2, 5),
            check_raises(area, Raises("ValueError", "a side is negative")),
            hints=[Returned(NO_SIGN_CHECK), Raised(ASSERTED, "AssertionError")],
        ),
        TestCase("perimeter of a random rectangle", "perimeter", _sides, perimeter, Whole(), PERIMETER_HINTS),
        TestCase(
            "perimeter with fractional sides", "perimeter", (1.5, 2.25), perimeter, Close(), PERIMETER_HINTS
        ),
    ],
)

SUITES = {"shapes": shapes}
