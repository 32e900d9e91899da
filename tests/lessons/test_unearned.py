"""What counts as giving an unearned answer away: in order, each matrix row, within the tolerance's slack."""

from __future__ import annotations

import pytest

from qkv.lessons import Exercise
from qkv.lessons.unearned import SLACK, answers_given_away


def exercise(exercise_id: str, answer: str, atol: float = 1e-3, kind: str = "numeric") -> Exercise:
    return Exercise(
        id=exercise_id, kind=kind, part="p", prompt="", prompt_template="", answer=answer, atol=atol, rtol=0
    )  # type: ignore[arg-type]


NAMES = {"w": [0.25, 0.75], "m": [[1.5, 2.5], [0.0, 0.0]], "zero": [0.0, 0.0], "one": 0.5, "shape": [8, 10]}


def given(shown: list[list[float | None]], earned: frozenset[str] = frozenset()) -> list[str]:
    exercises = [exercise(name, name) for name in NAMES]
    return [ex.id for ex in answers_given_away(exercises, NAMES, earned, shown)]


def test_a_vector_is_given_away_whole_and_in_order_only() -> None:
    assert given([[0.25, 0.75]]) == ["w"]
    assert given([[0.25, 0.1, 0.75]]) == ["w"]
    assert given([[0.75, 0.25]]) == []
    assert given([[0.25], [0.75]]) == []  # one component in each of two vectors is not the answer


def test_each_row_of_a_matrix_counts_and_rows_of_whole_numbers_and_single_numbers_do_not() -> None:
    assert given([[1.5, 2.5]]) == ["m"]
    assert given([[0.0, 0.0, 0.5]]) == []
    assert given([[7.0, 8.0, 10.0]]) == []  # the whole-number answer [8, 10] is not guarded


def test_within_the_slack_of_the_tolerance() -> None:
    inside, outside = 0.25 + 0.9 * SLACK * 1e-3, 0.25 + 1.1 * SLACK * 1e-3
    assert given([[inside, 0.75]]) == ["w"]
    assert given([[outside, 0.75]]) == []


def test_earned_answers_and_numbers_that_cannot_show_are_not_guarded() -> None:
    assert given([[0.25, 0.75]], earned=frozenset({"w"})) == []
    assert given([[None, 0.25, float("inf"), 0.75]]) == ["w"]
    assert given([[None, 0.75]]) == []


def test_other_kinds_and_missing_names_are_skipped() -> None:
    letter = exercise("w", "w", kind="letter")
    assert answers_given_away([letter, exercise("x", "absent")], NAMES, set(), [[0.25, 0.75]]) == []


@pytest.mark.content
def test_the_explorers_own_numbers_give_no_lesson_answer_away_in_any_variant() -> None:
    """The chapter reference's worked example, which the explorer opens with on every page, is never
    held back: its steps are no answer of any lesson, in the printed variant or in 60 drawn ones."""
    import numpy as np

    from qkv import attention, attention_scores
    from tests import lesson_contract as contract

    q, K, V = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]
    output, weights = attention(q, K, V, return_weights=True)
    first_only = attention(q, K, V, mask=np.array([[True, False]]))
    shown = [
        attention_scores(q, K, scale=1.0)[0],
        attention_scores(q, K)[0],
        weights[0],
        output[0],
        first_only[0],
    ]
    for lesson in contract.catalog().lessons:
        for seed in [None, *range(1, 61)]:
            given = lesson.answers_given_away([list(v) for v in shown], variant_seed=seed, earned=set())
            assert given == [], (lesson.id, seed, [ex.id for ex in given])
