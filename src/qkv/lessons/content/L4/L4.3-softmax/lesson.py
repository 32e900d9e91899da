"""Variants of lesson L4.3: one query against two keys, its softmax weights, and the output they average.

Every page keeps d_k = 2 and d_v = 2, so that averaging the keys instead of the values gives a vector of
the same length, which feedback can name. The idea section and the predict-first question illustrate with
the chapter's worked example (``WORKED``), and the widget starts from scores of its own (``WIDGET``): no
Part 1, the seed page's included, uses those numbers or has their weights or output as an answer, so
nothing shown can be copied into Part 1. Every answer comes from the ``qkv`` library itself.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
from chapter import WORKED, variant_numbers, worked_example

from qkv import attention, attention_scores, softmax

# The seed page's own numbers: Part 1 when no variant was drawn (they pass _distinguishable too).
SEED_PAGE: dict[str, Any] = {
    "q": [2, 1],
    "K": [[1, 1], [0, 1]],
    "V": [[1, 3], [2, -1]],
    "shift": 5,
    "factor": 2,
}

# The softmax-bars widget's starting scores and values (lesson.md's widget block).
WIDGET: dict[str, Any] = {"scores": [0.707107, 0.0, -0.5], "V": [[2, 0], [0, 2], [1, 1]]}

ENTRIES = (-2, -1, 0, 1, 2)
VALUE_ENTRIES = (-2, -1, 0, 1, 2, 3)
DRAWN_D_K = 2
SHIFTS = (3, 5, 10, 20)
FACTORS = (2, 3)
# Each hand exercise's answer first, then the values its named mistakes compare with.
EXERCISE_VALUES = (
    ("weights", "unscaled", "no_exp", "exp_only", "scaled", "raw"),
    ("output", "output_keys", "output_unscaled", "output_mean", "output_scores", "weights"),
    ("shifted_weights", "shift_no_exp", "shift_exp_only", "shifted"),
    ("sharper_weights", "weights", "sharper_no_exp", "weights_scaled_up", "sharper"),
)
TOLERANCE = 0.01  # answers of a variant differ by more than this, so feedback is never ambiguous


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    return {"seed": seed, **numbers, **_answers(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """Results of known mistakes, for the ``[mistakes]`` tables of lesson.md."""
    q, K, V = np.asarray([data["q"]]), np.asarray(data["K"]), np.asarray(data["V"])
    raw = attention_scores(q, K, scale=1.0)[0]  # (n_k,)
    scaled = attention_scores(q, K)[0]  # (n_k,)
    weights = softmax(scaled)  # (n_k,)
    shifted = scaled + data["shift"]
    sharper = scaled * data["factor"]
    return {
        "unscaled": softmax(raw).tolist(),
        "no_exp": (scaled / scaled.sum()).tolist() if abs(scaled.sum()) > 1e-9 else [0.0, 0.0],
        "exp_only": np.exp(scaled).tolist(),
        "output_keys": (weights @ K).tolist(),  # (d_k,): the keys averaged instead of the values
        "output_unscaled": (softmax(raw) @ V).tolist(),
        "output_mean": V.mean(axis=0).tolist(),
        "output_scores": (scaled @ V).tolist(),
        "shift_no_exp": (shifted / shifted.sum()).tolist(),
        "shift_exp_only": np.exp(shifted).tolist(),
        "sharper_no_exp": (sharper / sharper.sum()).tolist() if abs(sharper.sum()) > 1e-9 else [0.0, 0.0],
        "weights_scaled_up": (weights * data["factor"]).tolist(),
    }


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    q, K, V = [numbers["q"]], numbers["K"], numbers["V"]
    d_k = len(numbers["q"])
    raw = attention_scores(q, K, scale=1.0)[0]  # (n_k,)
    scaled = attention_scores(q, K)[0]  # (n_k,)
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    shifted = scaled + numbers["shift"]
    sharper = scaled * numbers["factor"]
    return {
        "d_k": d_k,
        "root_d_k": math.sqrt(d_k),
        "raw": raw.tolist(),
        "scaled": scaled.tolist(),
        "weights": weights[0].tolist(),
        "output": output[0].tolist(),
        "shifted": shifted.tolist(),
        "shifted_weights": softmax(shifted).tolist(),
        "sharper": sharper.tolist(),
        "sharper_weights": softmax(sharper).tolist(),
    }


def _draw(rng: random.Random) -> dict[str, Any]:
    return {
        "q": [rng.choice(ENTRIES) for _ in range(DRAWN_D_K)],
        "K": [[rng.choice(ENTRIES) for _ in range(DRAWN_D_K)] for _ in range(2)],
        "V": [[rng.choice(VALUE_ENTRIES) for _ in range(2)] for _ in range(2)],
        "shift": rng.choice(SHIFTS),
        "factor": rng.choice(FACTORS),
    }


def shown_elsewhere() -> list[float]:
    """The weights and outputs the page shows outside Part 1: the worked example's and the widget's.

    Examples
    --------
    >>> [round(number, 6) for number in shown_elsewhere()][:4]
    [0.669762, 0.330238, 1.339523, 0.660477]
    """
    worked = worked_example()
    widget_weights = softmax(np.asarray(WIDGET["scores"]))  # (3,)
    widget_output = widget_weights @ np.asarray(WIDGET["V"])  # (d_v,)
    return [*worked["weights"], *worked["output"], *widget_weights.tolist(), *widget_output.tolist()]


_SHOWN = tuple(shown_elsewhere())  # fixed numbers: computed once, not on every draw


def _distinguishable(numbers: dict[str, Any]) -> bool:
    """Whether the answers and named mistakes of each exercise differ, and no answer is shown elsewhere."""
    if all(numbers[key] == WORKED[key] for key in ("q", "K")):
        return False
    answers = _answers(numbers)
    found = [number for key in ("weights", "output", "sharper_weights") for number in answers[key]]
    if any(abs(a - b) <= TOLERANCE for a in found for b in _SHOWN):
        return False  # the idea, the predict-first question or the widget would show it
    gap = abs(answers["scaled"][0] - answers["scaled"][1])
    if not 0.4 <= gap <= 2.0 or numbers["V"][0] == numbers["V"][1]:
        return False  # equal scores, near one-hot weights or equal values would teach nothing
    if abs(sum(answers["scaled"])) < 0.3:
        return False  # scores summing to 0 leave "normalised without exp" undefined
    named = {**answers, **wrong_answers(numbers)}
    for keys in EXERCISE_VALUES:  # within one exercise, the answer and its named mistakes all differ
        arrays = [np.asarray(named[key], dtype=float) for key in keys]
        if any(np.max(np.abs(a - b)) <= TOLERANCE for i, a in enumerate(arrays) for b in arrays[i + 1 :]):
            return False
    return True
