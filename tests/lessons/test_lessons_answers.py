"""Reading typed answers: every accepted spelling, and the edge cases that must not crash or be slow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qkv.lessons.answers import (
    MAX_ANSWER_CHARS,
    AnswerFormatError,
    format_value,
    parse_letter,
    parse_numbers,
)

LETTERS = {"Q": ["query", "queries"], "K": ["key", "keys"], "V": ["value", "values"]}


@pytest.mark.parametrize(
    "text",
    [
        "[3, 2]",
        "3, 2",
        "3 2",
        "(3,2)",
        "  [3, 2]  ",
        "[[3, 2]]",
        "((3, 2))",
        "3;2",
        "q = [3, 2]",
        "[3,2,]",
        "6/2, 4/2",
    ],
)
def test_every_accepted_spelling_of_a_vector(text: str) -> None:
    assert parse_numbers(text) == [3.0, 2.0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u22121, 2", [-1.0, 2.0]),  # Unicode minus, as copied from the page
        ("\u20131 \u22122", [-1.0, -2.0]),  # en dash
        ("1/2", [0.5]),
        ("-1/4, .5", [-0.25, 0.5]),
        ("1e-3 2E2", [0.001, 200.0]),
        ("+3", [3.0]),
    ],
)
def test_signs_fractions_and_exponents(text: str, expected: list[float]) -> None:
    assert parse_numbers(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The answer is empty; type the numbers, for example [0.5, -1]."),
        ("   ", "The answer is empty; type the numbers, for example [0.5, -1]."),
        ("[]", "The answer is empty; type the numbers, for example [0.5, -1]."),
        ("[3, two]", "I could not read 'two' as a number; type numbers such as 3, -1.5 or 1/2."),
        (
            "nan, 1",
            "'nan' is not an answer these boxes take: every answer here is a finite number, such as 0, -1.5 or 1/2.",
        ),
        (
            "[NaN, NaN]",
            "'NaN' is not an answer these boxes take: every answer here is a finite number, such as 0, -1.5 or 1/2.",
        ),
        (
            "inf 1",
            "'inf' is not an answer these boxes take: every answer here is a finite number, such as 0, -1.5 or 1/2.",
        ),
        (
            "-∞",
            "'-∞' is not an answer these boxes take: every answer here is a finite number, such as 0, -1.5 or 1/2.",
        ),
        ("1/0", "The fraction '1/0' divides by zero."),
        ("1/2/3", "I could not read '1/2/3' as a number; type numbers such as 3, -1.5 or 1/2."),
        ("1e999", "The number '1e999' is too large to be an answer here."),
        ("3 -", "I could not read '-' as a number; type numbers such as 3, -1.5 or 1/2."),
    ],
)
def test_unreadable_answers_get_a_sentence_quoting_them(text: str, message: str) -> None:
    with pytest.raises(AnswerFormatError) as caught:
        parse_numbers(text)
    assert str(caught.value) == message


def test_a_long_token_is_quoted_shortened() -> None:
    with pytest.raises(AnswerFormatError, match=r"^I could not read 'abcdefghijklmnopqrstuvw…' as a number"):
        parse_numbers("abcdefghijklmnopqrstuvwxyz")


def test_ten_thousand_characters_are_refused_for_their_length() -> None:
    # Refused for the length, before any parsing (benchmarks/answers.py times these).
    for text in ("1, " * 3334, "[" * 10_000, "9" * 10_000, "1e" + "9" * 9_998):
        assert len(text) >= 10_000
        with pytest.raises(AnswerFormatError) as caught:
            parse_numbers(text)
        assert str(caught.value) == (
            f"Your answer is {len(text):,} characters long, but an answer here is at most "
            f"{MAX_ANSWER_CHARS} characters; type just the numbers, for example [0.5, -1]."
        )
    with pytest.raises(AnswerFormatError, match="10,000 characters long"):
        parse_letter("v" * 10_000, LETTERS)


def test_the_longest_allowed_answer_with_a_huge_exponent_is_read_as_a_float() -> None:
    # Parsing goes through float(), never Fraction or int, so 10**(10**190) is never built
    # (benchmarks/answers.py times it): too large is refused, too small reads as 0.
    assert len("1e" + "9" * (MAX_ANSWER_CHARS - 2)) == MAX_ANSWER_CHARS
    with pytest.raises(AnswerFormatError, match="too large"):
        parse_numbers("1e" + "9" * (MAX_ANSWER_CHARS - 2))
    with pytest.raises(AnswerFormatError, match="characters long"):
        parse_numbers("1e" + "9" * (MAX_ANSWER_CHARS - 1))
    assert parse_numbers("1e-" + "9" * (MAX_ANSWER_CHARS - 3)) == [0.0]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_either_read_or_refused_with_a_sentence(text: str) -> None:
    try:
        numbers = parse_numbers(text)
    except AnswerFormatError as error:
        assert str(error).endswith(".")
    else:
        assert numbers and all(isinstance(n, float) for n in numbers)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=6), st.sampled_from([", ", " ", ",", "; "]))
def test_written_vectors_read_back(values: list[int], separator: str) -> None:
    assert parse_numbers("[" + separator.join(str(v) for v in values) + "]") == [float(v) for v in values]


@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("V", "V"),
        ("v", "V"),
        ("values", "V"),
        ("Values.", "V"),
        (" value ", "V"),
        ("(k)", "K"),
        ("QUERIES", "Q"),
    ],
)
def test_letters_are_case_insensitive_and_words_count(text: str, letter: str) -> None:
    assert parse_letter(text, LETTERS) == letter


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The answer is empty; type one letter: Q, K or V."),
        ("X", "I could not read 'X' as one of Q, K or V; type a single letter."),
        ("QK", "I could not read 'QK' as one of Q, K or V; type a single letter."),
    ],
)
def test_unreadable_letters(text: str, message: str) -> None:
    with pytest.raises(AnswerFormatError) as caught:
        parse_letter(text, LETTERS)
    assert str(caught.value) == message


def test_numbers_are_written_as_the_lesson_writes_them() -> None:
    assert format_value([3.0, 2.0]) == "[3, 2]"
    assert format_value([[1, 0], [1, 1]]) == "[[1, 0], [1, 1]]"
    assert format_value([0.6697615493266569, 0.3302384506733431]) == "[0.669762, 0.330238]"
