"""Variants of lesson L4.2: two queries, two keys, and the scores they give, raw and scaled.

Part 1 uses d_k = 4 on every page, the seed page included, so that dividing by √d_k = 2 stays easy by
hand. The idea section illustrates with the chapter's worked example (``IDEA``, d_k = 2), which no Part 1
uses, so the illustration cannot be copied into Part 1. Every answer comes from the ``qkv`` library itself.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
from chapter import WORKED, variant_numbers

from qkv import attention_scores

# The seed page's own numbers: Part 1 when no variant was drawn (they pass _distinguishable too).
SEED_PAGE: dict[str, Any] = {
    "q1": [0, 1, 1, 0],
    "q2": [1, 1, 0, -1],
    "K": [[2, 2, 1, 0], [0, 0, 2, 2]],
    "dk_from": 16,
    "dk_to": 64,
}

# The idea section's illustration: the chapter's worked example with a second query (its table shows the
# raw scores), which no Part 1 may use.
IDEA: dict[str, Any] = {"q1": WORKED["q"], "q2": [0, 2], "K": WORKED["K"]}
IDEA_D_K = len(IDEA["q1"])  # 2: the idea section divides by √2, which no Part 1 does

ENTRIES = (-2, -1, 0, 1, 2)
DRAWN_D_K = 4
# Pairs of key sizes whose ratio is a perfect square, so that the growth of the spread is a whole number.
SIZE_PAIRS = ((4, 16), (16, 64), (64, 256), (4, 64), (16, 256), (8, 32), (32, 128), (8, 128))
TOLERANCE = 0.01  # answers of a variant differ by more than this, so feedback is never ambiguous


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    return {"seed": seed, **numbers, **_answers(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """Results of known mistakes, for the ``[mistakes]`` tables of lesson.md."""
    raw = attention_scores([data["q1"], data["q2"]], data["K"], scale=1.0)  # (2, 2)
    d_k = len(data["q1"])
    return {
        "raw_column1": raw[:, 0].tolist(),  # key 1 against both queries: a column of S, not a row
        "column1": (raw[:, 0] / math.sqrt(d_k)).tolist(),
        "column2": (raw[:, 1] / math.sqrt(d_k)).tolist(),
        "by_dk1": (raw[0] / d_k).tolist(),
        "by_dk2": (raw[1] / d_k).tolist(),
        "times_root1": (raw[0] * math.sqrt(d_k)).tolist(),
        "times_root2": (raw[1] * math.sqrt(d_k)).tolist(),
        # divided by √2, the square root of the idea section's d_k, instead of this page's √d_k
        "idea_d_k": IDEA_D_K,
        "by_idea_root1": (raw[0] / math.sqrt(IDEA_D_K)).tolist(),
        "by_idea_root2": (raw[1] / math.sqrt(IDEA_D_K)).tolist(),
        "growth_linear": data["dk_to"] / data["dk_from"],  # the growth of the variance
        "growth_new_spread": math.sqrt(data["dk_to"]),  # the spread at the new size, not the ratio
    }


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    Q = [numbers["q1"], numbers["q2"]]
    raw = attention_scores(Q, numbers["K"], scale=1.0)  # (n_q, n_k)
    scaled = attention_scores(Q, numbers["K"])  # (n_q, n_k)
    d_k = len(numbers["q1"])
    return {
        "d_k": d_k,
        "root_d_k": math.sqrt(d_k),
        "raw1": raw[0].tolist(),
        "raw2": raw[1].tolist(),
        "scaled1": scaled[0].tolist(),
        "scaled2": scaled[1].tolist(),
        "growth": math.sqrt(numbers["dk_to"] / numbers["dk_from"]),
    }


def _draw(rng: random.Random) -> dict[str, Any]:
    vectors = [[rng.choice(ENTRIES) for _ in range(DRAWN_D_K)] for _ in range(4)]
    dk_from, dk_to = rng.choice(SIZE_PAIRS)
    return {"q1": vectors[0], "q2": vectors[1], "K": vectors[2:], "dk_from": dk_from, "dk_to": dk_to}


def _distinguishable(numbers: dict[str, Any]) -> bool:
    """Whether every answer and named mistake differ, no row of scores is 0 and Part 1 is not the idea's."""
    if all(numbers[key] == IDEA[key] for key in IDEA):
        return False
    answers = _answers(numbers)
    idea = _answers({**numbers, **IDEA})
    shown = [np.asarray(idea[key]) for key in ("raw1", "raw2", "scaled1", "scaled2")]  # the idea's rows
    for key in ("raw1", "raw2", "scaled1", "scaled2"):
        if any(np.max(np.abs(np.asarray(answers[key]) - row)) <= TOLERANCE for row in shown):
            return False  # e.g. q₁'s raw scores [1, 0]: the idea's table would show them
    mistakes = wrong_answers(numbers)
    factors = [answers["growth"], mistakes["growth_linear"], mistakes["growth_new_spread"]]
    if any(abs(a - b) <= TOLERANCE for i, a in enumerate(factors) for b in factors[i + 1 :]):
        return False  # e.g. 16 → 256: √256 = 16 is also the variance's growth, so the two slips look alike
    vectors = [answers[key] for key in ("raw1", "raw2", "scaled1", "scaled2")]
    vectors += [value for value in mistakes.values() if isinstance(value, list)]
    if any(not any(abs(v) > TOLERANCE for v in vector) for vector in vectors):
        return False  # an all-zero row would make every mistake look right
    arrays = [np.asarray(vector) for vector in vectors]
    return all(np.max(np.abs(a - b)) > TOLERANCE for i, a in enumerate(arrays) for b in arrays[i + 1 :])
