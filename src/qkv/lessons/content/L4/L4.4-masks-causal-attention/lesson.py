"""Variants of lesson L4.4: one query at position 0 against two keys, a causal row, a masked score row.

``variant(seed)`` gives the numbers a page shows and checks against; ``wrong_answers(data)`` gives the
results of the mistakes the page names. Every number comes from the ``qkv`` library (its masks, its
softmax, its attention with the zero policy for a query whose keys are all masked).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from qkv import attention, attention_scores, causal_mask, softmax

# The chapter's worked example: one query, two keys, d_k = 2; and a causal sequence of 4 tokens.
SEED_PAGE: dict[str, Any] = {
    "q": [1, 0],
    "K": [[1, 0], [0, 1]],
    "V": [[2, 0], [0, 2]],
    "seq_n": 4,
    "seq_i": 2,
    "masked_key": 1,
}

ENTRIES = (-2, -1, 0, 1, 2)
MINUS_INFINITY = "−∞"


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the worked example for ``None``, otherwise drawn from ``seed``."""
    numbers = SEED_PAGE if seed is None else _draw(random.Random(seed))
    return {"seed": seed, **numbers, **_answers(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, list[float]]:
    """What each named mistake gives for these numbers."""
    q, K, V = [data["q"]], np.asarray(data["K"]), np.asarray(data["V"])  # (1, 2), (2, 2), (2, 2)
    n_k = len(K)
    causal = causal_mask(1, n_k)  # (1, n_k): query 0 sees key 0 only
    plain = softmax(attention_scores(q, K))  # (1, n_k), no mask at all
    after = plain * causal  # masked after the softmax: the rest no longer sums to 1
    # The transposed causal mask lets query 0 see every key j >= 0; read the other way round
    # (True = masked) it sees every key but itself.
    transposed = causal_mask(n_k, 1).T  # (1, n_k)
    inverted = ~causal
    uniform = np.full((1, n_k), 1 / n_k)  # a fully-masked row under -1e9: the mean of V
    none = np.zeros((1, n_k))  # the diagonal excluded: query 0 has no key left (zero policy)
    row = causal_mask(data["seq_n"], data["seq_n"])[data["seq_i"]]  # (seq_n,)
    weights = {
        "after_softmax": after,
        "unmasked": attention(q, K, V, mask=transposed, return_weights=True)[1],
        "last_key": attention(q, K, V, mask=inverted, return_weights=True)[1],
        "no_diagonal": none,
        "uniform": uniform,
    }
    found: dict[str, list[float]] = {}
    for name, A in weights.items():
        found[f"weights_{name}"] = A[0].tolist()
        found[f"output_{name}"] = (A @ V)[0].tolist()  # (1, d_v)
    found["row_no_diagonal"] = _ints(row & (np.arange(data["seq_n"]) != data["seq_i"]))  # j < i
    found["row_transposed"] = _ints(causal_mask(data["seq_n"], data["seq_n"]).T[data["seq_i"]])  # j >= i
    found["row_inverted"] = _ints(~row)  # j > i
    found["row_all"] = [1] * data["seq_n"]
    found["dead_uniform"] = (uniform @ V)[0].tolist()
    found["dead_unmasked"] = found["output_unmasked"]
    found["dead_first"] = V[0].tolist()
    return found


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    q, K, V = [numbers["q"]], numbers["K"], numbers["V"]
    n_k = len(K)
    O, A = attention(q, K, V, causal=True, return_weights=True)  # (1, d_v), (1, n_k)
    scores = attention_scores(q, K)[0]  # (n_k,)
    allowed = np.arange(n_k) != numbers["masked_key"]  # (n_k,)
    masked = np.where(allowed, scores, -np.inf)  # (n_k,)
    dead = attention(q, K, V, mask=np.zeros((1, n_k), dtype=bool), all_masked="zero")  # (1, d_v)
    after = softmax(scores) * allowed  # masked after the softmax: the weights, not the scores
    row = causal_mask(numbers["seq_n"], numbers["seq_n"])[numbers["seq_i"]]  # (seq_n,)
    return {
        "scores": scores.tolist(),
        "weights_causal": A[0].tolist(),
        "output_causal": O[0].tolist(),
        "causal_row": _ints(row),
        "seen_keys": _listed([j for j, ok in enumerate(row) if ok]),
        "seen_count": int(row.sum()),
        "dead_output": dead[0].tolist(),
        "scores_text": _text(scores),
        "masked_row_text": _text(masked),
        "multiplied_text": _text(scores * allowed),
        "inverted_text": _text(np.where(allowed, -np.inf, scores)),
        "after_softmax_text": _text(after),
        "kept_key": int(np.flatnonzero(allowed)[0]),
        "masked_weight": float(softmax(scores * allowed)[numbers["masked_key"]]),  # e^0 is not 0
        "seq_last": numbers["seq_n"] - 1,
    }


def _ints(mask: np.ndarray[Any, Any]) -> list[int]:
    return [int(bool(value)) for value in mask]


def _listed(keys: list[int]) -> str:
    words = [str(key) for key in keys]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _text(row: np.ndarray[Any, Any]) -> str:
    """A row as the page writes it, with −∞ for a masked score."""
    return "[" + ", ".join(MINUS_INFINITY if value == -np.inf else _number(value) for value in row) + "]"


def _number(value: float) -> str:
    """Whole numbers without ".0", others to 6 decimals, as the page writes every number."""
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _draw(rng: random.Random) -> dict[str, Any]:
    # Redraw until every answer and every named mistake differ, so feedback is never ambiguous.
    while True:
        q = [rng.choice(ENTRIES) for _ in range(2)]
        K = [[rng.choice(ENTRIES) for _ in range(2)] for _ in range(2)]
        V = [[rng.choice(ENTRIES) for _ in range(2)] for _ in range(2)]
        seq_n = rng.randint(4, 6)
        numbers = {
            "q": q,
            "K": K,
            "V": V,
            "seq_n": seq_n,
            "seq_i": rng.randint(1, seq_n - 2),
            "masked_key": rng.randint(0, 1),
        }
        if _distinguishable(numbers):
            return numbers


def _distinguishable(numbers: dict[str, Any]) -> bool:
    answers = {**_answers(numbers), **numbers}
    wrong = wrong_answers(answers)
    scores = answers["scores"]
    groups = [
        ["weights_causal", *(k for k in wrong if k.startswith("weights_"))],
        ["output_causal", *(k for k in wrong if k.startswith("output_"))],
        ["causal_row", *(k for k in wrong if k.startswith("row_"))],
        ["dead_output", *(k for k in wrong if k.startswith("dead_"))],
    ]
    values = {**answers, **wrong}
    for group in groups:
        rows = [tuple(round(float(v), 6) for v in values[key]) for key in group]
        if len(set(rows)) != len(rows):
            return False
    texts = [
        answers[k] for k in ("masked_row_text", "multiplied_text", "inverted_text", "after_softmax_text")
    ]
    return (
        scores[0] != scores[1]  # else the unmasked weights are uniform too
        and 0 not in scores  # else multiplying by the mask changes nothing visible
        and len(set(texts)) == len(texts)
    )
