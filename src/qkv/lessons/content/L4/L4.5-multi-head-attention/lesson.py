"""Variants of lesson L4.5: the sizes of a multi-head layer, and one head worked by hand.

``variant(seed)`` gives the sizes (d_model, h, n) of the counting questions and the projected Q, K, V of
two tokens whose head 1 the learner works out; ``wrong_answers(data)`` gives what each named mistake
computes instead. Every number comes from the ``qkv`` library: the head is ``qkv.attention`` on the
head's columns. No answer of the head is a number the page already shows elsewhere (``shown_elsewhere``):
the chapter reference's worked example and the idea's heatmaps.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from chapter import apart, rounded_all, variant_numbers, worked_example

from qkv import attention

Matrix = list[list[int]]

# The seed page's own numbers. Head 1's scores differ by 2 (not by 1, as in the chapter's worked example),
# so its weights and output are numbers that no other part of the page shows.
SEED_PAGE: dict[str, Any] = {
    "d_model": 512,
    "h": 8,
    "n": 10,
    "Q": [[2, 1, 0, 2], [0, 0, 0, 1]],
    "K": [[0, 1, 2, 1], [2, 1, 1, 2]],
    "V": [[1, 2, 1, 2], [2, 1, 2, 0]],
}

# The idea's heatmaps (the head-heatmaps widget in lesson.md): its weights and outputs are in the page.
HEATMAPS: dict[str, Any] = {
    "X": [[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]],
    "Wq": [[1, 0, 1, 0], [0, 1, 0, 1], [-1, 0, -1, 0], [0, -1, 0, -1]],
    "Wk": [[1, 0, 0, 1], [0, 1, -1, 0], [-1, 0, 0, -1], [0, -1, 1, 0]],
    "Wv": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    "Wo": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
    "heads": [1, 2, 4],
}

SIZES = ((256, (4, 8)), (384, (6, 8, 12)), (512, (4, 8, 16)), (768, (6, 12, 16)), (1024, (8, 16)))
ENTRIES = (-2, -1, 0, 1, 2)
HEADS, D_HEAD = 2, 2  # the hand example: d_model = 4 in two heads of two columns
ASKED = 1  # the head the learner works out (columns 2 and 3)


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    return {"seed": seed, **numbers, **_answers(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """What the lesson's named mistakes compute for this variant."""
    d_model, h, n = data["d_model"], data["h"], data["n"]
    d_head = d_model // h
    Q, K, V = (np.asarray(data[name], dtype=float) for name in ("Q", "K", "V"))  # each (2, 4)
    cols = slice(0, D_HEAD)  # head 0: the wrong head
    raw = [M.reshape(HEADS, 2, D_HEAD)[ASKED] for M in (Q, K, V)]  # heads cut without the transpose
    wrong = {
        "d_head_is_h": h,  # the number of heads typed for the width of one
        "d_head_times_h": d_model * h,  # multiplied instead of divided
        "split_swapped": [n, h, d_head],
        "split_full_width": [h, n, d_model],
        "params_no_wo": 3 * d_model * d_model,
        "params_biases": 4 * d_model * d_model + 4 * d_model,
        "params_times_h": 4 * d_model * d_model * h,
    }
    for name, (q, k, v, scale) in {
        "head0": (Q[:1, cols], K[:, cols], V[:, cols], 1 / np.sqrt(D_HEAD)),
        "sqrt_d_model": (*_head(Q, K, V, ASKED), 1 / np.sqrt(HEADS * D_HEAD)),
        "unscaled": (*_head(Q, K, V, ASKED), 1.0),
        "reshaped": (raw[0][:1], raw[1], raw[2], 1 / np.sqrt(D_HEAD)),
    }.items():
        output, weights = attention(q, k, v, scale=scale, return_weights=True)  # (1, 2), (1, 2)
        wrong[f"weights_{name}"] = rounded_all(weights[0])
        wrong[f"output_{name}"] = rounded_all(output[0])
    return wrong


def shown_elsewhere() -> list[float]:
    """Every number the page shows outside Part 1: the worked example's and the heatmaps'.

    Examples
    --------
    >>> [round(number, 6) for number in shown_elsewhere()[:5]]
    [0.707107, 0.0, 0.669762, 0.330238, 1.339523]
    """
    worked = worked_example()
    shown = [*worked["scores"], *worked["weights"], *worked["output"]]
    X = np.asarray(HEATMAPS["X"], dtype=float)  # (n, d_model)
    n, d_model = X.shape
    for h in HEATMAPS["heads"]:
        Q_h, K_h, V_h = (
            (X @ np.asarray(HEATMAPS[name], dtype=float)).reshape(n, h, d_model // h).transpose(1, 0, 2)
            for name in ("Wq", "Wk", "Wv")
        )  # each (h, n, d_head)
        for causal in (False, True):
            heads, weights = attention(Q_h, K_h, V_h, causal=causal, return_weights=True)  # (h, n, d_head)
            merged = heads.transpose(1, 0, 2).reshape(n, d_model)  # (n, d_model); weights (h, n, n)
            shown += [*weights.ravel(), *(merged @ np.asarray(HEATMAPS["Wo"], dtype=float)).ravel()]
    return [float(number) for number in shown]


def _head(Q: Any, K: Any, V: Any, i: int) -> tuple[Any, Any, Any]:
    """Token 0's query and every key and value of head ``i`` (its two columns)."""
    cols = slice(i * D_HEAD, (i + 1) * D_HEAD)
    return Q[:1, cols], K[:, cols], V[:, cols]


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    d_model, h, n = numbers["d_model"], numbers["h"], numbers["n"]
    Q, K, V = (np.asarray(numbers[name], dtype=float) for name in ("Q", "K", "V"))
    output, weights = attention(*_head(Q, K, V, ASKED), return_weights=True)  # (1, 2), (1, 2)
    return {
        "d_head": d_model // h,
        "split_shape": [h, n, d_model // h],
        "params": 4 * d_model * d_model,
        "head_weights": rounded_all(weights[0]),
        "head_output": rounded_all(output[0]),
    }


def _draw(rng: random.Random) -> dict[str, Any]:
    d_model, heads = rng.choice(SIZES)
    h = rng.choice(heads)
    n = rng.randint(3, 16)
    matrices: list[Matrix] = [[[rng.choice(ENTRIES) for _ in range(4)] for _ in range(2)] for _ in range(3)]
    return {"d_model": d_model, "h": h, "n": n, "Q": matrices[0], "K": matrices[1], "V": matrices[2]}


def _distinguishable(numbers: dict[str, Any]) -> bool:
    """Sizes whose answers and mistakes all differ, and a head whose weights are neither even nor one-hot.

    No number of the head's answers is shown elsewhere on the page (in either order), and no output is a
    whole number (a column whose two values are equal, readable from V itself).
    """
    data = {**numbers, **_answers(numbers)}
    wrong = wrong_answers(data)
    h, n, d_head = data["split_shape"]
    if len({h, n, d_head}) < 3 or len({d_head, data["d_model"], h, data["d_model"] * h}) < 4:
        return False
    weights = [data["head_weights"]] + [wrong[f"weights_{name}"] for name in _MISTAKES]
    outputs = [data["head_output"]] + [wrong[f"output_{name}"] for name in _MISTAKES]
    first = data["head_weights"][0]
    return (
        0.6 < max(first, 1 - first) < 0.95
        and apart(weights)
        and apart([*outputs, data["head_weights"]])
        and all(abs(value) > 0.05 and not value.is_integer() for value in data["head_output"])
        and not any(_on_the_page(value) for value in data["head_weights"] + data["head_output"])
    )


_MISTAKES = ("head0", "sqrt_d_model", "unscaled", "reshaped")
_SHOWN = frozenset(round(abs(number), 6) for number in shown_elsewhere())


def _on_the_page(value: float) -> bool:
    """Whether ``value``, written to 6, 3 or 2 decimals, is a number the page shows outside Part 1."""
    return any(round(abs(value), decimals) in _SHOWN for decimals in (6, 3, 2))
