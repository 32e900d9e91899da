"""Feedback names the mistake it matched by its id, for the store and the instructor's counts."""

from __future__ import annotations

from qkv.lessons.feedback import check_answer
from qkv.lessons.model import Choice, Exercise, Feedback


def _exercise(**fields: object) -> Exercise:
    return Exercise(id="ex", part="p", prompt="", prompt_template="", **fields)  # type: ignore[arg-type]


def test_a_numeric_answer_carries_the_key_of_the_mistake_it_matched() -> None:
    ex = _exercise(kind="numeric", answer="q", mistakes={"q_cols": "By columns.", "q_swap": "Swapped."})
    names = {"q": [3, 2], "q_cols": [1, 3], "q_swap": [2, 3]}
    assert check_answer(ex, "[1, 3]", names).mistake == "q_cols"
    assert check_answer(ex, "2, 3", names).mistake == "q_swap"
    for unmatched in ("[3, 2]", "[9, 9]", "[3, 9]", "9"):  # right, wrong, half right, unreadable
        assert check_answer(ex, unmatched, names).mistake is None


def test_a_letter_answer_carries_the_letter_when_the_lesson_names_it() -> None:
    ex = _exercise(kind="letter", answer="V", options={"Q": (), "K": (), "V": ()}, mistakes={"Q": "Not Q."})
    assert check_answer(ex, "q", {}).mistake == "Q"
    assert check_answer(ex, "K", {}).mistake is None  # wrong, but no named mistake
    assert check_answer(ex, "V", {}).mistake is None


def test_a_wrong_choice_is_its_own_named_mistake() -> None:
    choices = (Choice("A", "one", True, "Yes."), Choice("B", "two", False, "No: two."))
    ex = _exercise(kind="choice", answer="A", choices=choices)
    assert check_answer(ex, "B", {}).mistake == "B"
    assert check_answer(ex, "A", {}).mistake is None


def test_the_mistake_id_is_bookkeeping_not_part_of_the_verdict() -> None:
    assert Feedback(False, "Swapped.", True, mistake="q_swap") == Feedback(False, "Swapped.", True)
    assert "mistake" not in Feedback(False, "Swapped.", True, mistake="q_swap").to_dict()
