"""A class's mistakes in the store, on SQLite and PostgreSQL: groups per course, notes, notes shown, marks,
and a learner's erasure taking their rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from qkv.store import EVERYONE, LearnerScope, MembershipSource, Store
from qkv.store.instructor.mistake_groups import MAX_MARKS

A, B, C, LONER = "a" * 36, "b" * 36, "c" * 36, "d" * 36


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


def _failed(signature: str, message: str = "Expected 6, got 5.") -> dict[str, Any]:
    return {
        "status": "fail",
        "signatures": {"area": signature * 32},
        "tests": [{"function": "area", "status": "fail", "message": message, "hint": None}],
    }


def _program(store: Store, learner: str, signature: str, source: str = "def area(w, h): ...") -> None:
    store.code.record(learner, "L9.1", "shapes", source, _failed(signature))


def test_groups_notes_and_marks_stay_in_their_course(store: Store) -> None:
    ours, theirs = store.courses.create("Ours"), store.courses.create("Theirs")
    for learner, signature in ((A, "a"), (B, "a"), (C, "a"), (LONER, "a")):
        _program(store, learner, signature, f"# {learner[0]}\ndef area(w, h): ...")
    _program(store, A, "a", "# again\ndef area(w, h): ...")
    _program(store, B, "b")
    for learner in (A, B):
        store.courses.enrol(ours.id, learner, MembershipSource.ROSTER)
    store.courses.enrol(theirs.id, C, MembershipSource.ROSTER)
    mistakes = store.mistakes

    listed = mistakes.groups(LearnerScope(ours.id), ours.id)
    assert [(g.learners, g.programs) for g in listed] == [(2, 3), (1, 1)]
    top = listed[0]
    assert (top.lesson, top.exercise, top.function, top.first_message) == (
        "L9.1",
        "shapes",
        "area",
        "Expected 6, got 5.",
    )
    assert len(top.examples) == 2 and all(text.startswith("# ") for text in top.examples)
    assert [g.learners for g in mistakes.groups(EVERYONE, "")] == [4, 1]
    assert mistakes.made_in(LearnerScope(theirs.id), top.id) and not mistakes.made_in(
        LearnerScope(theirs.id), listed[1].id
    )

    assert mistakes.name(ours.id, top.id, "A proposal.", by="Tom", propose=True) == "proposed"
    assert mistakes.notes_for(A, "L9.1", "shapes", _failed("a")) == []
    assert mistakes.name(ours.id, top.id, "Multiply  the sides.", by="Grace") == "named"
    with pytest.raises(ValueError, match="named already"):
        mistakes.name(ours.id, top.id, "Another.", by="Tom", propose=True)
    noted = mistakes.notes_for(A, "L9.1", "shapes", _failed("a"))
    assert [(n.sentence, n.course_key, n.function) for n in noted] == [
        ("Multiply the sides.", ours.id, "area")
    ]
    assert mistakes.notes_for(A, "L9.1", "shapes", _failed("b")) == []
    assert mistakes.notes_for(C, "L9.1", "shapes", _failed("a")) == [], "another course's learner"
    assert mistakes.notes_for(LONER, "L9.1", "shapes", _failed("a")) == [], "a learner in no course"
    mistakes.name("", top.id, "For those in no course.", by="Admin")
    assert [n.sentence for n in mistakes.notes_for(LONER, "L9.1", "shapes", _failed("a"))] == [
        "For those in no course."
    ]

    mistakes.record_shown(A, "L9.1", "shapes", noted)
    mistakes.record_shown(A, "L9.1", "shapes", noted, once=True)  # looked at again: not recorded twice
    assert [(row["learner_id"], row["group_key"]) for row in mistakes.shown(LearnerScope(ours.id))] == [
        (A, top.id)
    ]
    assert mistakes.shown(LearnerScope(theirs.id)) == []
    assert [g.sentence for g in mistakes.named(ours.id, "L9.1")] == ["Multiply the sides."]
    assert mistakes.unname(ours.id, top.id) and not mistakes.unname(ours.id, top.id)


def test_marks_once_per_message_counted_per_kind_and_bounded(store: Store) -> None:
    _program(store, A, "a")
    mistakes = store.mistakes
    group = mistakes.groups(EVERYONE, "")[0].id
    assert mistakes.mark(A, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=False, group=group)
    assert not mistakes.mark(A, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=True)
    assert mistakes.mark(
        B, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=False, line="x" * 999, group=group
    )
    shares = {s.kind: (s.unhelpful, s.marked) for s in mistakes.unhelpful_by_kind(EVERYONE)}
    assert shares["plain"] == (2, 2) and shares["lesson"] == (0, 0)
    top = mistakes.groups(EVERYONE, "")[0]
    assert (top.unhelpful, top.marked, top.often_unhelpful) == (2, 2, True)
    assert top.lines == ("x" * 300,)  # the "did not help" lines, cut to their bound; empty ones left out
    assert mistakes.mark(
        C, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=True, line="fine", group=group
    )
    assert mistakes.groups(EVERYONE, "")[0].lines == ("x" * 300,)  # a "yes" line is no unhelpful line
    assert mistakes.groups(LearnerScope(store.courses.create("Empty").id), "") == []  # scoped, as the marks
    with pytest.raises(ValueError, match="not a kind of message"):
        mistakes.mark(A, "L9.1", "shapes", "x", kind="loud", helpful=True)
    for number in range(MAX_MARKS - 1):
        mistakes.mark(A, "L9.1", "shapes", f"m{number}", kind="plain", helpful=True)
    with pytest.raises(ValueError, match=f"{MAX_MARKS} times for this exercise"):
        mistakes.mark(A, "L9.1", "shapes", "one more", kind="plain", helpful=True)


def test_erasing_a_learner_takes_their_mistakes_and_marks(store: Store) -> None:
    _program(store, A, "a")
    _program(store, B, "a")
    group = store.mistakes.groups(EVERYONE, "")[0].id
    store.mistakes.mark(A, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=False, group=group)
    exported = store.personal_data.export(A)
    assert exported is not None
    assert {"mistake_signatures", "mistake_group_learners", "message_feedback"} <= set(exported["tables"])
    store.personal_data.erase(A)
    assert [(g.learners, g.marked) for g in store.mistakes.groups(EVERYONE, "")] == [(1, 0)]


def _marks_rows(store: Store) -> list[tuple[str, str, int | None, int | None]]:
    """Every mark kept: its learner, kind, and the program and the hand answer it is stored with."""
    from sqlalchemy import text

    with store.database.read() as conn:
        query = "SELECT learner_id, kind, submission_id, answer_id FROM message_feedback ORDER BY id"
        return [(row[0], row[1], row[2], row[3]) for row in conn.execute(text(query))]


def _newest_id(store: Store, table: str, learner: str) -> int:
    from sqlalchemy import text

    with store.database.read() as conn:
        found = conn.execute(text(f"SELECT MAX(id) FROM {table} WHERE learner_id = :l"), {"l": learner})
        return int(found.scalar_one())


def test_a_mark_is_stored_with_the_program_or_the_answer_it_was_given_on(store: Store) -> None:
    mistakes = store.mistakes
    _program(store, A, "a")
    failing = _newest_id(store, "code_submissions", A)
    store.code.record(A, "L9.1", "shapes", "def area(w, h): return w * h", {"status": "pass", "tests": []})
    assert _newest_id(store, "code_submissions", A) != failing
    assert mistakes.mark(A, "L9.1", "shapes", "Expected 6, got 5.", kind="plain", helpful=False)
    store.progress.record_answer(A, "L9.1", "sides", "3", correct=False, message="Not 3.")
    wrong = _newest_id(store, "answers", A)
    store.progress.record_answer(A, "L9.1", "sides", "4", correct=True, message="Right.")
    assert mistakes.mark(A, "L9.1", "sides", "Not 3.", kind="answer", helpful=False, line="Say why.")
    assert mistakes.mark(B, "L9.1", "shapes", "Expected 2.", kind="mutant", helpful=True)  # no program of B's
    assert mistakes.mark(A, "L9.1", "shapes", "It crashed on line 2.", kind="crash", helpful=True)
    assert _marks_rows(store) == [
        (A, "plain", failing, None),  # the latest program that did not pass, not the later right one
        (A, "answer", None, wrong),  # the latest wrong answer, not the later right one
        (B, "mutant", None, None),
        (A, "crash", failing, None),
    ]
    shares = {s.kind: (s.unhelpful, s.marked) for s in mistakes.unhelpful_by_kind(EVERYONE)}
    assert shares["answer"] == (1, 1) and shares["crash"] == (0, 1) and shares["mutant"] == (0, 1)


def test_lines_on_messages_in_no_group_are_read_per_exercise_in_their_course(store: Store) -> None:
    from qkv.store.instructor.mistake_group_records import LINES_PER_EXERCISE

    ours = store.courses.create("Ours")
    for learner in (A, B, C):
        store.progress.record_answer(
            learner, "L9.1", "sides", "3", correct=False, message=f"Not 3, {learner[0]}."
        )
    for learner in (A, B):
        store.courses.enrol(ours.id, learner, MembershipSource.ROSTER)
    mistakes = store.mistakes
    mistakes.mark(A, "L9.1", "sides", f"Not 3, {A[0]}.", kind="answer", helpful=False, line="Show the rule.")
    mistakes.mark(B, "L9.1", "sides", f"Not 3, {B[0]}.", kind="answer", helpful=True, line="Fine as it is.")
    mistakes.mark(C, "L9.1", "sides", f"Not 3, {C[0]}.", kind="answer", helpful=False, line="Theirs.")
    _program(store, A, "a")
    group = mistakes.groups(EVERYONE, "")[0].id
    mistakes.mark(A, "L9.1", "shapes", "x", kind="plain", helpful=False, line="On a group.", group=group)
    for number in range(LINES_PER_EXERCISE + 2):
        mistakes.mark(B, "L9.2", "code", f"m{number}", kind="lesson", helpful=False, line=f"line {number}")

    lines = mistakes.unhelpful_lines(LearnerScope(ours.id))
    first = lines[0]
    assert (first.lesson, first.exercise, first.kind, first.line, first.message) == (
        "L9.1",
        "sides",
        "answer",
        "Show the rule.",
        "Not 3, a.",  # the hand answer's message the mark was given on
    )
    assert [line.line for line in lines[1:]] == [f"line {n}" for n in range(LINES_PER_EXERCISE + 1, 1, -1)]
    assert all(line.message is None for line in lines[1:])
    assert "Theirs." in [line.line for line in mistakes.unhelpful_lines(EVERYONE)]
    assert mistakes.unhelpful_lines(LearnerScope(ours.id), "L9.2")[0].line == f"line {LINES_PER_EXERCISE + 1}"


def test_signing_in_merges_a_learner_s_mistakes_and_marks_into_the_account(store: Store) -> None:
    account = store.accounts.find_or_create(None, "s-1", "Ada")
    _program(store, account, "a")
    _program(store, A, "a", "# anonymous\ndef area(w, h): ...")
    _program(store, A, "b")
    mistakes = store.mistakes
    mistakes.mark(account, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=True)
    mistakes.mark(A, "L9.1", "shapes", "Expected 6.", kind="plain", helpful=False)
    mistakes.mark(A, "L9.1", "shapes", "Expected 7.", kind="lesson", helpful=False)
    group = mistakes.groups(EVERYONE, "")[0]
    mistakes.name("", group.id, "Multiply the sides.", by="Grace")
    mistakes.record_shown(A, "L9.1", "shapes", mistakes.notes_for(A, "L9.1", "shapes", _failed("a")))

    store.accounts.merge(A, account)  # refused by the foreign keys while these rows stayed behind
    after = {g.id: (g.learners, g.programs) for g in mistakes.groups(EVERYONE, "")}
    assert after[group.id] == (1, 2) and sorted(after.values()) == [(1, 1), (1, 2)]
    assert [(who, kind) for who, kind, _, _ in _marks_rows(store)] == [
        (account, "plain"),
        (account, "lesson"),
    ]
    assert [row["learner_id"] for row in mistakes.shown(EVERYONE)] == [account]
    exported = store.personal_data.export(A)
    assert exported is None or not any(exported["tables"].values())
