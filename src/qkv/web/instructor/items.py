"""Item statistics per exercise: share solved at the first try, median attempts, the commonest wrong answers
with their named mistakes, and the unnamed wrong answers grouped (the material for the next hint).

The counts come from ``ClassView.exercise_counts`` (the kept totals, exact); the wrong answers from
``ClassView.wrong_answers`` (kept answer rows, grouped in the database, then merged here by the answer as
the lesson reads it, so ``3,2`` and ``[3, 2]`` are one). For a code exercise the "wrong answers" are the
failed tests of its most recent failing programs, with the hint each showed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from markupsafe import Markup

from qkv.lessons import CHECKER_MISTAKES
from qkv.store.instructor.class_view_records import ExerciseCounts, WrongAnswerGroup
from qkv.store.instructor.exports import write_csv
from qkv.store.instructor.instructors import CodeEvent
from qkv.web.instructor.stats import normalise_answer, variant_label

COMMONEST = 3
UNNAMED_SHOWN = 10

ITEM_COLUMNS = [
    "lesson_id",
    "exercise_id",
    "kind",
    "question",
    "started",
    "solved",
    "solved_first_try",
    "first_try_share",
    "median_attempts",
    *(f"wrong_{n}{suffix}" for n in range(1, COMMONEST + 1) for suffix in ("", "_mistake", "_count")),
    "unnamed_wrong_answers",
    "unnamed_distinct",
]


def _empty_counts(lesson_id: str, exercise_id: str) -> ExerciseCounts:
    return ExerciseCounts(lesson_id, exercise_id, 0, 0, 0, 0, None, 0, 0)


def _sentence(sentences: dict[str, str], mistake: str) -> str:
    """A named mistake's sentence: the lesson's, else the checker's own (reverse order, say)."""
    return sentences.get(mistake) or CHECKER_MISTAKES.get(mistake, "(no longer declared by the lesson)")


def _answer_items(
    exercise: Any, groups: Sequence[WrongAnswerGroup], sentences: dict[str, str]
) -> dict[str, Any]:
    named: Counter[tuple[str, str | None]] = Counter()
    named_learners: Counter[tuple[str, str | None]] = Counter()
    unnamed: Counter[tuple[str, str]] = Counter()
    unnamed_learners: Counter[tuple[str, str]] = Counter()
    for group in groups:
        answer = normalise_answer(exercise.kind, group.answer)
        named[(answer, group.mistake)] += group.count
        named_learners[(answer, group.mistake)] += group.learners
        if group.mistake is None:
            key = (answer, variant_label(group.variant_seed))
            unnamed[key] += group.count
            unnamed_learners[key] += group.learners
    commonest = [
        {
            "answer": answer,
            "mistake": mistake,
            "sentence": _sentence(sentences, mistake) if mistake else "",
            "count": count,
            "learners": named_learners[(answer, mistake)],
        }
        for (answer, mistake), count in sorted(named.items(), key=lambda item: (-item[1], item[0][0]))[
            :COMMONEST
        ]
    ]
    grouped = [
        {
            "answer": answer,
            "variant": variant,
            "count": count,
            "learners": unnamed_learners[(answer, variant)],
        }
        for (answer, variant), count in sorted(unnamed.items(), key=lambda item: (-item[1], item[0]))
    ]
    return {"commonest": commonest, "unnamed": grouped}


def _code_items(programs: Sequence[CodeEvent]) -> dict[str, Any]:
    failed: Counter[tuple[str, str]] = Counter()
    learners: dict[tuple[str, str], set[str]] = defaultdict(set)
    unhinted: Counter[str] = Counter()
    for program in programs:
        for test in program.result.get("tests") or []:
            if not isinstance(test, dict) or test.get("status") in ("pass", "not_run"):
                continue
            name, hint = str(test.get("name", "")), str(test.get("hint") or "")
            failed[(name, hint)] += 1
            learners[(name, hint)].add(program.learner_id)
            if not hint:
                unhinted[name] += 1
    commonest = [
        {
            "answer": name,
            "mistake": None,
            "sentence": hint,
            "count": count,
            "learners": len(learners[(name, hint)]),
        }
        for (name, hint), count in sorted(failed.items(), key=lambda item: (-item[1], item[0]))[:COMMONEST]
    ]
    grouped = [
        {"answer": name, "variant": "", "count": count, "learners": len(learners[(name, "")])}
        for name, count in sorted(unhinted.items(), key=lambda item: (-item[1], item[0]))
    ]
    return {"commonest": commonest, "unnamed": grouped}


def item_statistics(
    lesson: Any,
    counts: dict[tuple[str, str], ExerciseCounts],
    groups: Sequence[WrongAnswerGroup],
    failing_programs: Callable[[str], Sequence[CodeEvent]],
) -> list[dict[str, Any]]:
    """One record per exercise of ``lesson``, in page order (see the module's description).

    ``failing_programs(exercise_id)`` gives a code exercise's recent failing programs.
    """
    by_exercise: dict[str, list[WrongAnswerGroup]] = defaultdict(list)
    for group in groups:
        by_exercise[group.exercise_id].append(group)
    items = []
    for exercise_id, exercise in lesson.exercises.items():
        texts = lesson.texts(exercise_id)
        found = counts.get((lesson.id, exercise_id)) or _empty_counts(lesson.id, exercise_id)
        wrong = (
            _code_items(failing_programs(exercise_id))
            if exercise.kind == "code"
            else _answer_items(exercise, by_exercise.get(exercise_id, []), texts.mistakes)
        )
        items.append(
            {
                "lesson_id": lesson.id,
                "id": exercise_id,
                "kind": exercise.kind,
                "part": exercise.part,
                "question": texts.prompt,
                "question_html": Markup(texts.prompt_html),
                "mistakes": texts.mistakes,
                "started": found.started,
                "solved": found.solved,
                "solved_first_try": found.solved_first_try,
                "solvers_counted": found.solvers_counted,
                "first_try_share": found.first_try_share,
                "median_attempts": found.median_attempts,
                **wrong,
            }
        )
    return items


def item_records(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The item statistics as flat CSV records (``ITEM_COLUMNS``)."""
    records = []
    for item in items:
        record: dict[str, Any] = {
            key: item[key]
            for key in (
                "lesson_id",
                "kind",
                "question",
                "started",
                "solved",
                "solved_first_try",
                "median_attempts",
            )
        }
        record["exercise_id"] = item["id"]
        share = item["first_try_share"]
        record["first_try_share"] = None if share is None else round(share, 4)
        for n, wrong in enumerate(item["commonest"], start=1):
            record[f"wrong_{n}"] = wrong["answer"]
            record[f"wrong_{n}_mistake"] = (
                f"{wrong['mistake']}: {wrong['sentence']}" if wrong["mistake"] else wrong["sentence"]
            )
            record[f"wrong_{n}_count"] = wrong["count"]
        record["unnamed_wrong_answers"] = "; ".join(
            f"{u['answer']} ×{u['count']}" + (f" ({u['variant']})" if u["variant"] else "")
            for u in item["unnamed"]
        )
        record["unnamed_distinct"] = len(item["unnamed"])
        records.append(record)
    return records


def write_items(items: Sequence[dict[str, Any]], stream: TextIO) -> None:
    """Write the item statistics CSV (spreadsheet-safe, CRLF, like every qkv CSV)."""
    write_csv(item_records(items), ITEM_COLUMNS, stream)


__all__ = ["ITEM_COLUMNS", "UNNAMED_SHOWN", "item_records", "item_statistics", "write_items"]
