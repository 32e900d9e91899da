"""Lesson L4.3 as shipped: every number on its page against qkv, its variants, its feedback and its widget."""

from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pytest

from lesson_pages import text_of, typed
from qkv import attention, attention_scores, softmax
from qkv.lessons import RenderedSection, load_catalog
from qkv.lessons.markup import fill

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.3")
STARTER = """import numpy as np

def softmax(S):
    pass

def attention_weights(Q, K):
    pass

def attend(Q, K, V):
    pass
"""
NUMERIC = ("weights", "output", "shifted", "sharper")


def page(seed: int | None = None) -> dict[str, RenderedSection]:
    return {section.id: section for section in LESSON.render(seed)}


def test_identity_place_and_goal() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.3", "Softmax: from scores to weights", "L4")
    assert LESSON.place == "L4.3 · lesson 3 of 6"
    assert LESSON.goal == (
        "Turn a row of scores into weights that are positive and sum to 1, safely, and average the values "
        "with them."
    )


def test_sections_parts_and_exercises_in_page_order() -> None:
    assert [s.id for s in LESSON.render()] == ["idea", "predict", "part1", "part2", "quiz", "reference"]
    assert [(p.id, p.counts_toward_done, p.changes_with_variant) for p in LESSON.parts] == [
        ("predict", False, False),
        ("part1", True, True),
        ("part2", True, False),
        ("quiz", True, False),
    ]
    assert [(ex.id, ex.kind, ex.part) for ex in LESSON.exercises.values()] == [
        ("guess", "choice", "predict"),
        ("weights", "numeric", "part1"),
        ("output", "numeric", "part1"),
        ("shifted", "numeric", "part1"),
        ("sharper", "numeric", "part1"),
        ("functions", "code", "part2"),
        ("quiz", "choice", "quiz"),
        ("underflow", "choice", "quiz"),
    ]


def test_every_number_of_the_idea_comes_from_qkv() -> None:
    idea = text_of(page()["idea"].html)
    scaled = attention_scores([[1, 0]], [[1, 0], [0, 1]])[0]
    weights = softmax(scaled)
    exps = np.exp(scaled)
    table = re.search(
        r"scaled score sj\s+(\S+)\s+(\S+)\s+esj\s+(\S+)\s+(\S+)\s+(\S+)\s+weight wj\s+(\S+)\s+(\S+)\s+(\S+)",
        idea,
    )
    assert table, idea
    numbers = [float(n) for n in table.groups()]
    assert np.allclose(numbers[:2], scaled, atol=1e-6)
    assert np.allclose(numbers[2:5], [*exps, exps.sum()], atol=1e-6)
    assert np.allclose(numbers[5:], [*weights, 1], atol=1e-6)
    output = attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]])[0]
    assert "the output\nis [1.339523,0.660477]" in idea and np.allclose(
        output, [1.339523, 0.660477], atol=1e-6
    )
    # "e^1000 is too large for a float": it overflows, and the plain formula gives NaN.
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isinf(np.exp(np.float64(1000))) and np.isnan(np.exp(1000.0) / np.exp(1000.0))
    assert "E = np.exp(S - S.max(axis=-1, keepdims=True))\nA = E / E.sum(axis=-1, keepdims=True)" in idea
    assert "Scores are not yet weights." in idea


def test_the_seed_page_is_the_worked_example() -> None:
    variant = LESSON.variant(None)
    assert np.allclose(variant["weights"], [0.669762, 0.330238], atol=1e-6)
    assert np.allclose(variant["output"], [1.339523, 0.660477], atol=1e-6)
    assert np.allclose(variant["shifted"], [10.707107, 10], atol=1e-6)
    assert np.allclose(variant["shifted_weights"], variant["weights"], atol=1e-12)
    assert np.allclose(variant["sharper"], [1.414214, 0], atol=1e-6)
    assert np.allclose(variant["sharper_weights"], [0.804430, 0.195570], atol=1e-6)
    for exercise_id, answer in (
        ("weights", "0.6698, 0.3302"),
        ("output", "1.3395, 0.6605"),
        ("shifted", "0.6698 0.3302"),
        ("sharper", "[0.8044, 0.1956]"),
    ):
        assert LESSON.check(exercise_id, answer).correct, (exercise_id, answer)


@pytest.mark.parametrize(
    ("exercise_id", "answer", "words"),
    [
        ("weights", "0.731059, 0.268941", "skipped the division by √d_k"),
        ("weights", "0.707107, 0", "Scores are not yet weights"),
        ("weights", "2.028115, 1", "do not sum to 1"),
        ("output", "1.462117, 0.537883", "unscaled weights"),
        ("output", "1, 1", "plain mean"),
        ("output", "1.414214, 0", "Scores are not yet weights"),
        ("shifted", "0.517074, 0.482926", "without exponentiating"),
        ("shifted", "10.707107, 10", "not weights"),
        ("sharper", "0.669762, 0.330238", "wider gap gives sharper weights"),
        ("sharper", "1.339523, 0.660477", "multiplied the weights"),
    ],
)
def test_the_seed_pages_named_mistakes(exercise_id: str, answer: str, words: str) -> None:
    feedback = LESSON.check(exercise_id, answer)
    assert not feedback.correct and feedback.counted_as_attempt
    assert words in feedback.message, feedback.message


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_every_variant_tells_each_answer_and_mistake_apart(seed: int) -> None:
    variant = LESSON.variant(seed)
    q, K, V = [variant["q"]], variant["K"], variant["V"]
    O, A = attention(q, K, V, return_weights=True)
    assert np.allclose(variant["weights"], A[0]) and np.allclose(variant["output"], O[0])
    assert np.allclose(variant["shifted_weights"], A[0])
    assert np.allclose(variant["sharper_weights"], softmax(np.asarray(variant["scaled"]) * variant["factor"]))
    assert all(isinstance(c, int) and -2 <= c <= 2 for row in [variant["q"], *K] for c in row)
    wrong = {
        "unscaled": softmax(attention_scores(q, K, scale=1.0)[0]),
        "output_keys": A[0] @ np.asarray(K),
        "no_exp": np.asarray(variant["scaled"]) / sum(variant["scaled"]),
    }
    for exercise_id in NUMERIC:
        exercise = LESSON.exercises[exercise_id]
        assert LESSON.check(exercise_id, typed(variant[exercise.answer]), seed).correct
        for key in exercise.mistakes:
            value = variant.get(key, wrong.get(key))
            if value is None:
                continue
            feedback = LESSON.check(exercise_id, typed(np.asarray(value).tolist()), seed)
            assert feedback.message == fill(exercise.mistakes[key], variant), (seed, exercise_id, key)


def test_a_variant_changes_the_numbers_on_the_page() -> None:
    variant = LESSON.variant(11)
    part1 = text_of(page(11)["part1"].html)
    vector = "[" + ", ".join(str(c) for c in variant["q"]) + "]"
    assert f"The query is q = {vector}" in part1
    assert f"Add {variant['shift']} to both scaled scores" in part1


def test_the_code_exercise() -> None:
    code = LESSON.exercises["functions"]
    assert code.starter_code == STARTER
    assert code.functions == ("softmax", "attention_weights", "attend")
    part2 = text_of(page()["part2"].html).replace("\n", " ")
    for spec in (
        "over the last axis; S may have any number of leading   dimensions",
        "no overflow, no warning, no NaN",
        "the weights softmax(Q Kᵀ / √d_k), shape (n_q, n_k)",
        "the tuple (O, A) of the output O = A V, shape (n_q, d_v)",
        "K and V have different numbers of rows or Q and K different numbers   of columns",
    ):
        assert spec.replace("   ", " ") in part2, spec


def test_choices_and_the_facts_behind_them() -> None:
    assert LESSON.check("guess", "C").correct and not LESSON.check("guess", "A").correct
    weights = softmax([3.0, 1.0, -2.0])
    assert LESSON.check("quiz", "B").correct
    assert (weights > 0).all() and math.isclose(weights.sum(), 1) and weights.argmax() == 0
    assert np.allclose(np.array([3, 1, -2]) / 2, [1.5, 0.5, -1])
    assert LESSON.check("underflow", "A").correct
    with np.errstate(all="ignore"):
        row = np.array([-1000.0, -1001.0]) - 5
        assert np.isnan(np.exp(row) / np.exp(row).sum()).all()
    assert np.isfinite(softmax([-1000.0, -1001.0])).all()


def widget_config(fragment: str) -> dict[str, object]:
    (raw,) = re.findall(
        r"<div class=\"widget\" data-widget=\"softmax-bars\" data-config='([^']*)'>", fragment
    )
    return json.loads(html.unescape(raw))  # type: ignore[no-any-return]


def test_the_widget_numbers_are_qkvs() -> None:
    predict = page()["predict"].html
    config = widget_config(predict)
    scores = np.array([0.707107, 0.0, -0.5])
    V = np.array([[2, 0], [0, 2], [1, 1]])
    assert np.allclose(config["weights"], softmax(scores))  # type: ignore[arg-type]
    assert np.allclose(config["output"], softmax(scores) @ V)  # type: ignore[arg-type]
    assert np.allclose(config["shifted_weights"], softmax(scores + 1000))  # type: ignore[arg-type]
    assert config["plain_shifted"] == ["nan", "nan", "nan"]
    fallback = text_of(predict)
    assert "output = [1.282865, 0.717135]" in fallback
    assert "the plain formula gives [nan, nan, nan]" in fallback
    assert predict.index('data-exercise-id="guess"') < predict.index('data-widget="softmax-bars"')
