"""The mistake groups' records without a database: an instructor's sentence cleaned or refused with a
sentence, a message's key, and a group's "often unhelpful" rule and plain-JSON form."""

from __future__ import annotations

from datetime import datetime

import pytest

from qkv.store.instructor.mistake_group_records import MAX_SENTENCE, MistakeGroup, clean_sentence, message_key


@pytest.mark.parametrize(
    ("sentence", "error"),
    [
        (None, "The note must be text, not NoneType."),
        ("   ", "The note is empty; write one sentence that names the mistake."),
        ("x" * (MAX_SENTENCE + 1), f"The note has {MAX_SENTENCE + 1} characters"),
        ("Tab\x00here", "The note holds a control character; write plain text."),
    ],
)
def test_a_bad_note_is_refused_with_a_sentence(sentence: object, error: str) -> None:
    with pytest.raises(ValueError, match=error.replace("(", r"\(").replace(")", r"\)")):
        clean_sentence(sentence)


def test_a_note_is_kept_on_one_line_with_single_spaces() -> None:
    assert clean_sentence("  Scale by\n 1/√d_k,\tnot d_k. ") == "Scale by 1/√d_k, not d_k."
    assert clean_sentence("x" * MAX_SENTENCE) == "x" * MAX_SENTENCE


def test_a_message_key_is_the_same_for_the_same_text_only() -> None:
    assert message_key("Expected 2, got 1.") == message_key("Expected 2, got 1.")
    assert message_key("Expected 2, got 1.") != message_key("Expected 2, got 3.")
    assert len(message_key("\ud800 broken")) == 32  # a lone surrogate is keyed, not an error


def _group(unhelpful: int, marked: int, state: str | None) -> MistakeGroup:
    seen = datetime(2026, 3, 1, 9, 30, 5)
    return MistakeGroup(
        "g1", "L9.1", "shapes", "area", "c" * 32, 2, 3, seen, "Expected 6, got 5.",
        sentence="Multiply.", state=state, unhelpful=unhelpful, marked=marked,
    )  # fmt: skip


def test_a_group_is_often_unhelpful_at_half_its_marks_of_two_or_more() -> None:
    assert _group(1, 2, None).often_unhelpful
    assert not _group(1, 1, None).often_unhelpful  # one mark says too little
    assert not _group(1, 3, None).often_unhelpful


def test_a_group_s_json_shows_a_named_sentence_apart_from_a_proposal() -> None:
    named = _group(0, 0, "named").to_dict()
    assert (named["sentence"], named["proposed"], named["first_seen"]) == (
        "Multiply.",
        None,
        "2026-03-01T09:30:05Z",
    )
    proposed = _group(0, 0, "proposed").to_dict()
    assert (proposed["sentence"], proposed["proposed"]) == (None, "Multiply.")
