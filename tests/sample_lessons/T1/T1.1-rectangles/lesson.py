"""Variants of the test lesson T1.1: a rectangle's sides, and its area and perimeter."""

from __future__ import annotations

import random
from typing import Any


def variant(seed: int | None) -> dict[str, Any]:
    """The printed page's rectangle (3 by 4) for None; otherwise sides drawn from the seed."""
    if seed is None:
        w, h = 3, 4
    else:
        rng = random.Random(seed)
        w, h = rng.randint(2, 9), rng.randint(10, 19)  # never equal, so area and perimeter differ
    return {"w": w, "h": h, "area": w * h, "perimeter": 2 * (w + h)}


def wrong_answers(data: dict[str, Any]) -> dict[str, int]:
    """A known slip: half the perimeter."""
    return {"half_perimeter": data["w"] + data["h"]}
