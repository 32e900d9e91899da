"""A class's mistakes grouped by behaviour, the instructors' notes on them, and "Did this help?".

Every failing function of a saved program leaves a row in ``mistake_signatures``
(``qkv.store.work.mistake_signatures``). Programs of one course whose function behaves alike (the same
lesson, exercise, function and signature) form a group, read here as aggregates: its learners, programs,
when it was first seen, the first message its learners saw and three example programs.

An instructor names a group with one sentence (``mistake_notes``, per course); a teaching assistant's
sentence is a proposal until an instructor names it. A named note reaches every later program of the
course's learners whose function has the group's signature (:meth:`MistakeGroups.notes_for`), whichever
server or grader graded it, since it is read from the database when the result is shown.

The records read here and the queries they are read with are
:mod:`qkv.store.instructor.mistake_group_records`; this module re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import Table, and_, case, delete, func, insert, or_, select, update

from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.instructor.mistake_group_records import (
    _FEEDBACK,
    _MEMBERS,
    _NOTES,
    _PAIRS,
    _SIGNATURES,
    MAX_SENTENCE,
    NAMED,
    PROPOSED,
    MistakeGroup,
    NoteForLearner,
    UnhelpfulLine,
    UnhelpfulShare,
    _aggregates,
    _detailed,
    _details,
    _examples,
    _group,
    _lines,
    _marked_on,
    _marks,
    _notes,
    _unhelpful_lines,
    clean_sentence,
    message_key,
)
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import (
    MistakeNoteShown,
)
from qkv.store.work.mistake_signatures import group_key, signed

_SHOWN: Table = MistakeNoteShown.__table__  # type: ignore[assignment]
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

MAX_LINE = 300
"""A learner's optional line under "Did this help?" keeps at most this many characters."""


MAX_MARKS = 200
"""A learner's marks kept per exercise (one per message); past it a mark is refused with a sentence."""


FEEDBACK_KINDS = ("lesson", "relation", "mutant", "crash", "note", "plain", "answer")
"""What made a message a learner marked: a catalogued hint, a relation, a mutant, the grader's sentence on a
crashing line, an instructor's note, the comparison alone, or a hand-answer exercise's message."""


MAX_GROUPS = 500
EXAMPLE_GROUPS = 30  # the first groups listed come with their example programs


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
