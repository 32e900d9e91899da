"""Variants of lesson L4.4: query 1 of a causal sequence of three tokens, a causal row, a masked score row.

``variant(seed)`` gives the numbers a page shows and checks against; ``wrong_answers(data)`` gives the
results of the mistakes the page names. Every number comes from the ``qkv`` library (its masks, its
softmax, its attention with the zero policy for a query whose keys are all masked).

Under the causal mask, query 1 may attend keys 0 and 1 (not key 2), so its weights are a real softmax
over two scores. With d_k = 4 the scale 1/√d_k is 1/2, so the scaled scores are halves. The page's first
numbers are not the chapter's worked example (the chapter reference on the same page works that one out),
and no answer of Part 1 is a number of the worked example.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from chapter import rounded_all, variant_numbers, worked_example

from qkv import attention, attention_scores, causal_mask, softmax

# Numbers of their own (not the worked example's), checked by _distinguishable like every drawn variant.
SEED_PAGE: dict[str, Any] = {
    "q": [1, 1, 0, 2],
    "K": [[1, 1, 0, 1], [0, 0, 1, 1], [2, 0, 1, 2]],
    "V": [[1, 2], [-1, 0], [2, -1]],
    "seq_n": 6,
    "seq_i": 3,
    "score_row": [1.5, -0.5, 1],
    "masked_key": 2,
}

POSITION = 1  # the query's position in the causal sequence of three tokens
N_KEYS = 3
D_K = 4  # √d_k = 2: the scaled scores are halves, and their softmax is no number the page's widget shows
ENTRIES = (-2, -1, 0, 1, 2)
SCORE_ENTRIES = (-2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2)  # no 0: then scores × mask would change nothing
MINUS_INFINITY = "−∞"


def variant(seed: int | None) -> dict[str, Any]:
    """The numbers of one variant: the page's first numbers for ``None``, otherwise drawn from ``seed``."""
    numbers = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    return {"seed": seed, **numbers, **_answers(numbers)}


def wrong_answers(data: dict[str, Any]) -> dict[str, list[float]]:
    """What each named mistake gives for these numbers."""
    q, K, V = [data["q"]], np.asarray(data["K"]), np.asarray(data["V"])  # (1, d_k), (3, d_k), (3, d_v)
    keys = np.arange(len(K))  # (3,)
    causal = keys <= POSITION  # (3,): query 1 may attend keys 0 and 1
    plain = softmax(attention_scores(q, K))[0]  # (3,), no mask at all
    weights = {
        "after_softmax": plain * causal,  # masked after the softmax: the rest no longer sums to 1
        "unmasked": plain,
        "transposed": _weights(q, K, V, keys >= POSITION),  # the upper triangle: keys 1 and 2
        "inverted": _weights(q, K, V, ~causal),  # True read as masked: key 2 alone
        "no_diagonal": _weights(q, K, V, keys < POSITION),  # j < i: key 0 alone
        "even": causal / causal.sum(),  # the allowed keys share equally: no softmax at all
        "unscaled": attention(q, K, V, mask=causal, scale=1.0, return_weights=True)[1][0],
    }
    found: dict[str, list[float]] = {}
    for name, A in weights.items():
        found[f"weights_{name}"] = A.tolist()
        found[f"output_{name}"] = (A @ V).tolist()  # (d_v,)
    n, i = data["seq_n"], data["seq_i"]
    square = causal_mask(n, n)  # (n, n)
    row = square[i]  # (n,)
    found["row_no_diagonal"] = _ints(row & (np.arange(n) != i))  # j < i
    found["row_transposed"] = _ints(square.T[i])  # j >= i
    found["row_inverted"] = _ints(~row)  # j > i
    found["row_all"] = [1] * n
    found["row_from_end"] = _ints(row[::-1])  # the right count of keys, at the end of the sequence
    found["dead_uniform"] = V.mean(axis=0).tolist()  # a -1e9 fill: uniform weights, the mean of V
    found["dead_unmasked"] = found["output_unmasked"]
    found["dead_causal"] = attention(q, K, V, mask=causal)[0].tolist()
    found["dead_first"] = V[0].tolist()
    return found


def _weights(q: Any, K: Any, V: Any, allowed: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return attention(q, K, V, mask=allowed, return_weights=True)[1][0]  # (n_k,)


def _answers(numbers: dict[str, Any]) -> dict[str, Any]:
    q, K, V = [numbers["q"]], numbers["K"], numbers["V"]
    n_k = len(K)
    O, A = attention(q, K, V, mask=np.arange(n_k) <= POSITION, return_weights=True)  # (1, d_v), (1, n_k)
    scores = np.asarray(numbers["score_row"], dtype=float)  # (3,), given as scaled scores
    allowed = np.arange(len(scores)) != numbers["masked_key"]  # (3,)
    masked = np.where(allowed, scores, -np.inf)  # (3,)
    dead = attention(q, K, V, mask=np.zeros((1, n_k), dtype=bool), all_masked="zero")  # (1, d_v)
    after = softmax(scores) * allowed  # masked after the softmax: the weights, not the scores
    row = causal_mask(numbers["seq_n"], numbers["seq_n"])[numbers["seq_i"]]  # (seq_n,)
    return {
        "position": POSITION,
        "d_k": len(numbers["q"]),
        "root_dk": _number(np.sqrt(len(numbers["q"]))),
        "weights_causal": A[0].tolist(),
        "output_causal": O[0].tolist(),
        "causal_row": _ints(row),
        "seen_keys": _listed([j for j, ok in enumerate(row) if ok]),
        "seen_count": int(row.sum()),
        "dead_output": dead[0].tolist(),
        "score_row_text": _text(scores),
        "masked_row_text": _text(masked),
        "multiplied_text": _text(scores * allowed),
        "inverted_text": _text(np.where(allowed, -np.inf, scores)),
        "after_softmax_text": _text(after),
        "masked_weight": _number(softmax(scores * allowed)[numbers["masked_key"]]),  # e^0 is not 0
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
    seq_n = rng.randint(5, 7)  # the idea's table shows 4 tokens: its rows are no answers here
    return {
        "q": [rng.choice(ENTRIES) for _ in range(D_K)],
        "K": [[rng.choice(ENTRIES) for _ in range(D_K)] for _ in range(N_KEYS)],
        "V": [[rng.choice(ENTRIES) for _ in range(2)] for _ in range(N_KEYS)],
        "seq_n": seq_n,
        "seq_i": rng.randint(1, seq_n - 2),
        "score_row": [rng.choice(SCORE_ENTRIES) for _ in range(3)],
        "masked_key": rng.randint(0, 2),
    }


def _rounded(values: Any) -> tuple[float, ...]:
    return tuple(rounded_all(values))  # a tuple: rows are told apart as members of a set


def _worked_numbers() -> set[float]:
    """Every number the chapter reference's worked example shows: scores, weights, outputs."""
    worked = worked_example()
    shown = ("scores", "weights", "output", "first_key_output")
    return {number for name in shown for number in rounded_all(worked[name])}


_WORKED_NUMBERS = frozenset(_worked_numbers())  # fixed numbers: computed once, not on every draw


def _distinguishable(numbers: dict[str, Any]) -> bool:
    answers = {**_answers(numbers), **numbers}
    wrong = wrong_answers(answers)
    values = {**answers, **wrong}
    groups = [
        ["weights_causal", *(k for k in wrong if k.startswith("weights_"))],
        ["output_causal", *(k for k in wrong if k.startswith("output_"))],
        ["causal_row", *(k for k in wrong if k.startswith("row_"))],
        ["dead_output", *(k for k in wrong if k.startswith("dead_"))],
    ]
    for group in groups:
        rows = [_rounded(values[key]) for key in group]
        if len(set(rows)) != len(rows):
            return False
    texts = [
        answers[k] for k in ("masked_row_text", "multiplied_text", "inverted_text", "after_softmax_text")
    ]
    scores = attention_scores([numbers["q"]], numbers["K"])[0]  # (3,)
    fractions = {v for v in _rounded([*answers["weights_causal"], *answers["output_causal"]]) if v % 1}
    return (
        0 < abs(scores[0] - scores[1]) <= 2  # no even split, and no near all-or-nothing one
        and 0 not in numbers["score_row"]  # else multiplying by the mask changes nothing visible
        and len(set(texts)) == len(texts)
        and not fractions & _WORKED_NUMBERS  # no answer is a number the chapter reference shows
    )
