"""Variants of lesson L4.1: the hidden vector and the three weight matrices, and the answers they imply.

The engine calls ``variant(seed)`` for the numbers a page shows and checks against, and
``wrong_answers(data)`` for the results of known mistakes, so that feedback can name them.
Every answer comes from the ``qkv`` library itself.

Three sets of numbers live here:

* Part 1's projections (``x``, ``Wq``, ``Wk``, ``Wv`` and ``q``, ``k``, ``v``): the seed page's for
  ``None``, drawn for a seed;
* the idea section's illustration (``idea``): fixed, and never the numbers of any variant's Part 1, so
  the illustration cannot be copied into Part 1;
* the section "one query to its output" (``one_*``): one query, two keys and two values with d_k = 2,
  the seed page's for ``None``, drawn for a seed, and never the numbers the page shows elsewhere;
* the chapter's worked example (``ex_*``): the numbers the chapter reference works through, which
  the quiz's feedback quotes after the exercises.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from chapter import WORKED, draw_until, worked_example

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

# The seed page's numbers for "one query to its output": d_k = 2, and no raw score is 1 or -1, so that
# no scaled score, weight or output repeats the chapter reference's worked example (1/√2 and its weights).
SEED_ONE_QUERY: dict[str, Any] = {"q": [1, 2], "K": [[1, 1], [1, 2]], "V": [[0, 3], [3, 1]]}

SHIFT = 1.0  # the constant added to every score in the quiz's question about shifted scores

# Small integers keep every product computable in one's head.
X_ENTRIES = (-2, -1, 1, 2, 3)
WEIGHT_ENTRIES = (-2, -1, 0, 1, 2)
QUERY_ENTRIES = (-1, 1, 2)
KEY_ENTRIES = (-1, 0, 1, 2)
VALUE_ENTRIES = (-1, 0, 1, 2, 3)
# Two numbers closer than this could be taken for each other when typed to two decimals.
APART = 0.02


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``.

    Examples
    --------
    >>> page = variant(None)
    >>> page["x"], page["q"], page["k"], page["v"]
    ([1, 2], [3, 2], [2, 1], [2, 4])
    >>> [[round(value, 6) for value in page[name]] for name in ("one_scores", "one_weights", "one_output")]
    [[2.12132, 3.535534], [0.19557, 0.80443], [2.413289, 1.391141]]
    """
    if seed is None:
        numbers, one = SEED_PAGE, SEED_ONE_QUERY
    else:
        rng = random.Random(seed)
        numbers = _draw(rng)
        one = _draw_one_query(rng, numbers)
    idea = {**IDEA, **_projections(IDEA)}
    return {
        "seed": seed,
        **numbers,
        **_projections(numbers),
        "idea": idea,
        **_one_query(one),
        **_worked_example(),
    }


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """Results of known mistakes: each matrix read by its columns (x · Wᵀ), and the slips of one query.

    Examples
    --------
    >>> slips = wrong_answers(variant(None))
    >>> slips["q_by_columns"], [round(value, 6) for value in slips["one_unscaled_weights"]]
    ([1, 3], [0.119203, 0.880797])
    """
    return {**_by_columns(data), **_one_query_mistakes(data)}


def _by_columns(data: dict[str, Any]) -> dict[str, Any]:
    x = np.asarray(data["x"])
    return {
        f"{name}_by_columns": (x @ np.asarray(data[matrix]).T).tolist()  # (d_model,) @ (d, d_model)
        for name, matrix in (("q", "Wq"), ("k", "Wk"), ("v", "Wv"))
    }


def _worked_example() -> dict[str, Any]:
    """The chapter's worked example as ``ex_*`` names, and what the quiz asks of it (shifted, doubled)."""
    example = worked_example()
    q, K, V = [WORKED["q"]], WORKED["K"], WORKED["V"]
    shifted = softmax(attention_scores(q, K) + SHIFT)  # (1, n_k)
    doubled, doubled_weights = attention(q, K, 2 * np.asarray(V), return_weights=True)
    return {
        **{f"ex_{name}": example[name] for name in ("q", "K", "V", "d_k", "raw_scores", "scores", "weights")},
        "ex_output": example["output"],
        "ex_shift": SHIFT,
        "ex_shifted_weights": shifted[0].tolist(),
        "ex_doubled_weights": doubled_weights[0].tolist(),
        "ex_doubled_output": doubled[0].tolist(),
    }


def _one_query(one: dict[str, Any]) -> dict[str, Any]:
    q, K, V = [one["q"]], one["K"], one["V"]
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    return {
        "one_q": one["q"],
        "one_K": K,
        "one_V": V,
        "one_d_k": len(one["q"]),
        "one_raw_scores": attention_scores(q, K, scale=1.0)[0].tolist(),  # (n_k,)
        "one_scores": attention_scores(q, K)[0].tolist(),  # (n_k,)
        "one_weights": weights[0].tolist(),
        "one_output": output[0].tolist(),
    }


def _one_query_mistakes(data: dict[str, Any]) -> dict[str, Any]:
    q, K, V = [data["one_q"]], np.asarray(data["one_K"]), np.asarray(data["one_V"])
    raw = attention_scores(q, K, scale=1.0)  # (1, n_k)
    weights = softmax(attention_scores(q, K))  # (1, n_k)
    unscaled = softmax(raw)  # (1, n_k)
    return {
        "one_scores_over_d_k": (raw / K.shape[1])[0].tolist(),
        "one_unscaled_weights": unscaled[0].tolist(),
        "one_normalized_scores": (raw / raw.sum())[0].tolist(),
        "one_unscaled_output": (unscaled @ V)[0].tolist(),  # (1, d_v)
        "one_keys_mixed": (weights @ K)[0].tolist(),  # (1, d_k): the weights applied to the keys
        "one_plain_average": V.mean(axis=0).tolist(),  # (d_v,)
    }


def _draw_one_query(rng: random.Random, numbers: dict[str, Any]) -> dict[str, Any]:
    # Redraw until the answers and the slips differ from each other and from what the page shows.
    return draw_until(rng, _one_query_candidate, lambda one: one_query_apart(one, numbers))


def _one_query_candidate(rng: random.Random) -> dict[str, Any]:
    return {
        "q": [rng.choice(QUERY_ENTRIES) for _ in range(2)],
        "K": [[rng.choice(KEY_ENTRIES) for _ in range(2)] for _ in range(2)],
        "V": [[rng.choice(VALUE_ENTRIES) for _ in range(2)] for _ in range(2)],
    }


def shown_elsewhere(numbers: dict[str, Any]) -> list[list[float]]:
    """The vectors the page shows outside "one query to its output": Part 1's, the idea's and the
    chapter reference's worked example (its numbers, its weights and outputs, the quiz's too)."""
    idea = {**IDEA, **_projections(IDEA)}
    shown: list[list[float]] = []
    for source in (numbers, _projections(numbers), idea):
        for name in ("x", "q", "k", "v"):
            if name in source:
                shown.append(source[name])
        for name in ("Wq", "Wk", "Wv"):
            if name in source:
                shown.extend(source[name])
    worked = _WORKED_EXAMPLE
    shown += [worked["ex_q"], *worked["ex_K"], *worked["ex_V"]]
    shown += [worked[name] for name in ("ex_raw_scores", "ex_scores", "ex_weights", "ex_output")]
    shown += [worked[name] for name in ("ex_shifted_weights", "ex_doubled_weights", "ex_doubled_output")]
    return [[float(value) for value in vector] for vector in shown]


def one_query_apart(one: dict[str, Any], numbers: dict[str, Any]) -> bool:
    """Whether the answers and slips of one query tell apart from each other and from the page.

    Every answer and every named slip differs from every other (in either order), and from every
    vector the page shows elsewhere, by more than ``APART`` in some component; no answer or slip has a
    component (other than a whole number) that the page shows elsewhere, with either sign; the raw
    scores do not add up to 0, and they differ by 2 or 3, so the weights are neither even nor nearly
    all on one key; no key and no value is all zeros.

    Examples
    --------
    >>> one_query_apart(SEED_ONE_QUERY, SEED_PAGE), one_query_apart(WORKED, SEED_PAGE)
    (True, False)
    """
    data = _one_query(one)
    raw = data["one_raw_scores"]
    if abs(raw[0] - raw[1]) not in (2, 3) or sum(raw) == 0:
        return False
    if any(not any(row) for row in [*one["K"], *one["V"]]):
        return False  # a key or a value of zeros only would make the section trivial
    mine = [data[name] for name in ("one_scores", "one_weights", "one_output")]
    mine += [*_one_query_mistakes(data).values(), raw]
    given = [one["q"], *one["K"], *one["V"]]
    shown = shown_elsewhere(numbers)
    shown_parts = {
        round(abs(value), 3) for vector in shown for value in vector if not float(value).is_integer()
    }
    for i, vector in enumerate(mine):
        others = mine[i + 1 :] + [other[::-1] for other in mine[i + 1 :]] + given + shown
        if any(len(other) == len(vector) and _near(vector, other) for other in others):
            return False
        if any(round(abs(value), 3) in shown_parts for value in vector if not float(value).is_integer()):
            return False
    return True


def _near(a: list[float], b: list[float]) -> bool:
    return max(abs(x - y) for x, y in zip(a, b, strict=True)) <= APART


_WORKED_EXAMPLE = _worked_example()


def _projections(numbers: dict[str, Any]) -> dict[str, list[int]]:
    Q, K, V = project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, 2)
    return {"q": Q[0].tolist(), "k": K[0].tolist(), "v": V[0].tolist()}


def _draw(rng: random.Random) -> dict[str, Any]:
    # Redraw until every answer and every named mistake differ, so feedback is never ambiguous.
    return draw_until(rng, _candidate, _distinguishable)


def _candidate(rng: random.Random) -> dict[str, Any]:
    x = [rng.choice(X_ENTRIES) for _ in range(2)]
    weights: list[Matrix] = [
        [[rng.choice(WEIGHT_ENTRIES) for _ in range(2)] for _ in range(2)] for _ in range(3)
    ]
    return {"x": x, "Wq": weights[0], "Wk": weights[1], "Wv": weights[2]}


def _distinguishable(numbers: dict[str, Any]) -> bool:
    """Whether q, k, v, x and the named mistakes differ, no projection is 0 and no matrix is the idea's."""
    answers = _projections(numbers)
    x = numbers["x"]
    by_columns = _by_columns(numbers)
    vectors = [tuple(x)] + [tuple(v) for v in answers.values()] + [tuple(v) for v in by_columns.values()]
    no_zero = all(any(value != 0 for value in vector) for vector in answers.values())
    idea_matrices = [IDEA[name] for name in ("Wq", "Wk", "Wv")]
    own_matrices = all(numbers[name] not in idea_matrices for name in ("Wq", "Wk", "Wv"))
    return no_zero and own_matrices and len(set(vectors)) == len(vectors)
