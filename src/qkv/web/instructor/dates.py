"""The instructor's dates page and a learner's extension: what ``qkv courses due | extend`` do, from the view.

The page also counts, per lesson, the course's kept programs "graded with an older version of this
lesson" (their suite version is not today's: ``qkv regrade`` grades them again).

``/instructor/dates`` lists the course's due dates, closes and late credit, in the course's time zone, and
every extension; an instructor of the course sets or clears a lesson's dates with its form. A learner's page
(``/instructor/learners/ID``) shows their extensions, and an instructor gives or revokes one there. Both
forms carry the session's CSRF token; a teaching assistant reads the dates but cannot change them (403).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.lessons.suite_versions import suite_version
from qkv.store.instructor.due_dates import extension_until, local_text, parse_when
from qkv.web.http.course_access import CourseAccess, InCourse
from qkv.web.http.forms import form_body_schema, parse_form
from qkv.web.http.instructor_auth import CSRF_FIELD, InstructorAuth
from qkv.web.instructor.rendering import NO_STORE, render_page
from qkv.web.services import AppServices, Services

router = APIRouter(include_in_schema=False)
LearnerId = Annotated[str, Path(max_length=36)]


@dataclass(frozen=True)
class ShownExtension:
    """An extension as a page shows it."""

    learner_id: str
    lesson_id: str
    until: str


def install(app: FastAPI, services: Services) -> None:
    """Add the routes, and ``learner_extensions(course_id, learner_id)`` to the templates."""

    def learner_extensions(course_id: str | None, learner_id: str) -> list[ShownExtension]:
        if course_id is None:
            return []
        zone = services.store.due_dates.time_zone(course_id)
        return [
            ShownExtension(e.learner_id, e.lesson_id, local_text(e.until_at, zone))
            for e in services.store.due_dates.extensions(course_id, learner_id)
        ]

    services.templates.env.globals["learner_extensions"] = learner_extensions
    app.include_router(router)


async def _checked_form(request: Request, access: CourseAccess) -> dict[str, str]:
    auth: InstructorAuth = request.app.state.qkv_instructor
    body = await request.body()
    form = parse_form(body, request.headers.get("content-type", ""), max_fields=8, max_bytes=4096)
    auth.check_csrf(request, access.signed_in, form.get(CSRF_FIELD, ""))
    return form


def _course_id(access: CourseAccess) -> str:
    if access.course is None:
        raise HTTPException(
            404,
            "Dates belong to a course, and this view shows every learner of the server: choose a course with "
            "the course picker first.",
        )
    return access.course.id


def _check_lesson(services: Services, lesson_id: str) -> None:
    if all(lesson.id != lesson_id for lesson in services.catalog.lessons):
        raise HTTPException(400, f"There is no lesson {lesson_id[:40]!r} in this chapter.")


def _fraction(text: str) -> float:
    try:
        return float(text) if text.strip() else 1.0
    except ValueError:
        raise HTTPException(
            400, f"The late credit must be a number from 0 to 1, not {text[:20]!r}."
        ) from None


@router.get("/instructor/dates", response_class=HTMLResponse, name="instructor_dates")
def dates_page(request: Request, services: AppServices, access: InCourse) -> Response:
    """The course's due dates, closes, late credit and extensions, in the course's time zone."""
    course_id = _course_id(access)
    dates = services.store.due_dates
    zone = dates.time_zone(course_id)
    rows = [
        {
            "lesson_id": d.lesson_id,
            "due": local_text(d.due_at, zone),
            "close": local_text(d.close_at, zone),
            "late_credit": d.late_credit,
        }
        for d in dates.for_course(course_id)
    ]
    extensions = [
        ShownExtension(e.learner_id, e.lesson_id, local_text(e.until_at, zone))
        for e in dates.extensions(course_id)
    ]
    context: dict[str, Any] = {
        "rows": rows,
        "extensions": extensions,
        "zone": dates.time_zone_name(course_id) or "the server's time zone",
        "lessons": [(lesson.id, lesson.title) for lesson in services.catalog.lessons],
        "older": _older_versions(services, access),
    }
    return render_page(request, services, "instructor/dates.html", context, access)


def _older_versions(services: Services, access: CourseAccess) -> dict[str, int]:
    """Per lesson with code exercises, the course's kept programs graded with another version of it."""
    versions = {
        lesson.id: suite_version(lesson)
        for lesson in services.catalog.lessons
        if any(exercise.kind == "code" for exercise in lesson.exercises.values())
    }
    return services.store.regrades.older_counts(versions, access.scope)


def _set_dates(services: Services, course_id: str, form: dict[str, str]) -> None:
    lesson_id = form.get("lesson", "")
    _check_lesson(services, lesson_id)
    dates = services.store.due_dates
    if form.get("clear"):
        dates.clear_due(course_id, lesson_id)
        return
    zone = dates.time_zone(course_id)
    try:
        due_at = parse_when(form.get("due", ""), zone)
        close_text = form.get("close", "").strip()
        close_at = parse_when(close_text, zone) if close_text else None
        dates.set_due(course_id, lesson_id, due_at, close_at, _fraction(form.get("late_credit", "")))
    except ValueError as error:
        raise HTTPException(400, str(error)) from None


@router.post(
    "/instructor/dates",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(
        lesson="The lesson's id.",
        due="When it is due (YYYY-MM-DD HH:MM in the course's time zone).",
        close="An optional hard close.",
        late_credit="What late work earns, from 0 to 1.",
        clear="Non-empty: take the lesson's dates away.",
        csrf_token="The CSRF token of the instructor page.",
    ),
)
async def set_dates(request: Request, services: AppServices, access: InCourse) -> Response:
    """Set or clear a lesson's dates in the course (instructors only; 400 with a sentence for bad input)."""
    form = await _checked_form(request, access)
    course_id = _course_id(access)
    access.require_instructor("change the course's dates")
    await run_in_threadpool(_set_dates, services, course_id, form)
    return RedirectResponse("/instructor/dates", status_code=303, headers=NO_STORE)


def _extend(services: Services, course_id: str, learner_id: str, form: dict[str, str]) -> None:
    lesson_id = form.get("lesson", "")
    dates = services.store.due_dates
    if form.get("revoke"):
        dates.unextend(course_id, learner_id, lesson_id)
        return
    due = dates.due(course_id, lesson_id)
    if due is None:
        raise HTTPException(400, f"The lesson {lesson_id[:40]!r} has no due date in this course to extend.")
    try:
        until_text, days_text = form.get("until", "").strip(), form.get("days", "").strip()
        until = parse_when(until_text, dates.time_zone(course_id)) if until_text else None
        if days_text and not days_text.isdigit():
            raise ValueError(f"The number of days must be a whole number, not {days_text[:20]!r}.")
        days = int(days_text) if days_text else None
        dates.extend(course_id, learner_id, lesson_id, extension_until(due.due_at, until=until, days=days))
    except ValueError as error:
        raise HTTPException(400, str(error)) from None


@router.post(
    "/instructor/learners/{learner_id}/extension",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(
        lesson="The lesson's id.",
        until="The learner's new due date (YYYY-MM-DD HH:MM in the course's time zone).",
        days="Or: days after the course's due date.",
        revoke="Non-empty: revoke the learner's extension of the lesson.",
        csrf_token="The CSRF token of the instructor page.",
    ),
)
async def extend(
    learner_id: LearnerId, request: Request, services: AppServices, access: InCourse
) -> Response:
    """Give or revoke a learner's extension (instructors only; another course's learner answers 404)."""
    form = await _checked_form(request, access)
    course_id = _course_id(access)
    if not await run_in_threadpool(services.store.courses.is_member, course_id, learner_id):
        raise HTTPException(404, f"No learner with the id {learner_id!r} has saved any work.")
    access.require_instructor("give extensions")
    await run_in_threadpool(_extend, services, course_id, learner_id, form)
    return RedirectResponse(f"/instructor/learners/{learner_id}", status_code=303, headers=NO_STORE)


__all__ = ["ShownExtension", "install"]
