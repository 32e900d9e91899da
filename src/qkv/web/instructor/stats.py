"""The class dashboard's numbers: per exercise, who started and solved, attempts, variants, mistakes, tests.

Everything is computed from the saved events (``InstructorDesk.answer_events`` and ``code_events``)
and the lessons' own declarations (exercise kinds, named mistakes, choices), so the counts are
exact and nothing here knows any particular lesson.

Definitions (also in docs/instructor.md):

- *started*: learners with at least one saved answer or program for the exercise;
- *solved*: learners with at least one correct answer or passing program;
- *attempts to solve*: a solver's counted attempts up to and including their first correct one
  (unreadable answers cost no attempt; every program counts); the median is over solvers;
- *solve rate by variant*: for each variant a learner answered in (the page's own numbers or a
  seed), the share of those learners who solved it in that variant;
- *named mistakes*: wrong answers whose stored mistake id is one of the exercise's ``[mistakes]``
  (for multiple choice: the wrong letter picked), or one the checker names by itself
  (``qkv.lessons.CHECKER_MISTAKES``: the right numbers in reverse order); answers saved before mistake
  ids were stored have none and are counted as *not recorded*;
- *unmatched wrong answers*: readable wrong answers that no named mistake matched, grouped by the
  answer as the lesson reads it, per variant;
- *per-test failure rate*: of the programs in which that test ran, the share in which it failed
  (``fail``, ``error`` or ``timeout``); a test that an earlier one stopped (``not_run``, results
  version 3) is counted apart, not as a failure.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from qkv.lessons import CHECKER_MISTAKES
from qkv.lessons.answers import AnswerFormatError, format_value, parse_numbers
from qkv.store.instructor.instructors import AnswerEvent, CodeEvent, HelpEvent

UNMATCHED_SHOWN = 10
VARIANTS_SHOWN = 8
PAGE_VARIANT = "the page's numbers"


def variant_label(seed: int | None) -> str:
    """How a variant is named on the dashboard.

    Examples
    --------
    >>> variant_label(None), variant_label(17)
    ("the page's numbers", 'variant 17')
    """
    return PAGE_VARIANT if seed is None else f"variant {seed}"


def normalise_answer(kind: str, answer: str) -> str:
    """The answer as the lesson reads it, so ``3,2`` and ``[3, 2]`` count as one wrong answer.

    Examples
    --------
    >>> normalise_answer("numeric", " (3,2) "), normalise_answer("numeric", "13")
    ('[3, 2]', '13')
    >>> normalise_answer("letter", " v ")
    'V'
    """
    if kind == "numeric":
        try:
            numbers = parse_numbers(answer)
            return format_value(numbers[0] if len(numbers) == 1 else numbers)
        except AnswerFormatError:
            return " ".join(answer.split())
    return " ".join(answer.split()).upper()


def _median(values: Sequence[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def answer_exercise_stats(exercise: Any, events: Sequence[AnswerEvent]) -> dict[str, Any]:
    """The numbers of one numeric, letter or choice exercise from its saved answers (oldest first)."""
    by_learner: dict[str, list[AnswerEvent]] = defaultdict(list)
    for event in events:
        by_learner[event.learner_id].append(event)
    attempts_to_solve = _answer_attempts_to_solve(by_learner.values())
    wrong = [e for e in events if not e.correct and e.counted_as_attempt]
    unmatched = _unmatched_answers(exercise.kind, wrong)
    return {
        "started": len(by_learner),
        "solved": len(attempts_to_solve),
        "median_attempts": _median(attempts_to_solve),
        "answers": len(events),
        "unreadable": sum(1 for e in events if not e.counted_as_attempt),
        "wrong": len(wrong),
        "variants": _variant_rates(events),
        "mistakes": _mistake_counts(exercise, wrong),
        "unmatched": unmatched[:UNMATCHED_SHOWN],
        "unmatched_distinct": len(unmatched),
    }


def _answer_attempts_to_solve(by_learner: Iterable[Sequence[AnswerEvent]]) -> list[int]:
    """For each learner who solved it, the counted attempts it took (a first right answer included)."""
    attempts_to_solve = []
    for learner_events in by_learner:
        counted = 0
        for event in learner_events:
            counted += 1 if event.counted_as_attempt else 0
            if event.correct:
                attempts_to_solve.append(counted)
                break
    return attempts_to_solve


def _variant_rates(events: Sequence[AnswerEvent]) -> list[dict[str, Any]]:
    """Learners and solvers per variant, the most tried first, the rest together in one last row."""
    tried: dict[int | None, set[str]] = defaultdict(set)
    solved_in: dict[int | None, set[str]] = defaultdict(set)
    for event in events:
        tried[event.variant_seed].add(event.learner_id)
        if event.correct:
            solved_in[event.variant_seed].add(event.learner_id)
    variants: list[dict[str, Any]] = [
        {
            "variant": variant_label(seed),
            "learners": len(learners),
            "solved": len(solved_in[seed]),
            "rate": _rate(len(solved_in[seed]), len(learners)),
        }
        for seed, learners in sorted(tried.items(), key=lambda item: (-len(item[1]), item[0] is not None))
    ]
    shown, rest = variants[:VARIANTS_SHOWN], variants[VARIANTS_SHOWN:]
    if rest:
        learners_rest = sum(v["learners"] for v in rest)
        solved_rest = sum(v["solved"] for v in rest)
        shown.append(
            {
                "variant": f"{len(rest)} other variants",
                "learners": learners_rest,
                "solved": solved_rest,
                "rate": _rate(solved_rest, learners_rest),
            }
        )
    return shown


def _mistake_counts(exercise: Any, wrong: Sequence[AnswerEvent]) -> list[dict[str, Any]]:
    """How often (and by how many learners) each named mistake was made, the most frequent first."""
    mistake_counts = Counter(e.mistake for e in wrong if e.mistake is not None)
    named = _declared_mistakes(exercise, mistake_counts)
    mistake_learners: dict[str, set[str]] = defaultdict(set)
    for e in wrong:
        if e.mistake is not None:
            mistake_learners[e.mistake].add(e.learner_id)
    mistakes: list[dict[str, Any]] = [
        {"id": key, "message": message, "count": mistake_counts[key], "learners": len(mistake_learners[key])}
        for key, message in named.items()
    ]
    mistakes += [  # ids stored by an earlier version of the lesson, no longer declared
        {"id": key, "message": "(no longer declared by the lesson)", "count": count, "learners": 0}
        for key, count in mistake_counts.items()
        if key not in named
    ]
    mistakes.sort(key=lambda m: -m["count"])
    return mistakes


def _unmatched_answers(kind: str, wrong: Sequence[AnswerEvent]) -> list[dict[str, Any]]:
    """The wrong answers no mistake names, grouped by variant and normalised text, the most frequent first."""
    unmatched_counts: Counter[tuple[str, str]] = Counter()
    unmatched_learners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in wrong:
        if e.mistake is None:
            key = (variant_label(e.variant_seed), normalise_answer(kind, e.answer))
            unmatched_counts[key] += 1
            unmatched_learners[key].add(e.learner_id)
    unmatched = [
        {
            "variant": variant,
            "answer": answer,
            "count": count,
            "learners": len(unmatched_learners[(variant, answer)]),
        }
        for (variant, answer), count in sorted(unmatched_counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    return unmatched


def _declared_mistakes(exercise: Any, counted: Iterable[str] = ()) -> dict[str, str]:
    """The exercise's named mistakes; with the checker's own (reverse order) among ``counted``, those too."""
    if exercise.kind == "choice":
        return {choice.letter: choice.feedback for choice in exercise.choices if not choice.correct}
    checker = {key: CHECKER_MISTAKES[key] for key in counted if key in CHECKER_MISTAKES}
    return {**checker, **exercise.mistakes}


def code_exercise_stats(events: Sequence[CodeEvent]) -> dict[str, Any]:
    """The numbers of one code exercise from its saved programs (oldest first)."""
    by_learner: dict[str, list[CodeEvent]] = defaultdict(list)
    for event in events:
        by_learner[event.learner_id].append(event)
    attempts_to_solve = []
    for learner_events in by_learner.values():
        for number, event in enumerate(learner_events, start=1):
            if event.status == "pass":
                attempts_to_solve.append(number)
                break
    runs: Counter[str] = Counter()
    not_run: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    functions: dict[str, str] = {}
    hints: Counter[str] = Counter()
    hint_learners: dict[str, set[str]] = defaultdict(set)
    ran = 0
    for event in events:
        tests = [t for t in event.result.get("tests") or [] if isinstance(t, dict) and t.get("name")]
        if tests:
            ran += 1
        for test in tests:
            name = str(test["name"])
            functions.setdefault(name, str(test.get("function") or ""))
            if test.get("status") == "not_run":  # results v3: an earlier test stopped the run
                not_run[name] += 1
                continue
            runs[name] += 1
            if test.get("status") != "pass":
                failures[name] += 1
                hint = test.get("hint")
                if isinstance(hint, str) and hint:
                    hints[hint] += 1
                    hint_learners[hint].add(event.learner_id)
    tests_table = [
        {
            "name": name,
            "function": functions[name],
            "runs": runs[name],
            "failed": failures[name],
            "not_run": not_run[name],
            "rate": _rate(failures[name], runs[name]),
        }
        for name in functions  # first-seen order, which is the suite's order
    ]
    return {
        "started": len(by_learner),
        "solved": len(attempts_to_solve),
        "median_attempts": _median(attempts_to_solve),
        "programs": len(events),
        "programs_tested": ran,
        "errors": sum(1 for e in events if e.status == "error"),
        "tests": tests_table,
        "hints": [
            {"hint": hint, "count": count, "learners": len(hint_learners[hint])}
            for hint, count in sorted(hints.items(), key=lambda item: (-item[1], item[0]))
        ],
    }


def lesson_numbers(
    lesson: Any, answers: Iterable[AnswerEvent], programs: Iterable[CodeEvent]
) -> dict[str, Any]:
    """One lesson's exercises with their detailed numbers, from that lesson's kept answers and programs.

    Returns
    -------
    dict
        ``{"id", "title", "place", "exercises": [{"id", "kind", "part", "label", "stats"}]}``; each
        exercise's ``stats`` is ``answer_exercise_stats`` or ``code_exercise_stats``.
    """
    answers_by: dict[str, list[AnswerEvent]] = defaultdict(list)
    for a in answers:
        if a.lesson_id == lesson.id:
            answers_by[a.exercise_id].append(a)
    code_by: dict[str, list[CodeEvent]] = defaultdict(list)
    for c in programs:
        if c.lesson_id == lesson.id:
            code_by[c.exercise_id].append(c)
    exercises = []
    for exercise_id, exercise in lesson.exercises.items():
        stats = (
            code_exercise_stats(code_by.get(exercise_id, []))
            if exercise.kind == "code"
            else answer_exercise_stats(exercise, answers_by.get(exercise_id, []))
        )
        exercises.append(
            {
                "id": exercise_id,
                "kind": exercise.kind,
                "part": exercise.part,
                "label": exercise.label or exercise_id,
                "stats": stats,
            }
        )
    return {"id": lesson.id, "title": lesson.title, "place": lesson.place, "exercises": exercises}


def _program_item(c: CodeEvent) -> dict[str, Any]:
    failed = [
        t
        for t in c.result.get("tests") or []
        if isinstance(t, dict) and t.get("status") not in ("pass", "not_run")
    ]
    return {
        "type": "program",
        "at": c.created_at,
        "order": (c.created_at, 1, c.id),
        "lesson_id": c.lesson_id,
        "exercise_id": c.exercise_id,
        "status": c.status,
        "passed": c.passed,
        "total": c.total,
        "message": str(c.result.get("message") or ""),
        "failed": [
            {
                "name": str(t.get("name", "")),
                "hint": str(t.get("hint") or ""),
                "call": str(t.get("call") or ""),
            }
            for t in failed
        ],
        "source": c.source,
    }


def after_help(program: CodeEvent, help_events: Iterable[HelpEvent]) -> str:
    """What help the learner had been shown on the program's exercise before it was sent: "solution",
    "hints" or "" (none), so that a passing program in the timeline says it came after help.

    Examples
    --------
    >>> from datetime import datetime
    >>> from types import SimpleNamespace as NS
    >>> at = datetime(2026, 1, 1, 10, 0)
    >>> program = NS(lesson_id="L1", exercise_id="f", created_at=at)
    >>> hint = NS(lesson_id="L1", exercise_id="f", hint=1, created_at=datetime(2026, 1, 1, 9, 0))
    >>> after_help(program, [hint]), after_help(program, [])
    ('hints', '')
    >>> after_help(program, [hint, NS(lesson_id="L1", exercise_id="f", hint=0, created_at=hint.created_at)])
    'solution'
    """
    before = [
        h
        for h in help_events
        if (h.lesson_id, h.exercise_id) == (program.lesson_id, program.exercise_id)
        and h.created_at < program.created_at
    ]
    if any(h.hint == 0 for h in before):
        return "solution"
    return "hints" if before else ""


def timeline(
    answers: Iterable[AnswerEvent],
    programs: Iterable[CodeEvent],
    shown: Iterable[HelpEvent] = (),
    every_help: Sequence[HelpEvent] = (),
) -> list[dict[str, Any]]:
    """One learner's answers, programs and the help they were shown ("hint 2", "solution shown"), merged
    in the order they were saved; a passing program says the help shown before it (``every_help``: all the
    learner's, not only this page's)."""
    items: list[dict[str, Any]] = [
        {
            "type": "answer",
            "at": a.created_at,
            "order": (a.created_at, 0, a.id),
            "lesson_id": a.lesson_id,
            "exercise_id": a.exercise_id,
            "answer": a.answer,
            "correct": a.correct,
            "counted_as_attempt": a.counted_as_attempt,
            "mistake": a.mistake,
            "message": a.message,
            "variant": variant_label(a.variant_seed),
        }
        for a in answers
    ]
    items += [
        {**_program_item(c), "after_help": after_help(c, every_help) if c.status == "pass" else ""}
        for c in programs
    ]
    items += [
        {
            "type": "help",
            "at": h.created_at,
            "order": (h.created_at, 2, h.id),
            "lesson_id": h.lesson_id,
            "exercise_id": h.exercise_id,
            "hint": h.hint,
            "what": h.what,
        }
        for h in shown
    ]
    items.sort(key=lambda item: item["order"])
    for item in items:
        del item["order"]
    return items
