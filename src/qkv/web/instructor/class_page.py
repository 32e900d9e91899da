"""The class at a glance: the dashboard with "stuck now", the learner × lesson grid, item statistics, and
the fragments that the page's script fetches to keep them live.

Every number here is read from the database as aggregates (``qkv.store.instructor.class_view``), so a view
costs the same with 10 or 10,000 saved events per learner, and every server sharing the database shows the
same class: the live view polls the database through any server, never one server's memory.
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from qkv.lessons import CHECKER_MISTAKES, LessonError
from qkv.store.instructor.class_view import ClassView
from qkv.store.instructor.class_view_records import ExerciseCounts, LearnerStanding, StuckRule
from qkv.store.instructor.courses import EVERYONE, LearnerScope
from qkv.store.instructor.instructors import AnswerEvent, CodeEvent
from qkv.store.sql.clock import utc_now
from qkv.web.http.course_access import InCourse
from qkv.web.instructor.charts import Bar, bar_chart, percent
from qkv.web.instructor.glance import (
    SHOW_LABELS,
    SORT_LABELS,
    GridQuery,
    Show,
    SortKey,
    counted_by_lesson,
    grid_rows,
    learner_row,
    parse_grid_query,
)
from qkv.web.instructor.items import UNNAMED_SHOWN, item_statistics, write_items
from qkv.web.instructor.late_work import LateSolves, LateWork
from qkv.web.instructor.rendering import render_page
from qkv.web.instructor.stats import variant_label
from qkv.web.services import AppServices, Services

pages = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/api/instructor", include_in_schema=False)

POLL_SECONDS = 5
STUCK_SHOWN = 50


def _view(services: Services, scope: LearnerScope) -> ClassView:
    return services.store.class_view.within(scope)


def stuck_rule(services: Services) -> StuckRule:
    """The server's stuck rule (``qkv serve --stuck-attempts/--stuck-minutes``)."""
    return StuckRule(attempts=services.settings.stuck_attempts, minutes=services.settings.stuck_minutes)


def _lesson_sizes(services: Services) -> dict[str, int]:
    return {lesson_id: len(ids) for lesson_id, ids in counted_by_lesson(services.catalog).items()}


def _latest_failure(services: Services, event: AnswerEvent | CodeEvent | None) -> dict[str, Any] | None:
    """The stuck learner's latest wrong answer or failing program, with the question in its variant."""
    if event is None:
        return None
    try:
        lesson = services.catalog.lesson(event.lesson_id)
        seed = event.variant_seed if isinstance(event, AnswerEvent) else None
        texts = lesson.texts(event.exercise_id, seed)
    except LessonError:  # a lesson or exercise since removed: show the work without its question
        texts = None
    found: dict[str, Any] = {
        "at": event.created_at,
        "question_html": texts.prompt_html if texts else "",
    }
    if isinstance(event, AnswerEvent):
        sentence = ""
        if texts and event.mistake:  # the lesson's named mistake, else the checker's own (reverse order)
            sentence = texts.mistakes.get(event.mistake) or CHECKER_MISTAKES.get(event.mistake, "")
        found.update(
            kind="answer",
            answer=event.answer,
            variant=variant_label(event.variant_seed),
            mistake=event.mistake,
            sentence=sentence,
            message=event.message,
        )
    else:
        failed = [
            {"name": str(t.get("name", "")), "hint": str(t.get("hint") or "")}
            for t in event.result.get("tests") or []
            if isinstance(t, dict) and t.get("status") not in ("pass", "not_run")
        ]
        found.update(
            kind="program",
            status=event.status,
            passed=event.passed,
            total=event.total,
            failed=failed,
            message=str(event.result.get("message") or ""),
            source=event.source,
        )
    return found


def _is_code(services: Services, current: Any) -> bool | None:
    """Whether the exercise is graded as code (None when the lesson no longer has it: read both)."""
    try:
        return bool(services.catalog.lesson(current.lesson_id).exercise(current.exercise_id).kind == "code")
    except LessonError:
        return None


def stuck_now(
    services: Services, standings: list[LearnerStanding], scope: LearnerScope
) -> list[dict[str, Any]]:
    """The learners stuck now (at most ``STUCK_SHOWN``), each with their latest failure."""
    now = utc_now()
    rule = stuck_rule(services)
    found = []
    for standing in _view(services, scope).stuck(standings, rule, now)[:STUCK_SHOWN]:
        row = learner_row(standing, {}, now, rule)  # the list needs no lesson cells
        current = standing.current
        assert current is not None  # stuck learners have a current exercise
        event = _view(services, scope).latest_failure(
            standing.id, current.lesson_id, current.exercise_id, code=_is_code(services, current)
        )
        row["latest"] = _latest_failure(services, event)
        found.append(row)
    return found


def _stuck_context(services: Services, scope: LearnerScope) -> dict[str, Any]:
    rule = stuck_rule(services)
    # Only learners active within the rule's window can be stuck now: read just them.
    standings = _view(services, scope).active(utc_now() - timedelta(minutes=rule.active_minutes))
    return {"stuck": stuck_now(services, standings, scope), "rule": rule, "updated_at": utc_now()}


def _dated_solves(services: Services, scope: LearnerScope) -> dict[tuple[str, str], LateSolves]:
    """The course's learners' solves of its dated lessons, with their dates (none: no course, no dates)."""
    late = LateWork.of_course(services.store, scope.course_id)
    if late is None:
        return {}
    counted = counted_by_lesson(services.catalog)
    exercises = [(lesson, e) for lesson, ids in counted.items() if lesson in late.due for e in ids]
    return late.solves(services.store.gradebook.within(scope).rows(exercises), counted)


def _grid_context(services: Services, query: GridQuery, scope: LearnerScope) -> dict[str, Any]:
    standings = _view(services, scope).standings(counted_by_lesson(services.catalog))
    sizes = _lesson_sizes(services)
    rule = stuck_rule(services)
    now = utc_now()
    dated = _dated_solves(services, scope)
    return {
        "rows": grid_rows(standings, sizes, now, rule, query, services.settings.help_policy, dated),
        "lessons": [lesson for lesson in services.catalog.lessons if lesson.id in sizes],
        "sizes": sizes,
        "query": query,
        "sort_keys": list(SortKey),
        "sort_labels": SORT_LABELS,
        "shows": list(Show),
        "show_labels": SHOW_LABELS,
        "learner_count": len(standings),
        "help_policy_words": services.settings.help_policy.describe(),
        "rule": rule,
        "updated_at": now,
    }


def _query(request: Request) -> GridQuery:
    try:
        return parse_grid_query(dict(request.query_params))
    except ValueError as error:
        raise HTTPException(400, str(error)) from None


def exercise_numbers(services: Services, scope: LearnerScope = EVERYONE) -> dict[str, Any]:
    """The dashboard's numbers (the JSON API's too): per lesson and exercise, from the kept totals.

    ``learners`` counts every learner of ``scope`` (the course's, or the server's) with saved work;
    ``solved`` of an exercise is the number of gradebook rows with ``solved`` true, so the dashboard and
    every export agree.
    """
    counts = _view(services, scope).exercise_counts()
    learners = _view(services, scope).learner_count()
    chapters = []
    for chapter in services.catalog.chapters:
        lessons = []
        for lesson in services.catalog.lessons:
            if lesson.chapter_id != chapter.id:
                continue
            exercises = []
            for exercise_id, exercise in lesson.exercises.items():
                found = counts.get((lesson.id, exercise_id)) or ExerciseCounts(
                    lesson.id, exercise_id, 0, 0, 0, 0, None, 0, 0
                )
                exercises.append(
                    {
                        "id": exercise_id,
                        "kind": exercise.kind,
                        "part": exercise.part,
                        "label": exercise.label or exercise_id,
                        "stats": {
                            "started": found.started,
                            "solved": found.solved,
                            "solved_first_try": found.solved_first_try,
                            "first_try_share": found.first_try_share,
                            "median_attempts": found.median_attempts,
                            "attempts": found.attempts,
                            "submissions": found.submissions,
                        },
                    }
                )
            lessons.append(
                {"id": lesson.id, "title": lesson.title, "place": lesson.place, "exercises": exercises}
            )
        chapters.append({"id": chapter.id, "title": chapter.title, "lessons": lessons})
    return {"learners": learners, "chapters": chapters}


def _median(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _overview_chart(lesson: dict[str, Any], learners: int) -> Any:
    bars, rows = [], []
    for ex in lesson["exercises"]:
        s = ex["stats"]
        share = s["solved"] / learners if learners else None
        # The label says what the bar is a share of; the value beside the bar has room for the percentage.
        bars.append(
            Bar(
                f"{ex['id']} ({ex['kind']}): solved by {s['solved']} of {learners} learners",
                share or 0.0,
                percent(share if learners else 0.0),
            )
        )
        rows.append(
            [
                ex["id"],
                ex["kind"],
                s["started"],
                s["solved"],
                percent(share if learners else 0.0),
                percent(s["first_try_share"]),
                _median(s["median_attempts"]),
            ]
        )
    return bar_chart(
        f"overview-{lesson['id']}",
        f"{lesson['id']}: learners who solved each exercise, "
        f"as a share of all {learners} learners with saved work",
        bars,
        [
            "Exercise",
            "Kind",
            "Started",
            "Solved",
            "Share of all learners",
            "Solved at the first try (of solvers)",
            "Median attempts to solve",
        ],
        rows,
    )


@pages.get("/instructor", response_class=HTMLResponse, name="instructor_dashboard")
def instructor_dashboard(request: Request, services: AppServices, access: InCourse) -> Response:
    """Who is stuck now, then every lesson's exercises (from the kept totals), then the exports."""
    context = {
        "poll_seconds": POLL_SECONDS,
        **_lessons_context(services, access.scope),
        **_stuck_context(services, access.scope),
    }
    return render_page(request, services, "instructor/dashboard.html", context, access)


def _lessons_context(services: Services, scope: LearnerScope) -> dict[str, Any]:
    data = exercise_numbers(services, scope)
    for chapter in data["chapters"]:
        for lesson in chapter["lessons"]:
            lesson["chart"] = _overview_chart(lesson, data["learners"])
    return {"data": data, "updated_at": utc_now()}


@pages.get("/instructor/live/lessons", response_class=HTMLResponse)
def live_lessons(request: Request, services: AppServices, access: InCourse) -> Response:
    """The dashboard's lessons alone (charts and tables), for the dashboard's script to swap in."""
    context = _lessons_context(services, access.scope)
    return render_page(request, services, "instructor/_lessons.html", context, access)


@pages.get("/instructor/class", response_class=HTMLResponse, name="instructor_class")
def instructor_grid(request: Request, services: AppServices, access: InCourse) -> Response:
    """The learner × lesson grid: sortable, filterable, with each learner's current exercise."""
    context = {"poll_seconds": POLL_SECONDS, **_grid_context(services, _query(request), access.scope)}
    return render_page(request, services, "instructor/class.html", context, access)


@pages.get("/instructor/live/stuck", response_class=HTMLResponse)
def live_stuck(request: Request, services: AppServices, access: InCourse) -> Response:
    """The "stuck now" list alone, for the dashboard's script to swap in."""
    return render_page(
        request, services, "instructor/_stuck.html", _stuck_context(services, access.scope), access
    )


@pages.get("/instructor/live/grid", response_class=HTMLResponse)
def live_grid(request: Request, services: AppServices, access: InCourse) -> Response:
    """The grid alone (same query parameters as the page), for the grid page's script to swap in."""
    context = _grid_context(services, _query(request), access.scope)
    return render_page(request, services, "instructor/_grid.html", context, access)


def _items(services: Services, lesson: Any, scope: LearnerScope) -> list[dict[str, Any]]:
    view = _view(services, scope)
    return item_statistics(
        lesson,
        view.exercise_counts(),
        view.wrong_answers(lesson.id),
        lambda exercise_id: view.failing_programs(lesson.id, exercise_id),
    )


@pages.get("/instructor/lessons/{lesson_id}/items", response_class=HTMLResponse, name="instructor_items")
def instructor_items(
    lesson_id: Annotated[str, Path(max_length=32)],
    request: Request,
    services: AppServices,
    access: InCourse,
) -> Response:
    """Item statistics of one lesson: first-try share, median attempts, commonest wrong answers."""
    lesson = services.lesson(lesson_id)
    items = _items(services, lesson, access.scope)
    context = {"lesson": lesson, "items": items, "unnamed_shown": UNNAMED_SHOWN}
    return render_page(request, services, "instructor/items.html", context, access)


@pages.get("/instructor/export/items.csv", name="instructor_items_export")
def export_items(request: Request, services: AppServices, access: InCourse) -> Response:
    """Every lesson's item statistics as one CSV (the course's learners only)."""
    out = io.StringIO()
    lessons = services.catalog.lessons
    write_items([item for lesson in lessons for item in _items(services, lesson, access.scope)], out)
    headers = {"Cache-Control": "no-store", "Content-Disposition": 'attachment; filename="qkv-items.csv"'}
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)


@api.get("/dashboard", summary="The class dashboard's numbers")
def api_dashboard(request: Request, services: AppServices, access: InCourse) -> dict[str, Any]:
    """Per lesson and exercise: started, solved, first-try solvers, median attempts (from the totals)."""
    return exercise_numbers(services, access.scope)


@api.get("/class", summary="Where every learner is")
def api_class(request: Request, services: AppServices, access: InCourse) -> dict[str, Any]:
    """The grid as JSON: per learner, exercises solved per lesson, current exercise, stuck or not."""
    context = _grid_context(services, _query(request), access.scope)
    rule = context["rule"]
    rows = [
        {
            **row,
            "last_activity_at": row["last_activity_at"].isoformat() + "Z"
            if row["last_activity_at"]
            else None,
        }
        for row in context["rows"]
    ]
    return {
        "learners": context["learner_count"],
        "lessons": context["sizes"],
        "stuck_rule": {
            "attempts": rule.attempts,
            "minutes": rule.minutes,
            "active_minutes": rule.active_minutes,
        },
        "rows": rows,
        "updated_at": context["updated_at"].isoformat() + "Z",
    }
