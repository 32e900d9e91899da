"""The records of a class's mistake groups and the rows they are read from: a group (:class:`MistakeGroup`),
the note a learner's result gets, the learners' marks on a kind of message and the lines they wrote; an
instructor's sentence cleaned (:func:`clean_sentence`), a message's key, and the queries of
:class:`~qkv.store.instructor.mistake_groups.MistakeGroups` (aggregates per group, first rows, example
programs, notes, marks and lines).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, case, func, select

from qkv.store.instructor.courses import LearnerScope
from qkv.store.sql.tables import (
    Answer,
    CodeSubmission,
    CourseLearner,
    MessageFeedback,
    MistakeGroupLearner,
    MistakeNote,
    MistakeSignature,
)

__all__ = [
    "MAX_SENTENCE",
    "MistakeGroup",
    "NoteForLearner",
    "UnhelpfulLine",
    "UnhelpfulShare",
    "clean_sentence",
    "message_key",
]

_SIGNATURES: Table = MistakeSignature.__table__  # type: ignore[assignment]
_PAIRS: Table = MistakeGroupLearner.__table__  # type: ignore[assignment]
_NOTES: Table = MistakeNote.__table__  # type: ignore[assignment]
_FEEDBACK: Table = MessageFeedback.__table__  # type: ignore[assignment]
_MEMBERS: Table = CourseLearner.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_PROGRAMS: Table = CodeSubmission.__table__  # type: ignore[assignment]
MAX_SENTENCE = 400
"""An instructor's note is one sentence of at most this many characters."""


LINES_PER_EXERCISE = 5
"""The newest lines kept per exercise in :meth:`MistakeGroups.lines_by_exercise`."""


EXAMPLES = 3
OFTEN_UNHELPFUL = 0.5  # a group whose message was marked unhelpful this often (of 2 or more) goes first
NAMED, PROPOSED = "named", "proposed"


def clean_sentence(sentence: object) -> str:
    """A note of one line, 1 to :data:`MAX_SENTENCE` characters; ValueError with a sentence otherwise.

    Examples
    --------
    >>> clean_sentence("  Divide by the square root of d_k,   not of Q's size. ")
    "Divide by the square root of d_k, not of Q's size."
    >>> clean_sentence("")
    Traceback (most recent call last):
    ...
    ValueError: The note is empty; write one sentence that names the mistake.
    """
    if not isinstance(sentence, str):
        raise ValueError(f"The note must be text, not {type(sentence).__name__}.")
    text = " ".join(sentence.split())
    if not text:
        raise ValueError("The note is empty; write one sentence that names the mistake.")
    if len(text) > MAX_SENTENCE:
        raise ValueError(
            f"The note has {len(text)} characters; one sentence of at most {MAX_SENTENCE} is kept."
        )
    if any(ord(char) < 32 or 0xD800 <= ord(char) <= 0xDFFF for char in text):
        raise ValueError("The note holds a control character; write plain text.")
    return text


def message_key(text: str) -> str:
    """The key of a message a learner marks: a digest of its text (32 hex digits).

    Examples
    --------
    >>> message_key("Expected 2, got 1.") == message_key("Expected 2, got 1."), len(message_key("x"))
    (True, 32)
    """
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


@dataclass(frozen=True)
class MistakeGroup:
    """Programs of one course whose function behaves alike, and the note on them if any."""

    id: str
    lesson: str
    exercise: str
    function: str
    signature: str
    learners: int
    programs: int
    first_seen: datetime
    first_message: str
    examples: tuple[str, ...] = ()
    sentence: str | None = None
    state: str | None = None  # "named", "proposed" or None
    named_by: str | None = None
    unhelpful: int = 0  # learners' marks "did not help" on this group's messages
    marked: int = 0  # all their marks
    first_id: int = 0  # the row of its first program
    lines: tuple[str, ...] = ()  # what learners who marked it unhelpful said would have helped, newest first

    @property
    def often_unhelpful(self) -> bool:
        """Whether learners marked its message unhelpful at least half the time (of two marks or more)."""
        return self.marked >= 2 and self.unhelpful >= OFTEN_UNHELPFUL * self.marked

    def to_dict(self) -> dict[str, Any]:
        """The group as plain JSON types (``qkv mistakes list --json``)."""
        return {
            "id": self.id,
            "lesson": self.lesson,
            "exercise": self.exercise,
            "function": self.function,
            "learners": self.learners,
            "programs": self.programs,
            "first_seen": self.first_seen.isoformat(timespec="seconds") + "Z",
            "first_message": self.first_message,
            "sentence": self.sentence if self.state == NAMED else None,
            "proposed": self.sentence if self.state == PROPOSED else None,
            "named_by": self.named_by,
            "unhelpful": self.unhelpful,
            "marked": self.marked,
            "lines": list(self.lines),
            "examples": list(self.examples),
        }


@dataclass(frozen=True)
class NoteForLearner:
    """An instructor's note that a learner's result gets, for one of its failing functions."""

    group: str
    course_key: str
    function: str
    sentence: str


@dataclass(frozen=True)
class UnhelpfulShare:
    """How often learners marked one kind of message unhelpful."""

    kind: str
    unhelpful: int
    marked: int


@dataclass(frozen=True)
class UnhelpfulLine:
    """What a learner who marked a message unhelpful said would have helped, on a message in no group."""

    lesson: str
    exercise: str
    kind: str  # one of FEEDBACK_KINDS
    line: str
    message: str | None  # the hand answer's message the mark was on; None for a test's message
    created_at: datetime


@dataclass
class _Scope:
    course_key: str
    scope: LearnerScope
    lesson: str | None = None
    only: Sequence[str] = field(default_factory=tuple)


def _unhelpful_lines(conn: Connection, scope: LearnerScope, lesson: str | None) -> list[UnhelpfulLine]:
    """The newest lines of "did not help" marks on messages in no group, :data:`LINES_PER_EXERCISE` per
    exercise, by lesson and exercise; a hand answer's mark comes with the message it was given on."""
    f, a = _FEEDBACK.c, _ANSWERS.c
    where = [scope.admits(f.learner_id), f.group_key.is_(None), f.helpful.is_(False), f.line != ""]
    if lesson is not None:
        where.append(f.lesson_id == lesson)
    newest = (
        func.row_number()
        .over(partition_by=(f.lesson_id, f.exercise_id), order_by=(f.created_at.desc(), f.id.desc()))
        .label("newest")
    )
    columns = (f.lesson_id, f.exercise_id, f.kind, f.line, f.created_at, f.answer_id, f.learner_id, newest)
    ranked = select(*columns).where(*where).subquery()
    r = ranked.c
    on_answer = and_(a.id == r.answer_id, a.learner_id == r.learner_id)
    rows = conn.execute(
        select(r.lesson_id, r.exercise_id, r.kind, r.line, a.message, r.created_at)
        .select_from(ranked.outerjoin(_ANSWERS, on_answer))
        .where(r.newest <= LINES_PER_EXERCISE)
        .order_by(r.lesson_id, r.exercise_id, r.newest)
    ).all()
    return [UnhelpfulLine(*row) for row in rows]


def _marked_on(
    conn: Connection, learner_id: str, lesson_id: str, exercise_id: str, *, answer: bool
) -> dict[str, int | None]:
    """The row a mark is stored with: the latest wrong answer, or the latest program that did not pass."""
    table = _ANSWERS if answer else _PROGRAMS
    wrong = _ANSWERS.c.correct.is_(False) if answer else _PROGRAMS.c.status != "pass"
    found = conn.execute(
        select(func.max(table.c.id)).where(
            table.c.learner_id == learner_id,
            table.c.lesson_id == lesson_id,
            table.c.exercise_id == exercise_id,
            wrong,
        )
    ).scalar()
    return {"answer_id": found if answer else None, "submission_id": None if answer else found}


def _aggregates(conn: Connection, scope: LearnerScope, lesson: str | None) -> list[Any]:
    """Per group of the scope's learners: its learners, programs, first time and first program's row.

    Read from one row per learner and group (``mistake_group_learners``), a course's learners joined.
    """
    p = _PAIRS.c
    query = select(
        p.group_key,
        func.count().label("learners"),
        func.sum(p.programs).label("programs"),
        func.min(p.first_seen).label("first_seen"),
        func.min(p.first_id).label("first_id"),
    )
    if scope.course_id is not None:
        member = and_(_MEMBERS.c.learner_id == p.learner_id, _MEMBERS.c.course_id == scope.course_id)
        query = query.select_from(_PAIRS.join(_MEMBERS, member))
    if lesson is not None:
        query = query.where(p.lesson_id == lesson)
    return list(conn.execute(query.group_by(p.group_key)).all())


def _details(conn: Connection, first_ids: list[int]) -> dict[str, Any]:
    """Per group: its first row (lesson, exercise, function, signature and the first message)."""
    s = _SIGNATURES.c
    rows = conn.execute(
        select(s.group_key, s.lesson_id, s.exercise_id, s.function, s.signature, s.message).where(
            s.id.in_(first_ids)
        )
    ).all()
    return {row.group_key: row for row in rows}


def _examples(conn: Connection, scope: LearnerScope, keys: list[str]) -> dict[str, tuple[str, ...]]:
    """Per group: the first programs of its first learners of the scope, three texts that differ."""
    p = _PAIRS.c
    firsts: dict[str, list[int]] = {}
    for key in keys:
        firsts[key] = list(
            conn.execute(
                select(p.first_id)
                .where(p.group_key == key, scope.admits(p.learner_id))
                .order_by(p.first_id)
                .limit(2 * EXAMPLES)
            ).scalars()
        )
    wanted = [made for ids in firsts.values() for made in ids]
    texts = dict(
        conn.execute(select(_SIGNATURES.c.id, _SIGNATURES.c.source).where(_SIGNATURES.c.id.in_(wanted))).all()
    )
    found: dict[str, tuple[str, ...]] = {}
    for key, ids in firsts.items():
        kept: list[str] = []
        for made in ids:
            if made in texts and texts[made] not in kept and len(kept) < EXAMPLES:
                kept.append(texts[made])
        found[key] = tuple(kept)
    return found


def _notes(conn: Connection, course_key: str, keys: list[str]) -> dict[str, Any]:
    rows = conn.execute(
        select(_NOTES).where(_NOTES.c.course_key == course_key, _NOTES.c.group_key.in_(keys))
    ).all()
    return {row.group_key: row for row in rows}


def _marks(conn: Connection, scope: LearnerScope, keys: list[str]) -> dict[str, tuple[int, int]]:
    unhelpful = func.sum(case((_FEEDBACK.c.helpful.is_(False), 1), else_=0))
    rows = conn.execute(
        select(_FEEDBACK.c.group_key, unhelpful, func.count())
        .where(scope.admits(_FEEDBACK.c.learner_id), _FEEDBACK.c.group_key.in_(keys))
        .group_by(_FEEDBACK.c.group_key)
    ).all()
    return {row[0]: (int(row[1] or 0), int(row[2])) for row in rows}


def _lines(conn: Connection, scope: LearnerScope, keys: list[str]) -> dict[str, tuple[str, ...]]:
    """Per group, the newest :data:`EXAMPLES` lines learners wrote with a "did not help" mark."""
    rows = conn.execute(
        select(_FEEDBACK.c.group_key, _FEEDBACK.c.line)
        .where(
            scope.admits(_FEEDBACK.c.learner_id),
            _FEEDBACK.c.group_key.in_(keys),
            _FEEDBACK.c.helpful.is_(False),
            _FEEDBACK.c.line != "",
        )
        .order_by(_FEEDBACK.c.created_at.desc(), _FEEDBACK.c.id.desc())
    ).all()
    found: dict[str, list[str]] = {}
    for key, line in rows:
        kept = found.setdefault(key, [])
        if len(kept) < EXAMPLES:
            kept.append(line)
    return {key: tuple(kept) for key, kept in found.items()}


def _group(row: Any, notes: dict[str, Any], marks: dict[str, tuple[int, int]]) -> MistakeGroup:
    """A group from its aggregates, its note and its marks (its details come after the sort)."""
    note = notes.get(row.group_key)
    unhelpful, marked = marks.get(row.group_key, (0, 0))
    return MistakeGroup(
        row.group_key,
        "",
        "",
        "",
        "",
        int(row.learners),
        int(row.programs),
        row.first_seen,
        "",
        (),
        note.sentence if note else None,
        note.state if note else None,
        note.named_by if note else None,
        unhelpful,
        marked,
        int(row.first_id),
    )


def _detailed(group: MistakeGroup, first: Any, examples: tuple[str, ...]) -> MistakeGroup:
    """The group with its lesson, exercise, function, signature, first message and examples."""
    if first is None:
        return group
    return replace(
        group,
        lesson=first.lesson_id,
        exercise=first.exercise_id,
        function=first.function,
        signature=first.signature,
        first_message=first.message,
        examples=examples,
    )
