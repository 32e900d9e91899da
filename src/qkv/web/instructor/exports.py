"""The instructor's exports: the gradebook (CSV, JSON), an LMS gradebook import CSV and an event-level CSV.

Every CSV is written by ``qkv.store.instructor.exports.write_csv``, so cells a spreadsheet would run as a
formula get a leading apostrophe. ``qkv progress export --format lms|events`` writes the same files.

The LMS file follows Moodle's "Import grades → CSV file" layout: a header row, then one row per
learner with an identifier column and one numeric column per grade item (here: per lesson, the
number of its exercises solved, out of the count in the column's heading), and a total. Moodle asks
on import which column identifies the user and which grade item each other column fills. The same
shape imports into any LMS that maps columns to grade items (Canvas needs its own student ids in
an ``ID`` column; use the display name to match them).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TextIO

from qkv.store import GradebookRow
from qkv.store.instructor.exports import write_csv
from qkv.store.instructor.instructors import AnswerEvent, CodeEvent, HelpEvent, LearnerRecord
from qkv.web.instructor.late_work import DUE_COLUMN, LATE_COLUMNS, LateWork
from qkv.web.solution_credit import HelpPolicy, Solve

GRADEBOOK_COLUMNS = [
    "learner_id",
    "display_name",
    "lesson_id",
    "exercise_id",
    "attempts",
    "submissions",
    "solved",
    "best_score",
    "first_solved_at",
    "last_activity_at",
    "solved_after_solution",
    "hints_shown",
    "solved_after_hints",
]

EVENT_COLUMNS = [
    "time",
    "learner_id",
    "display_name",
    "lesson_id",
    "exercise_id",
    "event",
    "variant_seed",
    "answer",
    "correct",
    "counted_as_attempt",
    "mistake",
    "status",
    "passed",
    "total",
    "failed_tests",
    "hints",
    "hint_number",
    "message",
]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() + "Z" if value is not None else None


def catalog_exercises(catalog: Any) -> list[tuple[str, str]]:
    """Every (lesson id, exercise id) of the catalog, in page order."""
    return [(lesson.id, exercise_id) for lesson in catalog.lessons for exercise_id in lesson.exercises]


def write_gradebook(
    rows: Sequence[GradebookRow], fmt: str, stream: TextIO, late: LateWork | None = None
) -> None:
    """The gradebook (one row per learner and exercise) as CSV with a header, or as a JSON array; with a
    course's dates (``late``), each solve marked late or not, and its credit."""
    records = [row.to_dict() | (late.marks(row) if late else {}) for row in rows]
    if fmt == "json":
        json.dump(records, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    write_csv(records, GRADEBOOK_COLUMNS + (LATE_COLUMNS if late else []), stream)


def counted_exercises(lesson: Any) -> list[str]:
    """The exercises of a lesson that count toward done (those of parts with ``counts_toward_done``)."""
    counted_parts = {part.id for part in lesson.parts if part.counts_toward_done}
    return [eid for eid, exercise in lesson.exercises.items() if exercise.part in counted_parts]


def lms_columns(catalog: Any) -> list[str]:
    """The LMS file's headings: ``learner_id``, ``display_name``, ``external_id``, one per lesson,
    ``total (out of N)``."""
    lesson_columns = [
        f"{lesson.id} {lesson.title} (out of {len(counted_exercises(lesson))})" for lesson in catalog.lessons
    ]
    total = sum(len(counted_exercises(lesson)) for lesson in catalog.lessons)
    return ["learner_id", "display_name", "external_id", *lesson_columns, f"total (out of {total})"]


def lesson_scores(
    catalog: Any, rows: Iterable[GradebookRow], policy: HelpPolicy, late: LateWork | None = None
) -> dict[str, dict[str, float | int]]:
    """Per learner (who solved any exercise), each lesson's score: its counted exercises solved, weighed by
    ``policy.credit`` (help credit times late credit, as the class grid and the LMS score; ``late``: the
    course's dates, an extension included)."""
    solves: dict[str, dict[tuple[str, str], Solve]] = defaultdict(dict)
    for row in rows:
        if row.solved:
            solves[row.learner_id][(row.lesson_id, row.exercise_id)] = Solve(row.helped, row.first_solved_at)
    scores: dict[str, dict[str, float | int]] = {}
    for learner_id, mine in solves.items():
        scores[learner_id] = {}
        for lesson in catalog.lessons:
            counted = [mine[(lesson.id, e)] for e in counted_exercises(lesson) if (lesson.id, e) in mine]
            dates = None if late is None else late.dates(learner_id, lesson.id)
            scores[learner_id][lesson.id] = policy.credit(counted, dates)
    return scores


def lms_records(
    catalog: Any,
    rows: Iterable[GradebookRow],
    learners: Sequence[LearnerRecord],
    policy: HelpPolicy | None = None,
    late: LateWork | None = None,
) -> list[dict[str, Any]]:
    """One record per learner: each lesson's score (``lesson_scores``, late solves at their late credit
    where ``late`` holds the course's dates) and the total."""
    scores = lesson_scores(catalog, rows, policy or HelpPolicy(), late)
    columns = lms_columns(catalog)
    records = []
    for learner in sorted(learners, key=lambda r: ((r.display_name or "").casefold(), r.id)):
        record: dict[str, Any] = {
            "learner_id": learner.id,
            "display_name": learner.display_name,
            "external_id": learner.external_id,
        }
        mine = scores.get(learner.id, {})
        total = 0.0
        for lesson, column in zip(catalog.lessons, columns[3:-1], strict=True):
            score = mine.get(lesson.id, 0)
            record[column] = score
            total += score
        record[columns[-1]] = _number(total)
        records.append(record)
    return records


def _number(value: float) -> float | int:
    """A whole score as an int (3, not 3.0), another one to a millionth (2.5, 0.25)."""
    value = round(value, 6)
    return int(value) if value.is_integer() else value


def write_lms(
    catalog: Any,
    rows: Iterable[GradebookRow],
    learners: Sequence[LearnerRecord],
    stream: TextIO,
    policy: HelpPolicy | None = None,
    late: LateWork | None = None,
) -> None:
    """Write the LMS gradebook import CSV (solves after help count as the instructor's ``policy`` says, late
    ones their late credit as well)."""
    write_csv(lms_records(catalog, rows, learners, policy, late), lms_columns(catalog), stream)


def _answer_record(a: AnswerEvent, names: dict[str, str | None]) -> dict[str, Any]:
    return {
        "time": _iso(a.created_at),
        "learner_id": a.learner_id,
        "display_name": names.get(a.learner_id),
        "lesson_id": a.lesson_id,
        "exercise_id": a.exercise_id,
        "event": "answer",
        "variant_seed": a.variant_seed,
        "answer": a.answer,
        "correct": a.correct,
        "counted_as_attempt": a.counted_as_attempt,
        "mistake": a.mistake,
        "message": a.message,
    }


def _program_record(c: CodeEvent, names: dict[str, str | None]) -> dict[str, Any]:
    tests = [t for t in c.result.get("tests") or [] if isinstance(t, dict)]
    failed = [t for t in tests if t.get("status") not in ("pass", "not_run")]
    return {
        "time": _iso(c.created_at),
        "learner_id": c.learner_id,
        "display_name": names.get(c.learner_id),
        "lesson_id": c.lesson_id,
        "exercise_id": c.exercise_id,
        "event": "program",
        "correct": c.status == "pass",
        "counted_as_attempt": True,
        "status": c.status,
        "passed": c.passed,
        "total": c.total,
        "failed_tests": "; ".join(str(t.get("name", "")) for t in failed),
        "hints": "; ".join(sorted({str(t["hint"]) for t in failed if t.get("hint")})),
        "message": str(c.result.get("message") or ""),
    }


def _help_record(h: HelpEvent, names: dict[str, str | None]) -> dict[str, Any]:
    return {
        "time": _iso(h.created_at),
        "learner_id": h.learner_id,
        "display_name": names.get(h.learner_id),
        "lesson_id": h.lesson_id,
        "exercise_id": h.exercise_id,
        "event": "hint" if h.hint else "solution",
        "hint_number": h.hint or None,
    }


def event_records(
    answers: Iterable[AnswerEvent],
    programs: Iterable[CodeEvent],
    learners: Sequence[LearnerRecord],
    shown: Iterable[HelpEvent] = (),
) -> list[dict[str, Any]]:
    """Every answer and program, and every hint (event ``hint``, its ``hint_number``) and reference solution
    (event ``solution``) shown, as one record each, in the order they were saved."""
    names = {learner.id: learner.display_name for learner in learners}
    records: list[tuple[tuple[datetime, int, int], dict[str, Any]]] = [
        *(((a.created_at, 0, a.id), _answer_record(a, names)) for a in answers),
        *(((c.created_at, 1, c.id), _program_record(c, names)) for c in programs),
        *(((h.created_at, 2, h.id), _help_record(h, names)) for h in shown),
    ]
    records.sort(key=lambda item: item[0])
    return [record for _, record in records]


def note_records(
    notes: Iterable[Mapping[str, Any]], learners: Sequence[LearnerRecord]
) -> list[dict[str, Any]]:
    """Each instructor's note shown to a learner: event ``note``, the group's id as its ``mistake``, the
    sentence as its ``message`` (rows of ``MistakeGroups.shown``)."""
    names = {learner.id: learner.display_name for learner in learners}
    return [
        {
            "time": _iso(note["shown_at"]),
            "learner_id": note["learner_id"],
            "display_name": names.get(note["learner_id"]),
            "lesson_id": note["lesson_id"],
            "exercise_id": note["exercise_id"],
            "event": "note",
            "mistake": note["group_key"],
            "message": note["sentence"],
        }
        for note in notes
    ]


def write_events(
    answers: Iterable[AnswerEvent],
    programs: Iterable[CodeEvent],
    learners: Sequence[LearnerRecord],
    stream: TextIO,
    shown: Iterable[HelpEvent] = (),
    notes: Iterable[Mapping[str, Any]] = (),
    late: LateWork | None = None,
) -> None:
    """Write the event-level CSV: answers, programs and the help shown, and the instructors' notes shown
    (``notes``) among them by time; with a course's dates, each event's due date in force (``due_at``)."""
    records = event_records(answers, programs, learners, shown)
    noted = note_records(notes, learners)
    if noted:
        records = sorted(records + noted, key=lambda record: str(record["time"]).rstrip("Z").ljust(26, "0"))
    if late is not None:
        for record in records:
            record[DUE_COLUMN] = late.due_at(record["learner_id"], record["lesson_id"])
    write_csv(records, EVENT_COLUMNS + ([DUE_COLUMN] if late else []), stream)
