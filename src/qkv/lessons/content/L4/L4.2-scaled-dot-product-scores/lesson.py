"""Variants of lesson L4.2: two queries, two keys, and the scores they give, raw and scaled.

The seed page is the chapter's worked example (d_k = 2). Drawn variants use d_k = 4, so that dividing by
√d_k = 2 stays easy by hand. Every answer comes from the ``qkv`` library itself.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from qkv import attention_scores

# The seed page's own numbers: the chapter's worked example, plus a second query.
SEED_PAGE: dict[str, Any] = {
    "q1": [1, 0],
    "q2": [0, 2],
    "K": [[1, 0], [0, 1]],
    "dk_from": 16,
    "dk_to": 64,
}

ENTRIES = (-2, -1, 0, 1, 2)
DRAWN_D_K = 4
# Pairs of key sizes whose ratio is a perfect square, so that the growth of the spread is a whole number.
SIZE_PAIRS = ((4, 16), (16, 64), (64, 256), (4, 64), (16, 256), (8, 32), (32, 128), (8, 128))
TOLERANCE = 0.01  # answers of a variant differ by more than this, so feedback is never ambiguous


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = SEED_PAGE if seed is None else _draw(random.Random(seed))
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
        "growth_linear": data["dk_to"] / data["dk_from"],
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
    # Redraw until every answer and every named mistake differ, so feedback is never ambiguous.
    while True:
        vectors = [[rng.choice(ENTRIES) for _ in range(DRAWN_D_K)] for _ in range(4)]
        dk_from, dk_to = rng.choice(SIZE_PAIRS)
        numbers = {"q1": vectors[0], "q2": vectors[1], "K": vectors[2:], "dk_from": dk_from, "dk_to": dk_to}
        if _distinguishable(numbers):
            return numbers


def _distinguishable(numbers: dict[str, Any]) -> bool:
    answers = _answers(numbers)
    mistakes = wrong_answers(numbers)
    vectors = [answers[key] for key in ("raw1", "raw2", "scaled1", "scaled2")]
    vectors += [value for value in mistakes.values() if isinstance(value, list)]
    if any(not any(abs(v) > TOLERANCE for v in vector) for vector in vectors):
        return False  # an all-zero row would make every mistake look right
    arrays = [np.asarray(vector) for vector in vectors]
    return all(np.max(np.abs(a - b)) > TOLERANCE for i, a in enumerate(arrays) for b in arrays[i + 1 :])
