"""Variants of L4.1: the seed page first, then small integers drawn deterministically, answers from qkv."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from qkv import project_qkv
from qkv.lessons import LessonError, load_catalog

LESSON = load_catalog().lesson("L4.1")


def test_no_seed_gives_the_seed_page() -> None:
    variant = LESSON.variant(None)
    # The idea's illustration and the worked example ride along, the same in every variant.
    shared = {key: variant.pop(key) for key in list(variant) if key == "idea" or key.startswith("ex_")}
    assert shared == {key: value for key, value in LESSON.variant(7).items() if key in shared}
    assert shared["idea"]["x"] == [3, 1] and shared["ex_q"] == [1, 0]
    # "One query to its output" has the seed page's own numbers, which a drawn variant replaces.
    one_query = {key: variant.pop(key) for key in list(variant) if key.startswith("one_")}
    assert (one_query["one_q"], one_query["one_K"], one_query["one_V"]) == (
        [1, 2],
        [[1, 1], [1, 2]],
        [[0, 3], [3, 1]],
    )
    assert one_query != {key: value for key, value in LESSON.variant(7).items() if key in one_query}
    assert variant == {
        "seed": None,
        "x": [1, 2],
        "Wq": [[1, 0], [1, 1]],
        "Wk": [[0, 1], [1, 0]],
        "Wv": [[2, 0], [0, 2]],
        "q": [3, 2],
        "k": [2, 1],
        "v": [2, 4],
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 17, 123456789, 2**63 - 1])
def test_a_variant_is_deterministic_small_and_computed_by_qkv(seed: int) -> None:
    variant = LESSON.variant(seed)
    assert variant == LESSON.variant(seed)
    assert json.loads(json.dumps(variant)) == variant
    assert variant["seed"] == seed
    assert all(isinstance(c, int) and -2 <= c <= 3 and c != 0 for c in variant["x"])
    for name in ("Wq", "Wk", "Wv"):
        assert np.shape(variant[name]) == (2, 2)
        assert all(isinstance(c, int) and -2 <= c <= 2 for row in variant[name] for c in row)
    Q, K, V = project_qkv([variant["x"]], variant["Wq"], variant["Wk"], variant["Wv"])
    assert (variant["q"], variant["k"], variant["v"]) == (Q[0].tolist(), K[0].tolist(), V[0].tolist())


def test_variants_differ_and_keep_mistakes_distinguishable() -> None:
    variants = [LESSON.variant(seed) for seed in range(200)]
    assert len({json.dumps({k: v for k, v in variant.items() if k != "seed"}) for variant in variants}) > 150
    for variant in variants:
        x = np.array(variant["x"])
        by_columns = [tuple(x @ np.array(variant[m]).T) for m in ("Wq", "Wk", "Wv")]
        answers = [tuple(variant[n]) for n in ("q", "k", "v")]
        assert len(set([tuple(x), *answers, *by_columns])) == 7  # typing x itself is a named mistake too
        assert all(any(answer) for answer in answers)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "3", True])
def test_invalid_seeds_are_refused_with_a_sentence(seed: object) -> None:
    with pytest.raises(LessonError) as caught:
        LESSON.variant(seed)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"A variant seed must be a whole number from 0 to 9223372036854775807 or None, "
        f"not the {type(seed).__name__} {seed!r}."
    )
    with pytest.raises(LessonError):
        LESSON.render(seed)  # type: ignore[arg-type]


def test_a_variant_is_drawn_once_per_seed_and_callers_get_their_own_copy() -> None:
    calls: list[int | None] = []
    hooks = LESSON.hooks

    def counting_variant(seed: int | None) -> dict:  # type: ignore[type-arg]
        calls.append(seed)
        assert hooks.variant_function is not None
        return hooks.variant_function(seed)

    lesson = dataclasses.replace(LESSON, hooks=dataclasses.replace(hooks, variant_function=counting_variant))
    first = lesson.variant(11)
    lesson.check("q", "[0, 0]", variant_seed=11)
    lesson.render(11)
    assert calls == [11]
    first["q"] = "changed by a caller"
    assert lesson.variant(11) == LESSON.variant(11) != first
    lesson.variant(12)
    assert calls == [11, 12]
