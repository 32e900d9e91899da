"""A class's mistakes grouped by behaviour, the instructors' notes on them, and "Did this help?".

Every failing function of a saved program leaves a row in ``mistake_signatures``
(``qkv.store.work.mistake_signatures``). Programs of one course whose function behaves alike (the same
lesson, exercise, function and signature) form a group, read here as aggregates: its learners, programs,
when it was first seen, the first message its learners saw and three example programs.

An instructor names a group with one sentence (``mistake_notes``, per course); a teaching assistant's
sentence is a proposal until an instructor names it. A named note reaches every later program of the
course's learners whose function has the group's signature (:meth:`MistakeGroups.notes_for`), whichever
server or grader graded it, since it is read from the database when the result is shown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, and_, case, delete, func, insert, or_, select, update

from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import (
    Answer,
    CodeSubmission,
    CourseLearner,
    MessageFeedback,
    MistakeGroupLearner,
    MistakeNote,
    MistakeNoteShown,
    MistakeSignature,
)
from qkv.store.work.mistake_signatures import group_key, signed

__all__ = [
    "FEEDBACK_KINDS",
    "MAX_LINE",
    "MAX_SENTENCE",
    "MistakeGroup",
    "MistakeGroups",
    "NoteForLearner",
    "UnhelpfulLine",
    "UnhelpfulShare",
    "clean_sentence",
    "message_key",
]

_SIGNATURES: Table = MistakeSignature.__table__  # type: ignore[assignment]
_PAIRS: Table = MistakeGroupLearner.__table__  # type: ignore[assignment]
_NOTES: Table = MistakeNote.__table__  # type: ignore[assignment]
_SHOWN: Table = MistakeNoteShown.__table__  # type: ignore[assignment]
_FEEDBACK: Table = MessageFeedback.__table__  # type: ignore[assignment]
_MEMBERS: Table = CourseLearner.__table__  # type: ignore[assignment]
_ANSWERS: Table = Answer.__table__  # type: ignore[assignment]
_PROGRAMS: Table = CodeSubmission.__table__  # type: ignore[assignment]

MAX_SENTENCE = 400
"""An instructor's note is one sentence of at most this many characters."""
MAX_LINE = 300
"""A learner's optional line under "Did this help?" keeps at most this many characters."""
MAX_MARKS = 200
"""A learner's marks kept per exercise (one per message); past it a mark is refused with a sentence."""
FEEDBACK_KINDS = ("lesson", "relation", "mutant", "crash", "note", "plain", "answer")
"""What made a message a learner marked: a catalogued hint, a relation, a mutant, the grader's sentence on a
crashing line, an instructor's note, the comparison alone, or a hand-answer exercise's message."""
LINES_PER_EXERCISE = 5
"""The newest lines kept per exercise in :meth:`MistakeGroups.lines_by_exercise`."""
EXAMPLES = 3
MAX_GROUPS = 500
EXAMPLE_GROUPS = 30  # the first groups listed come with their example programs
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


class MistakeGroups:
    """The class's mistakes grouped by behaviour, the notes on them, and the learners' marks.

    Parameters
    ----------
    database : Database
        The database to use.

    Examples
    --------
    >>> from qkv.store.instructor.courses import EVERYONE
    >>> from qkv.store.work.mistake_signatures import record_signatures_in
    >>> database = Database("sqlite://")
    >>> groups = MistakeGroups(database)
    >>> failed = {"status": "fail", "signatures": {"area": "c" * 32},
    ...           "tests": [{"function": "area", "status": "fail", "message": "Expected 6, got 5."}]}
    >>> with database.write() as conn:
    ...     for learner in ("a" * 36, "b" * 36):
    ...         database.ensure_learner(conn, learner)
    ...         _ = record_signatures_in(conn, learner, "L9.1", "shapes", "def area(): ...", failed)
    >>> [(g.function, g.learners, g.first_message) for g in groups.groups(EVERYONE, "")]
    [('area', 2, 'Expected 6, got 5.')]
    >>> group = groups.groups(EVERYONE, "")[0].id
    >>> groups.name("", group, "Multiply the sides.", by="ada")
    'named'
    >>> [note.sentence for note in groups.notes_for("a" * 36, "L9.1", "shapes", failed)]
    ['Multiply the sides.']
    >>> database.close()
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def groups(
        self,
        scope: LearnerScope,
        course_key: str,
        *,
        lesson: str | None = None,
        limit: int = MAX_GROUPS,
        examples: int = EXAMPLE_GROUPS,
    ) -> list[MistakeGroup]:
        """The course's groups: an often unhelpful one first, then unnamed ones, the most learners first.

        ``scope`` is the course's learners, ``course_key`` the course's id ('' for every learner of the
        server), ``lesson`` keeps one lesson's groups; at most ``limit`` groups, the first ``examples`` of
        them with their example programs.
        """
        with self.database.read() as conn:
            found = _aggregates(conn, scope, lesson)
            if not found:
                return []
            keys = [row.group_key for row in found]
            notes = _notes(conn, course_key, keys)
            marks = _marks(conn, scope, keys)
            made = [_group(row, notes, marks) for row in found]
            made.sort(key=lambda g: (not g.often_unhelpful, g.state == NAMED, -g.learners, -g.programs, g.id))
            made = made[:limit]
            details = _details(conn, [group.first_id for group in made])
            shown = _examples(conn, scope, [group.id for group in made[:examples]])
            said = _lines(conn, scope, [group.id for group in made])
        return [
            replace(
                _detailed(group, details.get(group.id), shown.get(group.id, ())), lines=said.get(group.id, ())
            )
            for group in made
        ]

    def made_in(self, scope: LearnerScope, group: str) -> bool:
        """Whether a learner of the scope made the group's mistake (the group is the course's to name)."""
        with self.database.read() as conn:
            found = conn.execute(
                select(_PAIRS.c.learner_id)
                .where(_PAIRS.c.group_key == group, scope.admits(_PAIRS.c.learner_id))
                .limit(1)
            ).first()
        return found is not None

    def where_made(self, group: str) -> tuple[list[str], bool] | None:
        """The courses whose learners made the group's mistake, and whether a learner in no course did;
        None for a group nobody made."""
        with self.database.read() as conn:
            if (
                conn.execute(
                    select(_SIGNATURES.c.id).where(_SIGNATURES.c.group_key == group).limit(1)
                ).first()
                is None
            ):
                return None
            learners = select(_SIGNATURES.c.learner_id).where(_SIGNATURES.c.group_key == group)
            courses = conn.execute(
                select(_MEMBERS.c.course_id).where(_MEMBERS.c.learner_id.in_(learners)).distinct()
            ).scalars()
            alone = conn.execute(
                select(_SIGNATURES.c.id)
                .where(
                    _SIGNATURES.c.group_key == group,
                    _SIGNATURES.c.learner_id.not_in(select(_MEMBERS.c.learner_id)),
                )
                .limit(1)
            ).first()
            return sorted(courses), alone is not None

    def name(self, course_key: str, group: str, sentence: str, *, by: str, propose: bool = False) -> str:
        """Name (or, ``propose``, propose) the group's note for the course; ``named`` or ``proposed``.

        A proposal never replaces a named note. Raises ValueError for a bad sentence or an unknown group.
        """
        text = clean_sentence(sentence)
        state = PROPOSED if propose else NAMED
        with self.database.write() as conn:
            made = conn.execute(
                select(
                    _SIGNATURES.c.lesson_id,
                    _SIGNATURES.c.exercise_id,
                    _SIGNATURES.c.function,
                    _SIGNATURES.c.signature,
                )
                .where(_SIGNATURES.c.group_key == group)
                .limit(1)
            ).first()
            if made is None:
                raise ValueError(
                    f"There is no group of mistakes {group[:40]!r}; 'qkv mistakes list' shows them."
                )
            key = and_(_NOTES.c.course_key == course_key, _NOTES.c.group_key == group)
            old = conn.execute(select(_NOTES.c.state).where(key)).scalar()
            if old == NAMED and propose:
                raise ValueError(
                    "This group is named already; only an instructor of the course changes its note."
                )
            values = {"sentence": text, "state": state, "named_by": by[:255], "named_at": utc_now()}
            if old is None:
                conn.execute(
                    insert(_NOTES).values(
                        course_key=course_key,
                        group_key=group,
                        lesson_id=made.lesson_id,
                        exercise_id=made.exercise_id,
                        function=made.function,
                        signature=made.signature,
                        **values,
                    )
                )
            else:
                conn.execute(update(_NOTES).where(key).values(**values))
        return state

    def unname(self, course_key: str, group: str) -> bool:
        """Take the course's note on the group away (named or proposed); whether there was one."""
        with self.database.write() as conn:
            gone = conn.execute(
                delete(_NOTES).where(_NOTES.c.course_key == course_key, _NOTES.c.group_key == group)
            ).rowcount
        return bool(gone)

    def named(self, course_key: str | None, lesson: str | None = None) -> list[MistakeGroup]:
        """The course's named notes (None: every course's, a group once), with their examples, by group id
        (for ``qkv mistakes export``)."""
        where = [_NOTES.c.state == NAMED]
        if course_key is not None:
            where.append(_NOTES.c.course_key == course_key)
        if lesson is not None:
            where.append(_NOTES.c.lesson_id == lesson)
        with self.database.read() as conn:
            rows = conn.execute(
                select(_NOTES).where(*where).order_by(_NOTES.c.group_key, _NOTES.c.named_at)
            ).all()
            notes = list({row.group_key: row for row in reversed(rows)}.values())[::-1]
            examples = _examples(conn, EVERYONE, [note.group_key for note in notes])
        return [
            MistakeGroup(
                note.group_key,
                note.lesson_id,
                note.exercise_id,
                note.function,
                note.signature,
                0,
                0,
                note.named_at,
                "",
                tuple(examples.get(note.group_key, ())),
                note.sentence,
                note.state,
                note.named_by,
            )
            for note in notes
        ]

    def notes_for(
        self, learner_id: str, lesson_id: str, exercise_id: str, result: Mapping[str, Any]
    ) -> list[NoteForLearner]:
        """The named notes a learner's result gets: one per failing function whose signature a course of
        the learner (or, for a learner in no course, the whole server's view) has named."""
        signatures = signed(result)
        if not signatures:
            return []
        keys = {group_key(lesson_id, exercise_id, name, digest): name for name, digest in signatures.items()}
        member = select(_MEMBERS.c.course_id).where(_MEMBERS.c.learner_id == learner_id)
        in_none = ~select(_MEMBERS.c.course_id).where(_MEMBERS.c.learner_id == learner_id).exists()
        courses = or_(_NOTES.c.course_key.in_(member), and_(_NOTES.c.course_key == "", in_none))
        with self.database.read() as conn:
            rows = conn.execute(
                select(_NOTES.c.group_key, _NOTES.c.course_key, _NOTES.c.sentence)
                .where(_NOTES.c.group_key.in_(list(keys)), _NOTES.c.state == NAMED, courses)
                .order_by(_NOTES.c.course_key, _NOTES.c.group_key)
            ).all()
        notes: dict[str, NoteForLearner] = {}
        for row in rows:  # one note per function: the first course's
            notes.setdefault(
                row.group_key,
                NoteForLearner(row.group_key, row.course_key, keys[row.group_key], row.sentence),
            )
        return list(notes.values())

    def record_shown(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        notes: Sequence[NoteForLearner],
        *,
        once: bool = False,
    ) -> None:
        """Record that the learner was shown ``notes`` (for the events export); ``once``: only those never
        recorded for the learner before (a result looked at again)."""
        if not notes:
            return
        with self.database.write() as conn:
            for note in notes:
                if (
                    once
                    and conn.execute(
                        select(_SHOWN.c.id)
                        .where(_SHOWN.c.learner_id == learner_id, _SHOWN.c.group_key == note.group)
                        .limit(1)
                    ).first()
                ):
                    continue
                self.database.ensure_learner(conn, learner_id)
                conn.execute(
                    insert(_SHOWN).values(
                        learner_id=learner_id,
                        course_key=note.course_key,
                        group_key=note.group,
                        lesson_id=lesson_id,
                        exercise_id=exercise_id,
                        function=note.function,
                        sentence=note.sentence,
                        shown_at=utc_now(),
                    )
                )

    def shown(self, scope: LearnerScope, lesson: str | None = None) -> list[dict[str, Any]]:
        """The notes shown to the scope's learners, oldest first (the events export's rows)."""
        where = [scope.admits(_SHOWN.c.learner_id)]
        if lesson is not None:
            where.append(_SHOWN.c.lesson_id == lesson)
        with self.database.read() as conn:
            rows = conn.execute(select(_SHOWN).where(*where).order_by(_SHOWN.c.id)).all()
        return [dict(row._mapping) for row in rows]

    def mark(
        self,
        learner_id: str,
        lesson_id: str,
        exercise_id: str,
        message: str,
        *,
        kind: str,
        helpful: bool,
        line: str = "",
        group: str | None = None,
    ) -> bool:
        """Save a learner's "Did this help?" on one message; False when they had marked it already.

        The mark is stored with the program it was given on, found here when it is saved: for a
        hand-answer's message (``kind`` ``answer``) the learner's latest wrong answer to the exercise, for
        a test's message their latest program of the exercise that did not pass (the result the page
        shows its messages under); none when they have none.

        Raises ValueError for an unknown kind, or past :data:`MAX_MARKS` of the learner's on the exercise.
        """
        if kind not in FEEDBACK_KINDS:
            raise ValueError(f"{kind!r} is not a kind of message; the kinds are {', '.join(FEEDBACK_KINDS)}.")
        text = " ".join(line.split())[:MAX_LINE]
        with self.database.write() as conn:
            self.database.ensure_learner(conn, learner_id)
            mine = conn.execute(
                select(func.count()).where(
                    _FEEDBACK.c.learner_id == learner_id,
                    _FEEDBACK.c.lesson_id == lesson_id,
                    _FEEDBACK.c.exercise_id == exercise_id,
                )
            ).scalar_one()
            if mine >= MAX_MARKS:
                raise ValueError(
                    f"You have answered 'Did this help?' {mine} times for this exercise; no more answers are "
                    "kept for it."
                )
            values = {
                "learner_id": learner_id,
                "lesson_id": lesson_id,
                "exercise_id": exercise_id,
                "message_key": message_key(message),
                "kind": kind,
                "group_key": group,
                "helpful": helpful,
                "line": text,
                "created_at": utc_now(),
                **_marked_on(conn, learner_id, lesson_id, exercise_id, answer=kind == "answer"),
            }
            return self.database.insert_ignore(conn, _FEEDBACK, values, ["learner_id", "message_key"])

    def unhelpful_lines(self, scope: LearnerScope, lesson: str | None = None) -> list[UnhelpfulLine]:
        """What the scope's learners said would have helped, on messages in no group (a hand answer's, or a
        test's whose function was not signed): the newest :data:`LINES_PER_EXERCISE` per exercise, by
        lesson and exercise. The lines on a group's messages are the group's (:attr:`MistakeGroup.lines`).
        """
        with self.database.read() as conn:
            return _unhelpful_lines(conn, scope, lesson)

    def unhelpful_by_kind(self, scope: LearnerScope, lesson: str | None = None) -> list[UnhelpfulShare]:
        """Per kind of message, how often the scope's learners marked it unhelpful, of all their marks."""
        where = [scope.admits(_FEEDBACK.c.learner_id)]
        if lesson is not None:
            where.append(_FEEDBACK.c.lesson_id == lesson)
        unhelpful = func.sum(case((_FEEDBACK.c.helpful.is_(False), 1), else_=0))
        with self.database.read() as conn:
            rows = conn.execute(
                select(_FEEDBACK.c.kind, unhelpful, func.count()).where(*where).group_by(_FEEDBACK.c.kind)
            ).all()
        found = {row[0]: UnhelpfulShare(row[0], int(row[1] or 0), int(row[2])) for row in rows}
        return [found.get(kind, UnhelpfulShare(kind, 0, 0)) for kind in FEEDBACK_KINDS]


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
