"""Variants of lesson L4.1: the hidden vector and the three weight matrices, and the answers they imply.

The engine calls ``variant(seed)`` for the numbers a page shows and checks against, and
``wrong_answers(data)`` for the results of known mistakes, so that feedback can name them.
Every answer comes from the ``qkv`` library itself.

Three sets of numbers live here:

* Part 1's projections (``x``, ``Wq``, ``Wk``, ``Wv`` and ``q``, ``k``, ``v``): the seed page's for
  ``None``, drawn for a seed;
* the idea section's illustration (``idea``): fixed, and never the numbers of any variant's Part 1, so
  the illustration cannot be copied into Part 1;
* the chapter's worked example (``ex_*``): one query against two keys, from scores to output, the same
  for every variant.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from qkv import attention, attention_scores, project_qkv, softmax

Matrix = list[list[int]]

# The seed page's own numbers: Part 1 when no variant was drawn.
SEED_PAGE: dict[str, Any] = {
    "x": [1, 2],
    "Wq": [[1, 0], [1, 1]],
    "Wk": [[0, 1], [1, 0]],
    "Wv": [[2, 0], [0, 2]],
}

# The idea section's illustration: its own matrices, which no variant's Part 1 may use.
IDEA: dict[str, Any] = {
    "x": [3, 1],
    "Wq": [[1, 1], [0, 1]],
    "Wk": [[1, 0], [1, -1]],
    "Wv": [[0, 2], [1, 0]],
}

# The chapter reference's worked example: one query, two keys, two values (d_k = 2).
WORKED: dict[str, Any] = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
SHIFT = 1.0  # the constant added to every score in the quiz's question about shifted scores

# Small integers keep every product computable in one's head.
X_ENTRIES = (-2, -1, 1, 2, 3)
WEIGHT_ENTRIES = (-2, -1, 0, 1, 2)


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``.

    Examples
    --------
    >>> page = variant(None)
    >>> page["x"], page["q"], page["k"], page["v"]
    ([1, 2], [3, 2], [2, 1], [2, 4])
    >>> [[round(value, 6) for value in page[name]] for name in ("ex_scores", "ex_weights", "ex_output")]
    [[0.707107, 0.0], [0.669762, 0.330238], [1.339523, 0.660477]]
    """
    numbers = SEED_PAGE if seed is None else _draw(random.Random(seed))
    idea = {**IDEA, **_projections(IDEA)}
    return {"seed": seed, **numbers, **_projections(numbers), "idea": idea, **_worked_example()}


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """Results of known mistakes: each matrix read by its columns (x · Wᵀ), and the worked example's slips.

    Examples
    --------
    >>> slips = wrong_answers(variant(None))
    >>> slips["q_by_columns"], [round(value, 6) for value in slips["ex_unscaled_weights"]]
    ([1, 3], [0.731059, 0.268941])
    """
    x = np.asarray(data["x"])
    by_columns = {
        f"{name}_by_columns": (x @ np.asarray(data[matrix]).T).tolist()  # (d_model,) @ (d, d_model)
        for name, matrix in (("q", "Wq"), ("k", "Wk"), ("v", "Wv"))
    }
    return {**by_columns, **_worked_mistakes()}


def _worked_example() -> dict[str, Any]:
    q, K, V = [WORKED["q"]], WORKED["K"], WORKED["V"]
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    shifted = softmax(attention_scores(q, K) + SHIFT)  # (1, n_k)
    doubled, doubled_weights = attention(q, K, 2 * np.asarray(V), return_weights=True)
    return {
        "ex_q": WORKED["q"],
        "ex_K": K,
        "ex_V": V,
        "ex_d_k": len(WORKED["q"]),
        "ex_raw_scores": attention_scores(q, K, scale=1.0)[0].tolist(),  # (n_k,)
        "ex_scores": attention_scores(q, K)[0].tolist(),  # (n_k,)
        "ex_weights": weights[0].tolist(),
        "ex_output": output[0].tolist(),
        "ex_shift": SHIFT,
        "ex_shifted_weights": shifted[0].tolist(),
        "ex_doubled_weights": doubled_weights[0].tolist(),
        "ex_doubled_output": doubled[0].tolist(),
    }


def _worked_mistakes() -> dict[str, Any]:
    q, K, V = [WORKED["q"]], np.asarray(WORKED["K"]), np.asarray(WORKED["V"])
    raw = attention_scores(q, K, scale=1.0)  # (1, n_k)
    weights = softmax(attention_scores(q, K))  # (1, n_k)
    unscaled = softmax(raw)  # (1, n_k)
    return {
        "ex_scores_over_d_k": (raw / K.shape[1])[0].tolist(),
        "ex_unscaled_weights": unscaled[0].tolist(),
        "ex_normalized_scores": (raw / raw.sum())[0].tolist(),
        "ex_unscaled_output": (unscaled @ V)[0].tolist(),  # (1, d_v)
        "ex_keys_mixed": (weights @ K)[0].tolist(),  # (1, d_k): the weights applied to the keys
        "ex_plain_average": V.mean(axis=0).tolist(),  # (d_v,)
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
    """Whether q, k, v, x and the named mistakes differ, no projection is 0 and no matrix is the idea's."""
    answers = _projections(numbers)
    x = numbers["x"]
    by_columns = {key: value for key, value in wrong_answers(numbers).items() if key.endswith("_by_columns")}
    vectors = [tuple(x)] + [tuple(v) for v in answers.values()] + [tuple(v) for v in by_columns.values()]
    no_zero = all(any(value != 0 for value in vector) for vector in answers.values())
    idea_matrices = [IDEA[name] for name in ("Wq", "Wk", "Wv")]
    own_matrices = all(numbers[name] not in idea_matrices for name in ("Wq", "Wk", "Wv"))
    return no_zero and own_matrices and len(set(vectors)) == len(vectors)
