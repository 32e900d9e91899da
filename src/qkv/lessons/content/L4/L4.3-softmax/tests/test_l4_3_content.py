"""Lesson L4.3 as shipped: every number on its page against qkv, its variants, its feedback and its widget."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from qkv import attention, attention_scores, softmax
from qkv.lessons import RenderedSection, load_catalog
from qkv.lessons.answers import format_value
from qkv.lessons.markup import fill
from tests.lesson_contract import grading_module
from tests.lesson_pages import (
    assert_named_mistakes_told_apart,
    rounded,
    text_of,
    typed,
    widget_config,
    written_forms,
)

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.3")
GRADING = grading_module(LESSON)
WRONG_AXIS = GRADING.WRONG_AXIS
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
    assert LESSON.place == f"L4.3 · lesson 3 of {len(LESSON.chapter.lesson_ids)}"
    assert LESSON.goal == (
        "Turn a row of scores into weights that are positive and sum to 1, safely, and average the values "
        "with them."
    )


def test_sections_parts_and_exercises_in_page_order() -> None:
    # Predict first comes before the idea, which states its answer ("Shifting is free").
    assert [s.id for s in LESSON.render()] == ["predict", "idea", "part1", "part2", "quiz", "reference"]
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


SEED = LESSON.variant(None)
SEED_NAMES = LESSON.hooks.namespace(SEED)


def test_the_seed_pages_numbers_come_from_qkv() -> None:
    q, K, V = [SEED["q"]], SEED["K"], SEED["V"]
    O, A = attention(q, K, V, return_weights=True)
    scaled = attention_scores(q, K)[0]
    assert np.allclose(SEED["weights"], A[0]) and np.allclose(SEED["output"], O[0])
    assert np.allclose(SEED["shifted"], scaled + SEED["shift"])
    assert np.allclose(SEED["shifted_weights"], A[0], atol=1e-12)
    assert np.allclose(SEED["sharper"], scaled * SEED["factor"])
    assert np.allclose(SEED["sharper_weights"], softmax(scaled * SEED["factor"]))
    # Typed the way a learner rounds them (four decimals), the seed page's answers are accepted.
    for exercise_id in NUMERIC:
        answer = SEED[LESSON.exercises[exercise_id].answer]
        assert LESSON.check(exercise_id, rounded(answer, 4)).correct, (exercise_id, answer)


def test_the_seed_page_is_not_the_worked_example_the_page_illustrates_with() -> None:
    """Part 1's default numbers are not the chapter's worked example, which the idea, the predict-first
    question and the chapter reference all show with its weights and output."""
    output, weights = attention([[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]], return_weights=True)
    assert (SEED["q"], SEED["K"]) != ([1, 0], [[1, 0], [0, 1]])
    assert not np.allclose(SEED["weights"], weights[0], atol=0.01)
    assert not np.allclose(SEED["output"], output[0], atol=0.01)
    assert SEED["shift"] != 10  # the predict-first question adds 10


@pytest.mark.parametrize("exercise_id", NUMERIC)
def test_the_seed_pages_answer_and_named_mistakes_all_differ(exercise_id: str) -> None:
    """What lesson.py's _distinguishable checks for drawn variants holds for the seed page too."""
    assert_named_mistakes_told_apart(LESSON, exercise_id)


@pytest.mark.parametrize("seed", [None, *range(1, 120, 7)])
def test_no_part1_answer_is_on_the_page_before_it_is_answered(seed: int | None) -> None:
    variant = LESSON.variant(seed)
    rendered = "".join(section.html for section in LESSON.render(seed))
    text = " ".join(text_of(rendered).split())
    for exercise_id in NUMERIC:
        answer = variant[LESSON.exercises[exercise_id].answer]
        for form in written_forms(answer):
            assert form not in text, (seed, exercise_id, form)
        for number in np.atleast_1d(answer):  # nor in an attribute (a widget's JSON)
            assert round(number, 2) == number or repr(float(number)) not in rendered, (exercise_id, number)


@pytest.mark.parametrize(
    ("exercise_id", "key", "words"),
    [
        ("weights", "unscaled", "skipped the division by √d_k"),
        ("weights", "scaled", "Scores are not yet weights"),
        ("weights", "raw", "raw scores q·k"),
        ("weights", "no_exp", "without exponentiating them first"),
        ("weights", "exp_only", "do not sum to 1"),
        ("output", "weights", "weighted sum of the rows of V"),
        ("output", "output_keys", "You averaged the keys"),
        ("output", "output_unscaled", "unscaled weights"),
        ("output", "output_mean", "plain mean"),
        ("output", "output_scores", "Scores are not yet weights"),
        ("shifted", "shift_no_exp", "without exponentiating"),
        ("shifted", "shift_exp_only", "do not sum to 1"),
        ("shifted", "shifted", "not weights"),
        ("sharper", "weights", "wider gap gives sharper weights"),
        ("sharper", "weights_scaled_up", "multiplied the weights"),
        ("sharper", "sharper_no_exp", "without exponentiating"),
        ("sharper", "sharper", "not weights"),
    ],
)
def test_the_seed_pages_named_mistakes(exercise_id: str, key: str, words: str) -> None:
    feedback = LESSON.check(exercise_id, rounded(SEED_NAMES[key], 6))
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
    assert f"Add {variant['shift']} to both of your scaled scores" in part1
    # Questions 3 and 4 build on question 1's scaled scores without printing them (or the shifted and
    # multiplied rows, from which they follow): question 1 is not answered on the page.
    for name in ("shifted", "sharper"):
        assert format_value(variant[name]) not in part1


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


def test_the_widget_numbers_are_qkvs() -> None:
    predict = page()["predict"].html
    config = widget_config(predict, "softmax-bars")
    scores = np.array([0.707107, 0.0, -0.5])
    V = np.array([[2, 0], [0, 2], [1, 1]])
    assert np.allclose(config["weights"], softmax(scores))
    assert np.allclose(config["output"], softmax(scores) @ V)
    assert np.allclose(config["shifted_weights"], softmax(scores + 1000))
    assert config["plain_shifted"] == ["nan", "nan", "nan"]
    fallback = text_of(predict)
    assert "output = [1.282865, 0.717135]" in fallback
    assert "the plain formula gives [nan, nan, nan]" in fallback
    assert predict.index('data-exercise-id="guess"') < predict.index('data-widget="softmax-bars"')


def test_predict_first_asks_before_the_idea_answers() -> None:
    """The idea says that shifting every score changes nothing; the guess must come first and not say so."""
    rendered = "".join(section.html for section in LESSON.render())
    assert rendered.index('data-exercise-id="guess"') < rendered.index('id="idea"')
    predict = page()["predict"].html
    question = " ".join(text_of(predict.split("<form")[0]).split()) + " " + LESSON.exercises["guess"].prompt
    assert "Make a guess before you read on" in question
    for giveaway in ("unchanged", "cancel", "not change", "Shifting is free", "the same weights", "e^c"):
        assert giveaway not in question, giveaway


@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_wrong_axis_in_attention_weights_is_named_on_every_failed_test(grader) -> None:  # type: ignore[no-untyped-def]
    """softmax right, attention_weights normalised down each column and without the maximum: each failed
    test of attention_weights and attend names the axis, the one with scores in the thousands (NaN) too."""
    path = Path(__file__).parents[1] / "corpus/functions/wrong/weights_axis_zero.py"
    code = CATALOG.code_exercise("L4.3/functions")
    for seed in (1, 7):
        result = grader.grade(path.read_text(), code.suite, seed=seed)
        failing = [test for test in result.tests if test.status != "pass"]
        # attend has no checks of its own either: its two "raises ValueError" tests name those.
        unchecked = [test for test in failing if " raises ValueError " in test.name]
        assert [test.hint for test in unchecked] == [GRADING.MISSING_KV_CHECK, GRADING.MISSING_QK_CHECK]
        failing = [test for test in failing if test not in unchecked]
        assert {test.name.split(" ")[0] for test in failing} == {"attention_weights", "attend"}
        assert all(test.hint == WRONG_AXIS for test in failing), [(t.name, t.hint) for t in failing]


@pytest.mark.parametrize(
    ("exercise_id", "symbol"), [("weights", "w"), ("output", "o"), ("shifted", "w′"), ("sharper", "w″")]
)
def test_right_numbers_in_reverse_order_are_told_with_the_prompts_symbol(
    exercise_id: str, symbol: str
) -> None:
    exercise = LESSON.exercises[exercise_id]
    assert f"{symbol} " in exercise.prompt + " " and f"{symbol} =" in exercise.label
    feedback = LESSON.check(exercise_id, typed(SEED[exercise.answer][::-1]))
    assert not feedback.correct
    assert f"Write {symbol}[0] first, then {symbol}[1]." in feedback.message, feedback.message


def test_lesson_py_knows_the_numbers_the_page_illustrates_with() -> None:
    """_distinguishable keeps Part 1 away from the widget's and the worked example's numbers: those must be
    the ones the page really shows."""
    module = LESSON.hooks.variant_function.__globals__  # type: ignore[union-attr]
    config = widget_config(page()["predict"].html, "softmax-bars")
    assert module["WIDGET"] == {"scores": config["scores"], "V": config["V"]}
    assert module["WORKED"] == {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
    idea = text_of(page()["idea"].html)
    for number in module["shown_elsewhere"]()[:4]:  # the worked example's weights and output
        assert f"{number:.6f}" in idea
