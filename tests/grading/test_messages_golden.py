"""The sentences a learner reads about a wrong value, held to a golden file: each relation kind and each
mutation operator on fixed values. A change of wording shows up as a diff of
``tests/grading/golden/messages.txt``; write the file anew with ``QKV_UPDATE_GOLDEN=1``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from qkv import merge_heads, softmax, split_heads
from qkv.grading.feedback.explain_search import mutant_sentence
from qkv.grading.feedback.mutants import Mutants
from qkv.grading.feedback.relations import find_relation

GOLDEN = Path(__file__).parent / "golden" / "messages.txt"
S = np.array([[0.5, -1.25, 2.0, 0.0], [1.5, 0.25, -0.75, 1.0], [-2.0, 0.5, 0.75, -0.5]])
X = np.arange(24.0).reshape(3, 8) / 7
MASK = np.array([[True, True, False, False], [False, False, False, False], [True, True, True, True]])
SIZES = [("n_q", 3), ("n_k", 4), ("d_k", 9), ("d_v", 2)]
HEADS = [("h", 2), ("n", 3), ("d_model", 8), ("d_head", 4)]


def relation(got: object, want: object, **extra: object) -> Callable[[], str]:
    def sentence() -> str:
        found = find_relation(got, want, **extra)  # type: ignore[arg-type]
        return "(none)" if found is None else f"[{found.kind}] {found.sentence}"

    return sentence


def _nan_row() -> np.ndarray:
    got = softmax(S)
    got[1] = np.nan
    return got


def _partly() -> np.ndarray:
    got = S.copy()
    got[1:] *= 2
    return got


REFERENCE = """import numpy as np


def weights(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def scores(Q, K):
    n_q = Q.shape[0]
    d_k = Q.shape[1]
    return Q @ K.T / np.sqrt(d_k) * 0.5
"""
MUTANTS = Mutants(REFERENCE)


def mutant(operator: str, index: int = 0) -> Callable[[], str]:
    def sentence() -> str:
        keys = [key for f in ("weights", "scores") for key in MUTANTS.singles(f)]
        chosen = [key for key in keys if MUTANTS.change(key[0]).operator == operator][index]
        return mutant_sentence(MUTANTS.mutant(chosen))

    return sentence


SCENARIOS: dict[str, Callable[[], str]] = {
    "transposed": relation(S.T, S),
    "axes": relation(split_heads(X, 2).transpose(1, 0, 2), split_heads(X, 2), sizes=HEADS),
    "reshaped instead of transposed": relation(X.reshape(2, 3, 4), split_heads(X, 2), sizes=HEADS),
    "another shape": relation(S.reshape(4, 3), S),
    "keepdims": relation(S.sum(axis=-1), S.sum(axis=-1, keepdims=True)),
    "shape by sizes": relation(np.zeros((3, 9)), np.zeros((3, 2)), sizes=SIZES),
    "shape tuple by sizes": relation((3, 4), (3, 2), sizes=SIZES),
    "factor": relation(S / 9, S / 3, sizes=SIZES),
    "unnamed factor": relation(S * 0.37, S),
    "offset": relation(3 * 2 + 7, 7, sizes=[("d_model", 3), ("d_v", 2)]),
    "normalised along axis 0": relation(softmax(S, axis=0), softmax(S)),
    "row factors": relation(np.exp(S), softmax(S)),
    "rows permuted": relation(S[[2, 0, 1]], S),
    "heads reversed": relation(split_heads(X, 2)[::-1], split_heads(X, 2), sizes=HEADS),
    "heads interleaved": relation(
        split_heads(X, 2).transpose(1, 2, 0).reshape(3, 8), merge_heads(split_heads(X, 2)), sizes=HEADS
    ),
    "partly": relation(_partly(), S),
    "masked row NaN": relation(_nan_row(), softmax(S), args=(MASK,)),
    "float32": relation((S / 3 + 1e2).astype(np.float32) - np.float32(1e2), S / 3),
    "truncated": relation(np.trunc(S).astype(np.int64), S),
    "bools as floats": relation(MASK.astype(float), MASK),
    "mutant axis": mutant("axis"),
    "mutant keepdims": mutant("keepdims"),
    "mutant sqrt": mutant("sqrt"),
    "mutant scale": mutant("scale"),
    "mutant transpose": mutant("transpose"),
    "mutant swap": mutant("swap"),
    "mutant drop": mutant("drop"),
    "mutant reduction": mutant("reduction"),
    "mutant index": mutant("index"),
    "mutant call": mutant("call"),
    "mutant constant": mutant("constant"),
    "mutant size": mutant("size"),
    "mutant operand": mutant("operand"),
}


def rendered() -> str:
    return "".join(f"{name}: {make()}\n" for name, make in SCENARIOS.items())


def test_the_messages_match_the_golden_file() -> None:
    text = rendered()
    if os.environ.get("QKV_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_every_scenario_names_something() -> None:
    assert "(none)" not in rendered()
