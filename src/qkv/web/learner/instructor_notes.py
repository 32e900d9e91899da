"""An instructor's note put first in a learner's result, for a failing function whose behaviour the
instructor named (``qkv mistakes name``, the page "Mistakes of this class").

The notes are read from the database when a result is shown, never stored in it: a program graded on this
server or by a remote grader, a result looked at again on the lesson's page, all get the notes named by the
time they are shown. A test of a noted function carries ``note`` (the sentence); the document lists the
notes under ``notes`` (``{"group", "function", "sentence", "by": "instructor"}``), and the page shows the
note before the test's own message, marked as the instructor's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from qkv.store import Store

__all__ = ["progress_with_notes", "with_notes"]


def with_notes(
    store: Store,
    learner_id: str,
    lesson_id: str,
    exercise_id: str,
    result: Mapping[str, Any],
    *,
    looked_again: bool = False,
) -> dict[str, Any]:
    """``result`` with the instructors' notes its failing functions get (a copy; ``result`` is unchanged).

    Each note shown is recorded for the events export: every time with a new result, once per learner and
    note when a result is ``looked_again`` (the lesson's page, the progress document).
    """
    document = dict(result)
    notes = store.mistakes.notes_for(learner_id, lesson_id, exercise_id, result)
    if not notes:
        return document
    by_function = {note.function: note for note in notes}
    tests = copy.deepcopy(list(document.get("tests") or []))
    for test in tests:
        if isinstance(test, dict) and test.get("status") != "pass" and test.get("function") in by_function:
            test["note"] = by_function[test["function"]].sentence
    document["tests"] = tests
    document["notes"] = [
        {"group": note.group, "function": note.function, "sentence": note.sentence, "by": "instructor"}
        for note in notes
    ]
    store.mistakes.record_shown(learner_id, lesson_id, exercise_id, notes, once=looked_again)
    return document


def progress_with_notes(
    store: Store, learner_id: str, lesson_id: str, progress: dict[str, Any]
) -> dict[str, Any]:
    """The PROGRESS document with the notes each code exercise's last result gets (in place; returned)."""
    for exercise_id, code in (progress.get("code") or {}).items():
        result = code.get("result") if isinstance(code, dict) else None
        if isinstance(result, Mapping) and result.get("status") == "fail" and result.get("signatures"):
            code["result"] = with_notes(store, learner_id, lesson_id, exercise_id, result, looked_again=True)
    return progress
