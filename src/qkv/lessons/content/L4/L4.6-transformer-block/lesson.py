"""Variants of lesson L4.6: the sizes of a block, and the layer norm of one token worked by hand.

``variant(seed)`` gives n and d_model for the shape and counting questions and a two-token X whose first row
the learner normalises; ``wrong_answers(data)`` gives what each named mistake computes instead (the variance
divided by d − 1, the statistics taken over the tokens, the counts that forget a part of the block, W1's
shape for the activations', sums for means, σ² for σ).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from chapter import apart, rounded, variant_numbers

SEED_PAGE: dict[str, Any] = {"n": 10, "d_model": 512, "X": [[1, 2, 3, 6], [3, 2, 1, 2]]}
D_MODELS = (64, 128, 256, 384, 512, 768, 1024)


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the seed page's for ``None``, otherwise drawn from ``seed``."""
    numbers = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    return {"seed": seed, **numbers, **_answers(numbers)}


def _counts(d: int) -> dict[str, int]:
    return {
        "attention": 4 * d * d,  # Wq, Wk, Wv, Wo; no biases
        "mlp": 2 * d * 4 * d,  # W1 (d, 4d) and W2 (4d, d)
        "mlp_biases": 4 * d + d,  # b1 and b2
        "norms": 2 * 2 * d,  # gamma and beta of two layer norms
    }


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    n, d = numbers["n"], numbers["d_model"]
    row = np.asarray(numbers["X"][0], dtype=float)
    normed = (row - row.mean()) / np.sqrt(row.var() + 1e-5)
    return {
        "hidden_shape": [n, 4 * d],
        "block_shape": [n, d],
        "block_params": sum(_counts(d).values()),
        "row_mean": rounded(row.mean()),
        "row_var": rounded(row.var()),
        "row_normed": [rounded(v) for v in normed],
    }


def wrong_answers(data: dict[str, Any]) -> dict[str, Any]:
    """What the lesson's named mistakes compute for this variant."""
    n, d = data["n"], data["d_model"]
    counts = _counts(d)
    total = sum(counts.values())
    X = np.asarray(data["X"], dtype=float)  # (2, 4)
    row = X[0]
    unbiased = row.var(ddof=1)
    over_tokens = (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + 1e-5)  # (2, 4): statistics per column
    return {
        "hidden_d": [n, d],
        "hidden_transposed": [4 * d, n],
        "hidden_w1": [d, 4 * d],  # W1's shape, the weights instead of the activations
        "params_no_norms": total - counts["norms"],
        "params_no_mlp_biases": total - counts["mlp_biases"],
        "params_no_wo": total - d * d,
        "params_one_norm": total - 2 * d,
        "params_mlp_width_d": total - 6 * d * d - 3 * d,  # a hidden layer of d, not 4d
        "mean_is_sum": rounded(row.sum()),
        "var_sum": rounded(((row - row.mean()) ** 2).sum()),  # the squared deviations added, not averaged
        "var_unbiased": rounded(unbiased),
        "std_instead": rounded(np.sqrt(row.var())),
        "normed_unbiased": [rounded(v) for v in (row - row.mean()) / np.sqrt(unbiased + 1e-5)],
        "normed_over_tokens": [rounded(v) for v in over_tokens[0]],
        "centred_only": [rounded(v) for v in row - row.mean()],
        "normed_by_var": [rounded(v) for v in (row - row.mean()) / row.var()],  # divided by σ², not σ
    }


def _draw(rng: random.Random) -> dict[str, Any]:
    # A first row with a whole-number mean and at least three different entries; _distinguishable then
    # keeps every answer and named mistake apart from the others.
    first = [rng.randint(0, 8) for _ in range(4)]
    while sum(first) % 4 or len(set(first)) < 3:
        first = [rng.randint(0, 8) for _ in range(4)]
    return {
        "n": rng.randint(3, 32),
        "d_model": rng.choice(D_MODELS),
        "X": [first, [rng.randint(0, 8) for _ in range(4)]],
    }


def _distinguishable(numbers: dict[str, Any]) -> bool:
    data = {**numbers, **_answers(numbers)}
    wrong = wrong_answers(data)
    if numbers["n"] in (numbers["d_model"], 4 * numbers["d_model"]):
        return False
    vectors = [
        data["row_normed"],
        wrong["normed_unbiased"],
        wrong["normed_over_tokens"],
        wrong["centred_only"],
        wrong["normed_by_var"],
    ]
    scalars = [data["row_var"], wrong["var_unbiased"], wrong["std_instead"], data["row_mean"]]
    variances = [data["row_var"], wrong["var_unbiased"], wrong["std_instead"], wrong["var_sum"]]
    return (
        apart(vectors)
        and len({round(s, 2) for s in scalars}) == len(scalars)
        and len({round(s, 2) for s in variances}) == len(variances)
        and round(wrong["mean_is_sum"], 2) != round(data["row_mean"], 2)
    )
