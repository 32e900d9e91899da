"""Lesson L4.1's hand answers: every seed answer accepted, its wrong twins named, format slips not counted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.lessons import Feedback, LessonError, load_catalog

LESSON = load_catalog().lesson("L4.1")
AVERAGED_RIGHT = (
    "Correct: V. The output is a weighted sum of value vectors, so it has d_v components, as each value does."
)


@pytest.mark.parametrize(
    ("exercise", "answer", "message"),
    [
        ("q", "[3, 2]", "Correct: q = [3, 2]."),
        ("q", "3 2", "Correct: q = [3, 2]."),
        ("q", "(3,2)", "Correct: q = [3, 2]."),
        ("q", "6/2, 2", "Correct: q = [3, 2]."),
        ("q", "[3.0000000001, 2]", "Correct: q = [3, 2]."),
        ("k", "[2, 1]", "Correct: k = [2, 1]."),
        ("v", "2, 4", "Correct: v = [2, 4]."),
        ("averaged", "V", AVERAGED_RIGHT),
        ("averaged", "v", AVERAGED_RIGHT),
        ("averaged", "values", AVERAGED_RIGHT),
    ],
)
def test_seed_answers_are_accepted(exercise: str, answer: str, message: str) -> None:
    assert LESSON.check(exercise, answer) == Feedback(True, message, True)


def test_the_quiz_accepts_a_and_explains_every_choice() -> None:
    right = LESSON.check("quiz", "A")
    assert right.correct and right.counted_as_attempt
    assert right.message.startswith("Right. Keys decide where a query looks, values are what it brings back")
    assert LESSON.check("quiz", "a") == right
    for letter, start in (
        ("B", "Not quite. Write down one weight: the softmax of q·k/√d_k"),
        ("C", "Not quite. A query's score for a position is q·k/√d_k. If two positions share k"),
    ):
        feedback = LESSON.check("quiz", letter)
        assert not feedback.correct and feedback.counted_as_attempt
        assert feedback.message.startswith(start)
        assert "equal" not in feedback.message  # it teaches, but leaves the answer to the learner
    assert LESSON.check("quiz", "D") == Feedback(
        False, "I could not read 'D' as one of A, B or C; type a single letter.", False
    )


def test_the_three_questions_about_v_ask_three_different_things() -> None:
    """The guess asks what is averaged, Part 1 the output's width, the quiz what sets the weights."""
    prompts = [LESSON.exercise(e).prompt for e in ("predict", "averaged", "quiz")]
    assert "averaged" in prompts[0]
    assert "width of the output" in prompts[1] and "averaged" not in prompts[1]
    assert "same key" in prompts[2] and "averaged" not in prompts[2]
    assert "asks again" not in LESSON.check("predict", "A").message


def test_q_by_columns_is_named() -> None:
    feedback = LESSON.check("q", "[1, 3]")  # x·Wqᵀ = [1·1 + 2·0, 1·1 + 2·1]
    assert feedback == Feedback(
        False,
        "That is x·Wqᵀ: you multiplied x with the rows of Wq as if they were columns. Component j of q is "
        "x[0]·Wq[0][j] + x[1]·Wq[1][j], so read Wq down its columns.",
        True,
    )


def test_q_and_k_swapped_is_named_both_ways() -> None:
    assert LESSON.check("q", "[2, 1]").message == (
        "That is the key k = x·Wk; you swapped q and k. The query uses Wq = [[1, 0], [1, 1]]."
    )
    assert LESSON.check("k", "[3, 2]").message == (
        "That is the query q = x·Wq; you swapped q and k. The key uses Wk = [[0, 1], [1, 0]]."
    )
    assert (
        LESSON.check("v", "[3, 2]").message
        == "That is the query q = x·Wq. The value uses Wv = [[2, 0], [0, 2]]."
    )


@pytest.mark.parametrize(
    ("letter", "start"),
    [
        ("Q", "Not Q. A query is dotted with each key, so it has d_k components"),
        ("k", "Not K. A key is dotted with the query, so it has d_k components"),
    ],
)
def test_q_or_k_as_the_output_width_letter_is_explained(letter: str, start: str) -> None:
    feedback = LESSON.check("averaged", letter)
    assert not feedback.correct and feedback.counted_as_attempt
    assert feedback.message.startswith(start)
    assert feedback.message.endswith("so the output has their width, d_v.")


@pytest.mark.parametrize(
    ("exercise", "answer", "opening"),
    [
        # one component far off: a different computation, not a slip; no "Almost"
        ("q", "[3, 5]", "The first component is right, but check the second"),
        ("q", "[7, 2]", "The second component is right, but check the first"),
        ("v", "2, 3", "The first component is right, but check the second"),
        # one component a little off: a slip, "Almost"
        ("q", "[3, 2.1]", "Almost: the first component is right, but check the second"),
        ("q", "[2.9, 2]", "Almost: the second component is right, but check the first"),
    ],
)
def test_one_component_right(exercise: str, answer: str, opening: str) -> None:
    feedback = LESSON.check(exercise, answer)
    assert not feedback.correct and feedback.counted_as_attempt
    assert feedback.message.startswith(f"{opening} component.")


def test_tolerance_is_relative_and_absolute() -> None:
    assert LESSON.check("q", "[2.9999999, 2.0000001]").correct  # within rtol = 1e-6
    assert LESSON.check("q", "[3.0001, 2]").message.startswith("Almost: the second component is right")


def test_a_plain_wrong_vector_gets_the_hint() -> None:
    assert LESSON.check("k", "[5, 5]") == Feedback(
        False,
        "Not quite: [5, 5] is not k. Component j of k is x dotted with column j of Wk: "
        "k[j] = x[0]·Wk[0][j] + x[1]·Wk[1][j].",
        True,
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            "3",
            "You typed a single number (3), but q is a vector with 2 components; type both, for example [a, b].",
        ),
        (
            "5",
            "You typed a single number (5), but q is a vector with 2 components; type both, for example [a, b].",
        ),
        ("[3, 2, 1]", "q has 2 components, but you typed 3 numbers ([3, 2, 1]); type exactly 2."),
        ("", "The answer is empty; type the numbers, for example [0.5, -1]."),
        ("[3, \u22122x]", "I could not read '-2x' as a number; type numbers such as 3, -1.5 or 1/2."),
    ],
)
def test_format_slips_are_not_counted(answer: str, message: str) -> None:
    assert LESSON.check("q", answer) == Feedback(False, message, False)


def test_unicode_minus_and_extra_brackets_in_a_variant() -> None:
    seed = next(s for s in range(100) if any(c < 0 for c in LESSON.variant(s)["q"]))
    q = LESSON.variant(seed)["q"]
    typed = "[[" + ", ".join(str(c).replace("-", "\u2212") for c in q) + "]]"
    assert LESSON.check("q", typed, variant_seed=seed).correct


def test_answers_are_checked_against_the_variant_seen() -> None:
    variant = LESSON.variant(7)
    for name in ("q", "k", "v"):
        typed = ", ".join(str(c) for c in variant[name])
        assert LESSON.check(name, typed, variant_seed=7).correct
    assert not LESSON.check("q", "[3, 2]", variant_seed=7).correct


def test_misconceptions_are_named_in_every_variant() -> None:
    import numpy as np

    for seed in range(25):
        variant = LESSON.variant(seed)
        x = np.array(variant["x"])
        by_columns = (x @ np.array(variant["Wq"]).T).tolist()
        assert LESSON.check("q", str(by_columns), seed).message.startswith("That is x·Wqᵀ")
        assert LESSON.check("q", str(variant["k"]), seed).message.startswith("That is the key k")
        assert LESSON.check("k", str(variant["q"]), seed).message.startswith("That is the query q")


def test_errors_for_unknown_exercises_code_exercises_and_bad_seeds() -> None:
    with pytest.raises(LessonError) as unknown:
        LESSON.check("z", "1")
    assert str(unknown.value) == (
        "Lesson L4.1 has no exercise 'z'; its exercises are predict, q, k, v, averaged, scores, weights, "
        "output, functions, quiz, doubled, shifted."
    )
    with pytest.raises(
        LessonError,
        match=r"^The exercise 'functions' is a code exercise; the grader runs its tests on a program, so it",
    ):
        LESSON.check("functions", "def f(): pass")
    with pytest.raises(
        LessonError, match=r"^A variant seed must be a whole number from 0 to 9223372036854775807"
    ):
        LESSON.check("q", "1, 2", variant_seed=-1)  # type: ignore[arg-type]
    with pytest.raises(LessonError, match=r"^An answer must be text \(a str\), not the int 3\."):
        LESSON.check("q", 3)  # type: ignore[arg-type]


def test_feedback_is_plain_json() -> None:
    assert LESSON.check("q", "").to_dict() == {
        "correct": False,
        "message": "The answer is empty; type the numbers, for example [0.5, -1].",
        "counted_as_attempt": False,
    }


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["q", "k", "v", "averaged", "quiz"]),
    st.text(max_size=250),
    st.one_of(st.none(), st.integers(0, 2**63 - 1)),
)
def test_any_typed_text_gets_feedback_never_an_exception(
    exercise: str, answer: str, seed: int | None
) -> None:
    feedback = LESSON.check(exercise, answer, variant_seed=seed)
    assert isinstance(feedback, Feedback) and feedback.message
    assert not (feedback.correct and not feedback.counted_as_attempt)


def test_a_single_number_for_a_longer_vector_asks_for_every_component() -> None:
    from qkv.lessons.feedback import _length_message

    assert _length_message("o", [1.0], 3) == (
        "You typed a single number (1), but o is a vector with 3 components; type all 3, for example [a, b, c]."
    )


def test_reversed_components_are_named_without_giving_the_answer_away() -> None:
    feedback = LESSON.check("q", "[2, 3]")  # q = [3, 2] written backwards
    assert feedback == Feedback(
        False,
        "Close: those are the right numbers, but in reverse order. Write q[0] first, then q[1]. "
        "Component j of q is x dotted with column j of Wq: q[j] = x[0]·Wq[0][j] + x[1]·Wq[1][j].",
        True,
    )
    assert "[3, 2]" not in feedback.message
    assert LESSON.check("v", "[4, 2]").message.startswith("Close: those are the right numbers")
    # A named mistake that happens to be the reversed answer keeps its own, more specific message:
    # in variant 17, k = [0, -6] and reading Wk by columns gives [-6, 0].
    variant = LESSON.variant(17)
    assert variant["k"] == [0, -6]
    assert LESSON.check("k", "[-6, 0]", variant_seed=17).message.startswith("That is x·Wkᵀ")
