"""Lesson L4.2 as shipped: every number on its page against qkv, its variants, its feedback and its widget."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from qkv import attention_scores, softmax
from qkv.lessons import RenderedSection, load_catalog
from qkv.lessons.answers import format_value
from qkv.lessons.markup import fill
from tests.lesson_pages import (
    assert_named_mistakes_told_apart,
    rounded,
    text_of,
    typed,
    widget_config,
    written_forms,
)

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.2")
STARTER = """import numpy as np

def dot_scores(Q, K):
    pass

def scaled_scores(Q, K):
    pass

def score_spread(d_k):
    pass
"""
NUMERIC = ("raw", "scaled", "second", "growth")


def page(seed: int | None = None) -> dict[str, RenderedSection]:
    return {section.id: section for section in LESSON.render(seed)}


def test_identity_place_and_goal() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.2", "Scaled dot-product scores", "L4")
    assert LESSON.place == f"L4.2 · lesson 2 of {len(LESSON.chapter.lesson_ids)}"
    assert LESSON.goal == "Score every query against every key, and know why the scores are divided by √d_k."
    assert "L4.2" in [lesson.id for lesson in CATALOG.lessons]


def test_sections_parts_and_exercises_in_page_order() -> None:
    # Predict first comes before the idea, which states its answer (the spreads at 4, 64 and 256).
    assert [s.id for s in LESSON.render()] == ["predict", "idea", "part1", "part2", "quiz", "reference"]
    assert [(p.id, p.counts_toward_done, p.changes_with_variant) for p in LESSON.parts] == [
        ("predict", False, False),
        ("part1", True, True),
        ("part2", True, False),
        ("quiz", True, False),
    ]
    kinds = [(ex.id, ex.kind, ex.part) for ex in LESSON.exercises.values()]
    assert kinds == [
        ("guess", "choice", "predict"),
        ("raw", "numeric", "part1"),
        ("scaled", "numeric", "part1"),
        ("second", "numeric", "part1"),
        ("growth", "numeric", "part1"),
        ("under-root", "letter", "part1"),
        ("functions", "code", "part2"),
        ("quiz", "choice", "quiz"),
        ("order", "choice", "quiz"),
    ]


def test_the_idea_table_and_the_spreads_it_quotes_come_from_qkv() -> None:
    idea = text_of(page()["idea"].html)
    raw = attention_scores([[1, 0], [0, 2]], [[1, 0], [0, 1]], scale=1.0)  # (2, 2)
    rows = re.findall(r"query q\S+=\[(\S+),(\S+)\]\s+(\S+)\s+(\S+)", idea)
    assert [[float(a), float(b)] for a, b, _, _ in rows] == [[1, 0], [0, 2]]
    assert [[float(c), float(d)] for _, _, c, d in rows] == raw.tolist()
    spreads = re.search(r"about (\d+) at dk=(\d+), (\d+) at dk=(\d+), (\d+) at dk=(\d+)", idea)
    assert spreads, idea
    numbers = [int(n) for n in spreads.groups()]
    for spread, d_k in zip(numbers[::2], numbers[1::2], strict=True):
        assert spread == math.sqrt(d_k)
    assert "S = Q @ K.T / np.sqrt(Q.shape[-1])  # (n_q, n_k): row i holds query i's scores" in idea
    assert "score, normalise, average" in idea


SEED = LESSON.variant(None)
SEED_NAMES = LESSON.hooks.namespace(SEED)


def test_the_seed_pages_numbers_come_from_qkv() -> None:
    Q = [SEED["q1"], SEED["q2"]]
    raw, scaled = attention_scores(Q, SEED["K"], scale=1.0), attention_scores(Q, SEED["K"])
    assert [SEED["raw1"], SEED["raw2"]] == raw.tolist() and [
        SEED["scaled1"],
        SEED["scaled2"],
    ] == scaled.tolist()
    assert SEED["d_k"] == len(SEED["q1"]) == 4 and SEED["root_d_k"] == 2
    assert SEED["growth"] == math.sqrt(SEED["dk_to"] / SEED["dk_from"])
    part1 = " ".join(text_of(page()["part1"].html).split())
    assert f"The first query is q₁ = {format_value(SEED['q1'])}." in part1
    assert f"K = {format_value(SEED['K'])}" in part1
    assert f"The second query is q₂ = {format_value(SEED['q2'])}" in part1
    assert f"d_k goes from {SEED['dk_from']} to {SEED['dk_to']}" in part1
    # Typed the way a learner rounds them, the seed page's answers are accepted.
    for exercise_id in NUMERIC:
        answer = SEED[LESSON.exercises[exercise_id].answer]
        assert LESSON.check(exercise_id, rounded(answer, 4)).correct, (exercise_id, answer)
    for letter in ("b", "d_k"):
        assert LESSON.check("under-root", letter).correct


def test_the_seed_page_is_not_the_ideas_table() -> None:
    """The idea's table scores q₁ = [1, 0] and q₂ = [0, 2] against K = I; Part 1 has numbers of its own."""
    assert (SEED["q1"], SEED["q2"], SEED["K"]) != ([1, 0], [0, 2], [[1, 0], [0, 1]])
    idea = attention_scores([[1, 0], [0, 2]], [[1, 0], [0, 1]], scale=1.0).tolist()
    assert not {str(row) for row in idea} & {str(SEED[key]) for key in ("raw1", "raw2", "scaled1", "scaled2")}


@pytest.mark.parametrize("exercise_id", NUMERIC)
def test_the_seed_pages_answer_and_named_mistakes_all_differ(exercise_id: str) -> None:
    """What lesson.py's _distinguishable checks for drawn variants holds for the seed page too: with a
    symmetric Q Kᵀ a learner who computes K Qᵀ would be marked right, and the column mistakes never named."""
    assert_named_mistakes_told_apart(LESSON, exercise_id)
    raw = attention_scores([SEED["q1"], SEED["q2"]], SEED["K"], scale=1.0)
    assert not np.allclose(raw, raw.T)  # Q Kᵀ is not symmetric, so K Qᵀ is wrong


@pytest.mark.parametrize("seed", [None, *range(1, 120, 7)])
def test_no_part1_answer_is_on_the_page_before_it_is_answered(seed: int | None) -> None:
    variant = LESSON.variant(seed)
    rendered = "".join(section.html for section in LESSON.render(seed))
    text = " ".join(text_of(rendered).split())
    for exercise_id in ("raw", "scaled", "second"):  # the factor is a small whole number, shown everywhere
        for form in written_forms(variant[LESSON.exercises[exercise_id].answer]):
            assert form not in text, (seed, exercise_id, form)


@pytest.mark.parametrize(
    ("exercise_id", "key", "words"),
    [
        ("raw", "raw2", "scores of the second query"),
        ("raw", "raw_column1", "a column of Q Kᵀ"),
        ("raw", "scaled1", "already divided by √d_k"),
        ("scaled", "raw1", "unscaled"),
        ("scaled", "by_dk1", "divided by d_k"),
        ("scaled", "times_root1", "multiplied by √d_k"),
        ("scaled", "by_idea_root1", "You divided by √2, as if d_k were 2"),
        ("scaled", "column1", "a column of S"),
        ("second", "raw2", "not yet divided"),
        ("second", "by_dk2", "divided by d_k"),
        ("second", "by_idea_root2", "You divided by √2, as if d_k were 2"),
        ("second", "column2", "roles of query and key are swapped"),
        ("second", "scaled1", "q₁'s scaled scores"),
        ("growth", "growth_linear", "variance"),
        ("growth", "growth_new_spread", "the spread itself at d_k = 64, √64"),
    ],
)
def test_the_seed_pages_named_mistakes(exercise_id: str, key: str, words: str) -> None:
    feedback = LESSON.check(exercise_id, rounded(SEED_NAMES[key], 4))
    assert not feedback.correct and feedback.counted_as_attempt
    assert words in feedback.message, feedback.message
    assert "not by d_k" not in feedback.message  # no hint blames a slip the answer does not show


@pytest.mark.parametrize("seed", [None, 1, 7, 23])
@pytest.mark.parametrize(("exercise_id", "raw"), [("scaled", "raw1"), ("second", "raw2")])
def test_dividing_by_root_2_is_named_as_that_slip(exercise_id: str, raw: str, seed: int | None) -> None:
    """√2 is the worked example's scale (d_k = 2); Part 1 has d_k = 4, where it is a slip of its own."""
    variant = LESSON.variant(seed)
    assert variant["d_k"] != 2
    for decimals in (2, 3):
        typed = rounded([value / 2**0.5 for value in variant[raw]], decimals)
        feedback = LESSON.check(exercise_id, typed, variant_seed=seed)
        assert (feedback.correct, feedback.counted_as_attempt) == (False, True)
        assert feedback.message.startswith("You divided by √2, as if d_k were 2"), feedback.message
        assert f"Here d_k = {variant['d_k']}" in feedback.message


@pytest.mark.parametrize(
    ("answer", "words"),
    [("A", "Not d_model"), ("c", "Not d_v"), ("n", "Not n.")],
)
def test_the_under_root_letters_are_named(answer: str, words: str) -> None:
    feedback = LESSON.check("under-root", answer)
    assert not feedback.correct and words in feedback.message


def test_typing_the_new_spread_for_the_factor_is_named_apart_from_the_variance() -> None:
    """8 (√64, the spread at the new size) is not the factor 2, and not the variance's factor 4 either."""
    assert (SEED["dk_from"], SEED["dk_to"]) == (16, 64)
    spread = LESSON.check("growth", "8")
    variance = LESSON.check("growth", "4")
    assert (spread.mistake, variance.mistake) == ("growth_new_spread", "growth_linear")
    assert spread.message != variance.message


@pytest.mark.parametrize("seed", range(0, 400, 3))
def test_no_variant_asks_for_a_factor_that_a_slip_gives_too(seed: int) -> None:
    """16 → 256 would make √256 = 16 equal to the variance's factor 16: such pairs are never drawn."""
    names = LESSON.hooks.namespace(LESSON.variant(seed))
    factors = [names["growth"], names["growth_linear"], names["growth_new_spread"]]
    assert len({round(f, 2) for f in factors}) == 3, (seed, factors)
    for key in ("growth_linear", "growth_new_spread"):
        assert LESSON.check("growth", typed(names[key]), seed).mistake == key


def _mistake_keys(exercise_id: str, names: dict[str, object]) -> list[str]:
    return [key for key in LESSON.exercises[exercise_id].mistakes if key in names]


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_every_variant_tells_each_answer_and_mistake_apart(seed: int) -> None:
    variant = LESSON.variant(seed)
    assert variant["d_k"] == 4 and np.shape(variant["K"]) == (2, 4)
    Q = [variant["q1"], variant["q2"]]
    raw = attention_scores(Q, variant["K"], scale=1.0)
    assert [variant["raw1"], variant["raw2"]] == raw.tolist()
    assert [variant["scaled1"], variant["scaled2"]] == (raw / 2).tolist()
    assert variant["growth"] == math.sqrt(variant["dk_to"] / variant["dk_from"]) in (2, 4)
    for exercise_id in NUMERIC:
        exercise = LESSON.exercises[exercise_id]
        assert LESSON.check(exercise_id, typed(variant[exercise.answer]), seed).correct
        keys = _mistake_keys(exercise_id, variant)
        wrong = {key: LESSON.check(exercise_id, typed(variant[key]), seed) for key in keys}
        for key, feedback in wrong.items():
            assert not feedback.correct, (exercise_id, key)
            assert feedback.message == fill(exercise.mistakes[key], variant), (exercise_id, key)
    # Mistakes computed by wrong_answers() are named too (they are not in the variant itself).
    hooks = {
        "scaled": ("by_dk1", (raw[0] / 4).tolist()),
        "second": ("column2", (raw[:, 1] / 2).tolist()),
        "raw": ("raw_column1", raw[:, 0].tolist()),
        "growth": ("growth_linear", variant["dk_to"] / variant["dk_from"]),
    }
    hooks_more = {
        "raw": ("raw2", raw[1].tolist()),
        "growth": ("growth_new_spread", math.sqrt(variant["dk_to"])),
    }
    for exercise_id, (key, value) in hooks_more.items():
        feedback = LESSON.check(exercise_id, typed(value), seed)
        assert feedback.message == fill(LESSON.exercises[exercise_id].mistakes[key], variant), exercise_id
    for exercise_id, (key, value) in hooks.items():
        feedback = LESSON.check(exercise_id, typed(value), seed)
        assert feedback.message == fill(LESSON.exercises[exercise_id].mistakes[key], variant), exercise_id


def test_a_variant_changes_the_numbers_on_the_page() -> None:
    variant = LESSON.variant(11)
    part1 = text_of(page(11)["part1"].html)
    q1 = "[" + ", ".join(str(c) for c in variant["q1"]) + "]"
    assert f"The first query is q₁ = {q1}." in part1
    assert f"d_k goes from {variant['dk_from']} to {variant['dk_to']}" in part1
    assert "here dk=4, so every score is divided by\ndk=2." in part1


def test_the_code_exercise() -> None:
    code = LESSON.exercises["functions"]
    assert code.starter_code == STARTER
    assert code.functions == ("dot_scores", "scaled_scores", "score_spread")
    part2 = text_of(page()["part2"].html)
    for spec in (
        "the raw scores Q Kᵀ as a NumPy array of shape (n_q, n_k)",
        "naming both sizes, when Q and K have different numbers of columns",
        "where d_k is read from the arrays",
        "standard-normal components",
    ):
        assert spec in part2.replace("\n", " ")


def test_choices_teach_and_the_right_ones_are_true() -> None:
    assert LESSON.check("guess", "B").correct and not LESSON.check("guess", "A").correct
    assert math.sqrt(256 / 4) == 8
    assert LESSON.check("quiz", "C").correct
    assert math.sqrt(256) / math.sqrt(16) == 4
    assert LESSON.check("order", "A").correct
    assert attention_scores([[1, 1, 1, 1]], [[1.5, 1.5, 1.5, 1.5], [0.5] * 4, [-1] * 4]).tolist() == [
        [3, 1, -2]
    ]
    for exercise in (LESSON.exercises[name] for name in ("guess", "quiz", "order")):
        right = next(choice for choice in exercise.choices if choice.letter == exercise.answer)
        for choice in exercise.choices:
            assert (choice.feedback and choice.feedback != right.feedback) or choice is right
            # No wrong choice's explanation gives away the right choice's letter.
            assert (
                f" {exercise.answer})" not in choice.feedback
                and f"({exercise.answer})" not in choice.feedback
            )


def test_the_widget_numbers_are_qkvs_and_show_what_the_page_claims() -> None:
    predict = page()["predict"].html
    config = widget_config(predict, "score-spread")
    assert (config["keys"], config["queries"]) == (48, 16)
    rows = config["rows"]
    assert [row["d_k"] for row in rows] == [4, 16, 64, 256, 512]
    for row in rows:
        rng = np.random.default_rng([0, row["d_k"]])
        Q, K = rng.standard_normal((16, row["d_k"])), rng.standard_normal((48, row["d_k"]))
        raw, scaled = attention_scores(Q, K, scale=1.0), attention_scores(Q, K)
        assert np.allclose(row["raw"], raw[0], atol=1e-4) and np.allclose(row["scaled"], scaled[0], atol=1e-4)
        assert np.allclose(row["raw_weights"], softmax(raw[0]), atol=1e-4)
        assert np.allclose(row["scaled_weights"], softmax(scaled[0]), atol=1e-4)
        assert math.isclose(row["raw_spread"], raw.std(), abs_tol=1e-4)
        # What the page says: raw scores spread like √d_k, scaled ones like 1.
        assert 0.8 < row["raw_spread"] / math.sqrt(row["d_k"]) < 1.2
        assert 0.8 < row["scaled_spread"] < 1.2
    assert max(rows[-1]["raw_weights"]) > 0.95 > 0.5 > max(rows[-1]["scaled_weights"])
    fallback = text_of(predict)
    assert "16 random queries against 48 random keys" in fallback
    assert "d_k√d_kspread of raw scores" in fallback
    # Nothing in the page before the choice gives the predicted factor away.
    assert predict.index('data-exercise-id="guess"') < predict.index('data-widget="score-spread"')


def test_predict_first_asks_before_the_idea_answers() -> None:
    """The idea gives the spread at d_k = 4, 64 and 256; the guess must come first and not say it."""
    rendered = "".join(section.html for section in LESSON.render())
    assert rendered.index('data-exercise-id="guess"') < rendered.index('id="idea"')
    predict = page()["predict"].html
    question = " ".join(text_of(predict.split("<form")[0]).split()) + " " + LESSON.exercises["guess"].prompt
    assert "Make a guess before you read on" in question
    for giveaway in ("√", "square root", "8 times", "standard deviation", "variance"):
        assert giveaway not in question, giveaway


@pytest.mark.parametrize(("exercise_id", "symbol"), [("raw", "r₁"), ("scaled", "s₁"), ("second", "s₂")])
def test_right_numbers_in_reverse_order_are_told_with_the_prompts_symbol(
    exercise_id: str, symbol: str
) -> None:
    exercise = LESSON.exercises[exercise_id]
    assert f"{symbol}" in exercise.prompt
    feedback = LESSON.check(exercise_id, typed(SEED[exercise.answer][::-1]))
    assert not feedback.correct
    assert f"Write {symbol}[0] first, then {symbol}[1]." in feedback.message, feedback.message
