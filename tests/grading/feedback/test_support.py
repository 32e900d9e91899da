"""Whether the learner's code shows a mutant's change (qkv.grading.feedback.support), operator by operator, on the
mutants of a small reference: a change is shown when the learner's file writes it, in whatever style."""

from __future__ import annotations

import pytest

from qkv.grading.feedback.mutants import Mutants
from qkv.grading.feedback.support import LearnerCode

REFERENCE = """import numpy as np


def weights(S):
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attend(Q, K, V):
    if Q.shape[1] != K.shape[1]:
        raise ValueError("Q and K need as many columns")
    A = weights(Q @ K.T / np.sqrt(Q.shape[1]))
    return A @ V
"""
MUTANTS = Mutants(REFERENCE)


def _key(operator: str, words: str) -> tuple[int, ...]:
    for key in MUTANTS.singles("attend"):
        change = MUTANTS.change(key[0])
        if change.operator == operator and words in change.words:
            return key
    raise AssertionError(f"no {operator} change with {words!r}")


def _shown(key: tuple[int, ...], learner: str) -> bool:
    return MUTANTS.shown_by(key, LearnerCode.parse(learner))


@pytest.mark.parametrize(
    ("operator", "words", "shows", "hides"),
    [
        (
            "axis",
            "axis 0",
            "def weights(S):\n    E = np.exp(S)\n    return E / np.sum(E, axis=0, keepdims=True)\n",
            "def weights(S):\n    E = np.exp(S)\n    return E / np.einsum('ij->j', E)[None, :]\n",
        ),
        (
            "keepdims",
            "keepdims",
            "def weights(S):\n    E = np.exp(S - S.max(axis=-1, keepdims=True))\n    return E / E.sum(axis=-1)\n",
            "def weights(S):\n    E = np.exp(S - S.max(axis=-1, keepdims=True))\n"
            "    return E / E.sum(axis=-1, keepdims=True)\n",
        ),
        (
            "sqrt",
            "without the square root",
            "def attend(Q, K, V):\n    return weights(Q @ K.T / Q.shape[1]) @ V\n",
            "def attend(Q, K, V):\n    return weights(Q @ K.T / Q.shape[1] ** 0.5) @ V\n",
        ),
    ],
)
def test_a_change_is_shown_only_where_the_code_writes_it(
    operator: str, words: str, shows: str, hides: str
) -> None:
    key = _key(operator, words)
    assert _shown(key, "import numpy as np\n\n\n" + shows)
    assert not _shown(key, "import numpy as np\n\n\n" + hides)


def test_a_check_left_out_is_shown_by_a_file_with_fewer_raise_statements() -> None:
    key = next(k for k in MUTANTS.singles("attend") if MUTANTS.change(k[0]).operator == "check")
    assert _shown(key, "def attend(Q, K, V):\n    return Q\n")
    assert not _shown(
        key,
        "def attend(Q, K, V):\n    if not Q.shape[1] == K.shape[1]:\n        raise ValueError('no')\n    return Q\n",
    )


def test_no_learner_code_counts_as_shown_and_a_file_that_does_not_parse_is_none() -> None:
    key = MUTANTS.singles("attend")[0]
    assert MUTANTS.shown_by(key, None)
    assert LearnerCode.parse("def (:\n") is None and LearnerCode.parse("") is None
