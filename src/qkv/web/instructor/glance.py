"""Who is where and who is stuck: the learner × lesson grid and the "stuck now" list, shaped for the pages.

The numbers come from ``qkv.store.instructor.class_view`` (aggregates computed in the database). This module
only sorts, filters and words them: a cell says "2 of 4" and a word, never colour alone; sorting and filtering
are plain query parameters, so the grid works without JavaScript.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from qkv.store.instructor.class_view_records import LearnerStanding, Standing, StuckRule
from qkv.store.instructor.due_dates import Standing as DueStanding
from qkv.web.instructor.exports import counted_exercises
from qkv.web.instructor.late_work import LateSolves
from qkv.web.solution_credit import HelpPolicy, credit_words

MAX_FILTER = 80


class SortKey(enum.Enum):
    """What the grid is sorted by."""

    NAME = "name"
    PROGRESS = "progress"
    ACTIVITY = "activity"


class Show(enum.Enum):
    """Which learners the grid shows."""

    ALL = "all"
    STUCK = "stuck"
    ACTIVE = "active"
    NOT_STARTED = "not-started"


SHOW_LABELS = {
    Show.ALL: "every learner",
    Show.STUCK: "stuck now",
    Show.ACTIVE: "working now",
    Show.NOT_STARTED: "no exercise solved",
}
SORT_LABELS = {SortKey.NAME: "name", SortKey.PROGRESS: "progress", SortKey.ACTIVITY: "last activity"}


class CellState(enum.Enum):
    """A grid cell's state, shown as a word and a colour."""

    NONE = "not started"
    SOME = "in progress"
    DONE = "done"


@dataclass(frozen=True)
class GridQuery:
    """The grid's sort order and filters, as the query string gives them."""

    sort: SortKey = SortKey.NAME
    descending: bool = False
    text: str = ""
    show: Show = Show.ALL

    def params(self, **changes: Any) -> str:
        """The query string of this view with ``changes`` applied (for sort links and the live view).

        Examples
        --------
        >>> GridQuery().params(sort=SortKey.PROGRESS, descending=True)
        'sort=progress&order=desc&show=all'
        """
        from urllib.parse import urlencode

        values = {
            "sort": changes.get("sort", self.sort).value,
            "order": "desc" if changes.get("descending", self.descending) else "asc",
            "show": changes.get("show", self.show).value,
        }
        text = changes.get("text", self.text)
        if text:
            values["q"] = text
        return urlencode(values)


def parse_grid_query(params: Mapping[str, str]) -> GridQuery:
    """The grid's view from the query parameters ``sort``, ``order``, ``q`` and ``show``.

    Raises
    ------
    ValueError
        Naming the parameter, its value and the values it accepts.

    Examples
    --------
    >>> parse_grid_query({"sort": "activity", "order": "desc", "q": " ann "})
    GridQuery(sort=<SortKey.ACTIVITY: 'activity'>, descending=True, text='ann', show=<Show.ALL: 'all'>)
    >>> parse_grid_query({"sort": "age"})
    Traceback (most recent call last):
    ...
    ValueError: The grid cannot be sorted by 'age'; sort by name, progress or activity.
    """
    sort_value = params.get("sort", "name")
    try:
        sort = SortKey(sort_value)
    except ValueError:
        raise ValueError(
            f"The grid cannot be sorted by {sort_value[:40]!r}; sort by name, progress or activity."
        ) from None
    order = params.get("order", "desc" if sort is not SortKey.NAME else "asc")
    if order not in ("asc", "desc"):
        raise ValueError(f"The order must be asc or desc, not {order[:40]!r}.")
    show_value = params.get("show", "all")
    try:
        show = Show(show_value)
    except ValueError:
        raise ValueError(
            f"The grid cannot show {show_value[:40]!r}; show all, stuck, active or not-started."
        ) from None
    text = " ".join(params.get("q", "").split())
    if len(text) > MAX_FILTER:
        raise ValueError(f"The name filter may have at most {MAX_FILTER} characters, but it has {len(text)}.")
    return GridQuery(sort, order == "desc", text, show)


def counted_by_lesson(catalog: Any) -> dict[str, list[str]]:
    """Every lesson's exercises that count toward done, by lesson id, in catalog order (as the LMS file)."""
    return {lesson.id: counted_exercises(lesson) for lesson in catalog.lessons}


def _lateness(policy: HelpPolicy, dated: LateSolves | None) -> dict[str, Any]:
    """A cell's late solves, those after the close, and what late work earns (none without dates)."""
    if dated is None:
        return {"late": 0, "closed": 0, "late_words": None}
    standings = [solve.standing(dated.dates) for solve in dated.solves]
    return {
        "score": policy.credit(dated.solves, dated.dates),
        "late": standings.count(DueStanding.LATE),
        "closed": standings.count(DueStanding.CLOSED),
        "late_words": credit_words(dated.dates.late_credit),
    }


def _cell(
    standing: LearnerStanding,
    lesson_id: str,
    out_of: int,
    policy: HelpPolicy,
    dated: LateSolves | None = None,
) -> dict[str, Any]:
    """One lesson of one learner: the lesson's score as the LMS gets it (``HelpPolicy.credit``: help and
    late credits, ``dated``: the learner's solves of a dated lesson), how many were solved, how many of
    those after help, late or after the close, and the cell's state (from the solves, not the score)."""
    solved = standing.solved_by_lesson.get(lesson_id, 0)
    after_solution = standing.after_solution_by_lesson.get(lesson_id, 0)
    after_hints = standing.after_hints_by_lesson.get(lesson_id, 0)
    started = standing.started_by_lesson.get(lesson_id, 0)
    state = CellState.DONE if out_of and solved >= out_of else CellState.SOME if started else CellState.NONE
    late = _lateness(policy, dated)
    score = late.pop("score", None)
    return {
        **late,
        "lesson_id": lesson_id,
        "solved": policy.score(solved, after_solution=after_solution, after_hints=after_hints)
        if score is None
        else score,
        "solved_count": solved,
        "after_solution": after_solution,
        "after_hints": after_hints,
        "of": out_of,
        "state": state.name.lower(),
        "word": state.value,
    }


def _minutes(value: float) -> str:
    minutes = int(value)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h {minutes % 60} min"


def learner_row(
    standing: LearnerStanding,
    lessons: Mapping[str, int],
    now: datetime,
    rule: StuckRule,
    policy: HelpPolicy | None = None,
    dated: Mapping[tuple[str, str], LateSolves] | None = None,
) -> dict[str, Any]:
    """One learner as the grid and the API show them: each lesson's score and the total as the LMS file
    and the LMS score compute them (``policy``: what solves after help count; ``dated``: the solves of the
    course's dated lessons, by learner and lesson, weighed by their late credit and marked late)."""
    current = standing.current
    state = current.standing(now, rule) if current else None
    mine = dated or {}
    cells = [
        _cell(standing, lesson_id, out_of, policy or HelpPolicy(), mine.get((standing.id, lesson_id)))
        for lesson_id, out_of in lessons.items()
    ]
    total = sum(cell["solved"] for cell in cells)
    return {
        "id": standing.id,
        "name": standing.name,
        "display_name": standing.display_name,
        "external_id": standing.external_id,
        "solved": int(total) if float(total).is_integer() else total,
        "solved_count": standing.solved,
        "after_help": sum(cell["after_solution"] + cell["after_hints"] for cell in cells),
        "late": sum(cell["late"] + cell["closed"] for cell in cells),
        "out_of": sum(lessons.values()),
        "submissions": standing.submissions,
        "last_activity_at": standing.last_activity_at,
        "cells": cells,
        "current": None
        if current is None
        else {
            "lesson_id": current.lesson_id,
            "exercise_id": current.exercise_id,
            "attempts": current.attempts,
            "minutes": round(current.minutes_on(now), 1),
            "time_on": _minutes(current.minutes_on(now)),
            "standing": state.value if state else None,
        },
        "stuck": state is Standing.STUCK,
        "active": state is not None and state is not Standing.AWAY,
    }


def _keep(row: dict[str, Any], query: GridQuery) -> bool:
    if query.text and query.text.casefold() not in row["name"].casefold():
        return False
    if query.show is Show.STUCK:
        return bool(row["stuck"])
    if query.show is Show.ACTIVE:
        return bool(row["active"])
    if query.show is Show.NOT_STARTED:
        return int(row["solved_count"]) == 0
    return True


def grid_rows(
    standings: Sequence[LearnerStanding],
    lessons: Mapping[str, int],
    now: datetime,
    rule: StuckRule,
    query: GridQuery,
    policy: HelpPolicy | None = None,
    dated: Mapping[tuple[str, str], LateSolves] | None = None,
) -> list[dict[str, Any]]:
    """The grid's rows, filtered and sorted as ``query`` says (ties by name, then id); ``dated`` as for
    ``learner_row``."""
    rows = [learner_row(s, lessons, now, rule, policy, dated) for s in standings]
    rows = [row for row in rows if _keep(row, query)]
    rows.sort(key=lambda row: (row["name"].casefold(), row["id"]))
    if query.sort is SortKey.PROGRESS:
        rows.sort(key=lambda row: row["solved"], reverse=query.descending)
    elif query.sort is SortKey.ACTIVITY:
        never = datetime.min
        rows.sort(key=lambda row: row["last_activity_at"] or never, reverse=query.descending)
    elif query.descending:
        rows.reverse()
    return rows


__all__ = [
    "SHOW_LABELS",
    "SORT_LABELS",
    "CellState",
    "GridQuery",
    "Show",
    "SortKey",
    "counted_by_lesson",
    "grid_rows",
    "learner_row",
    "parse_grid_query",
]
