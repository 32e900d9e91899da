"""What the lessons of chapter L4 share: its worked example, drawing variants, rounding, hint sentences
and the random inputs of the hidden tests.

The lesson engine lets this chapter's ``lesson.py`` and ``grading.py`` files import this module as
``chapter`` (``from chapter import WORKED``). Every number here comes from the ``qkv`` library.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

from qkv import attention, attention_scores

Array = np.ndarray[Any, np.dtype[Any]]
Numbers = TypeVar("Numbers")

# ------------------------------------------------------------------------------------ the worked example
# The chapter reference's worked example (reference.md, on every page of the chapter): one query, two keys
# and two values, with d_k = 2. A test holds these numbers, and the results below, equal to reference.md.
WORKED: dict[str, Any] = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}


def worked_example() -> dict[str, Any]:
    """The worked example's numbers and every result the chapter reference shows for it, from ``qkv``.

    Returns
    -------
    dict
        ``q``, ``K``, ``V`` and ``d_k`` as written; ``raw_scores`` (q·kᵢ), ``scores`` (divided by √d_k),
        ``weights`` and ``output`` of the one query; ``first_key_output``, its output when a causal mask
        lets it see the first key only. Each result is a plain list, one entry per key or value column.

    Examples
    --------
    >>> example = worked_example()
    >>> [round(w, 6) for w in example["weights"]], [round(o, 6) for o in example["output"]]
    ([0.669762, 0.330238], [1.339523, 0.660477])
    >>> example["raw_scores"], example["first_key_output"]
    ([1.0, 0.0], [2.0, 0.0])
    """
    q, K, V = [WORKED["q"]], WORKED["K"], WORKED["V"]  # (1, d_k), (n_k, d_k), (n_k, d_v)
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    first_key = attention(q, K, V, mask=[[True, False]])  # (1, d_v)
    return {
        "q": WORKED["q"],
        "K": K,
        "V": V,
        "d_k": len(WORKED["q"]),
        "raw_scores": attention_scores(q, K, scale=1.0)[0].tolist(),  # (n_k,)
        "scores": attention_scores(q, K)[0].tolist(),  # (n_k,)
        "weights": weights[0].tolist(),
        "output": output[0].tolist(),
        "first_key_output": first_key[0].tolist(),
    }


# ------------------------------------------------------------------------------------- drawing variants
# A distinctness test that no draw passes would otherwise hang the page: this many draws is far more than
# any lesson of the chapter needs (a few hundred at most), so reaching it means the test is wrong.
MAX_DRAWS = 100_000


def draw_until(
    rng: random.Random, draw: Callable[[random.Random], Numbers], distinguishable: Callable[[Numbers], bool]
) -> Numbers:
    """Draw numbers from ``rng`` until ``distinguishable`` accepts them, so feedback is never ambiguous.

    Parameters
    ----------
    rng : random.Random
        Seeded by the variant's seed: the same seed always gives the same numbers.
    draw : callable
        One candidate from ``rng``.
    distinguishable : callable
        Whether the candidate's answers and named mistakes all tell apart (and whatever else the lesson
        asks of its numbers).

    Raises
    ------
    RuntimeError
        If no candidate passes in ``MAX_DRAWS`` draws.

    Examples
    --------
    >>> draw_until(random.Random(1), lambda rng: rng.randint(1, 6), lambda n: n % 2 == 0)
    2
    """
    for _ in range(MAX_DRAWS):
        numbers = draw(rng)
        if distinguishable(numbers):
            return numbers
    test = getattr(distinguishable, "__name__", "the distinctness test")
    raise RuntimeError(f"No draw passed {test} in {MAX_DRAWS} tries.")


def variant_numbers(
    seed: int | None,
    seed_page: dict[str, Any],
    draw: Callable[[random.Random], dict[str, Any]],
    distinguishable: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """The printed page's own numbers for ``seed`` None; otherwise numbers drawn from the seed.

    Examples
    --------
    >>> variant_numbers(None, {"n": 3}, lambda rng: {"n": rng.randint(4, 9)}, lambda numbers: True)
    {'n': 3}
    >>> variant_numbers(2, {"n": 3}, lambda rng: {"n": rng.randint(4, 9)}, lambda numbers: True)
    {'n': 4}
    """
    return seed_page if seed is None else draw_until(random.Random(seed), draw, distinguishable)


# ---------------------------------------------------------------------------------------------- rounding
def rounded(value: Any) -> float:
    """A number to the 6 decimals a page writes, with no negative zero.

    Examples
    --------
    >>> rounded(2 / 3), rounded(-1e-9)
    (0.666667, 0.0)
    """
    return round(float(value), 6) + 0.0  # + 0.0 turns -0.0 into 0.0: the two are one number on a page


def rounded_all(values: Any) -> list[float]:
    """Every number of ``values`` (any shape, read row by row) to 6 decimals.

    Examples
    --------
    >>> rounded_all([[1 / 3, 2], [-0.0, 0.5]])
    [0.333333, 2.0, 0.0, 0.5]
    """
    return [rounded(value) for value in np.ravel(values)]


def apart(vectors: Iterable[list[float]], tolerance: float = 0.02) -> bool:
    """Whether no two vectors are within ``tolerance`` of each other, in the same order or reversed.

    Numbers typed to two or three decimals are told apart by feedback only when no two answers (or an
    answer and a named mistake) are this close; reversed, because a learner may type a pair backwards.

    Examples
    --------
    >>> apart([[0.2, 0.8], [0.81, 0.19]]), apart([[0.2, 0.8], [0.5, 0.5]])
    (False, True)
    """
    listed = list(vectors)
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            if np.allclose(a, b, atol=tolerance) or np.allclose(a, b[::-1], atol=tolerance):
                return False
    return True


# ---------------------------------------------------------------------------------------- hint sentences
def type_error_hint(why: str | None = None) -> str:
    """The hint for code that raised TypeError where the spec asks for ValueError, with the reason why.

    Examples
    --------
    >>> type_error_hint("a matrix of the wrong size is a bad value")
    '... raised TypeError: a matrix of the wrong size is a bad value, so raise ValueError.'
    >>> type_error_hint()
    'The spec asks for ValueError here, but your code raised TypeError: raise ValueError.'
    """
    reason = f"{why}, so raise ValueError" if why else "raise ValueError"
    return f"The spec asks for ValueError here, but your code raised TypeError: {reason}."


MISMATCHED_TYPE_ERROR = type_error_hint("arrays of mismatched sizes are bad values")
NOT_A_PAIR = "Return the output and the weights together as the tuple (O, A)."


# -------------------------------------------------------------------------------- inputs of hidden tests
def random_decimals(rng: np.random.Generator, *shape: int, spread: float = 2.0) -> Array:
    """Random entries from -spread to spread with two decimals, readable in feedback.

    Examples
    --------
    >>> random_decimals(np.random.default_rng(0), 2, 3).shape
    (2, 3)
    """
    return np.round(rng.uniform(-spread, spread, size=shape), 2)


def random_fractions(rng: np.random.Generator, *shape: int, spread: float = 2.0) -> Array:
    """Like :func:`random_decimals`, but never a whole number: one would hide truncation to int or a
    hard-coded size.

    Examples
    --------
    >>> values = random_fractions(np.random.default_rng(0), 50)
    >>> bool(np.all(values != np.round(values)))
    True
    """
    values = random_decimals(rng, *shape, spread=spread)
    values[values == np.round(values)] += 0.25
    return values


def random_sizes(rng: np.random.Generator, count: int, low: int = 2, high: int = 7) -> list[int]:
    """``count`` different sizes from ``low`` to ``high``, so that a swapped pair of sizes shows.

    Examples
    --------
    >>> sizes = random_sizes(np.random.default_rng(0), 3)
    >>> len(set(sizes)), all(2 <= n <= 7 for n in sizes)
    (3, True)
    """
    return [int(n) for n in rng.choice(np.arange(low, high + 1), size=count, replace=False)]
