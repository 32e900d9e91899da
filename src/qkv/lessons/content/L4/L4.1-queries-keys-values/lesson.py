"""Variants of lesson L4.1: the hidden vector and the three weight matrices, and the answers they imply.

The engine calls ``variant(seed)`` for the numbers a page shows and checks against, and
``wrong_answers(data)`` for the results of known mistakes, so that feedback can name them.
Every answer comes from the ``qkv`` library itself.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from qkv import project_qkv

Matrix = list[list[int]]

# The seed page's own numbers.
SEED_PAGE: dict[str, Any] = {
    "x": [1, 2],
    "Wq": [[1, 0], [1, 1]],
    "Wk": [[0, 1], [1, 0]],
    "Wv": [[2, 0], [0, 2]],
}

# Small integers keep every product computable in one's head.
X_ENTRIES = (-2, -1, 1, 2, 3)
WEIGHT_ENTRIES = (-2, -1, 0, 1, 2)


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = SEED_PAGE if seed is None else _draw(random.Random(seed))
    return {"seed": seed, **numbers, **_projections(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, list[float]]:
    """Results of known mistakes: each weight matrix read by its columns (x · Wᵀ)."""
    x = np.asarray(data["x"])
    return {
        f"{name}_by_columns": (x @ np.asarray(data[matrix]).T).tolist()  # (d_model,) @ (d, d_model)
        for name, matrix in (("q", "Wq"), ("k", "Wk"), ("v", "Wv"))
    }


def _projections(numbers: dict[str, Any]) -> dict[str, list[int]]:
    Q, K, V = project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, 2)
    return {"q": Q[0].tolist(), "k": K[0].tolist(), "v": V[0].tolist()}


def _draw(rng: random.Random) -> dict[str, Any]:
    # Redraw until every answer and every named mistake differ, so feedback is never ambiguous.
    while True:
        x = [rng.choice(X_ENTRIES) for _ in range(2)]
        weights: list[Matrix] = [
            [[rng.choice(WEIGHT_ENTRIES) for _ in range(2)] for _ in range(2)] for _ in range(3)
        ]
        numbers = {"x": x, "Wq": weights[0], "Wk": weights[1], "Wv": weights[2]}
        if _distinguishable(numbers):
            return numbers


def _distinguishable(numbers: dict[str, Any]) -> bool:
    answers = _projections(numbers)
    mistakes = wrong_answers(numbers)
    vectors = [tuple(v) for v in answers.values()] + [tuple(v) for v in mistakes.values()]
    no_zero = all(any(value != 0 for value in vector) for vector in answers.values())
    return no_zero and len(set(vectors)) == len(vectors)
