"""The instructor's view: sign-in, the class dashboard, one learner's timeline, the exports.

Pages under ``/instructor`` and the API under ``/api/instructor`` need an instructor session
(``qkv.web.http.instructor_auth``); learner pages never link here. The numbers come from
``stats.py``, the charts from ``charts.py``, the files from ``exports.py``; the pages render through
``rendering.py``.
"""

from __future__ import annotations

import io
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.store.instructor.courses import LearnerScope
from qkv.web.http.course_access import WHOLE_SERVER, InCourse, check_choice
from qkv.web.http.forms import form_body_schema, parse_form
from qkv.web.http.instructor_auth import CSRF_FIELD, InstructorAuth, same_origin
from qkv.web.http.sign_in_links import instructor_sign_in_url
from qkv.web.instructor import class_page, same_programs
from qkv.web.instructor.charts import Bar, bar_chart, percent, plural
from qkv.web.instructor.exports import (
    catalog_exercises,
    write_events,
    write_gradebook,
    write_lms,
)
from qkv.web.instructor.late_work import LateWork
from qkv.web.instructor.rendering import NO_STORE, Instructor, auth_of, render_page
from qkv.web.instructor.stats import lesson_numbers, timeline
from qkv.web.services import AppServices, Services

pages = APIRouter(include_in_schema=False)
# Not in /openapi.json or /docs, which learners can read: docs/instructor.md describes it.
api = APIRouter(prefix="/api/instructor", tags=["instructor API"], include_in_schema=False)

_MAX_FORM_BYTES = 4096
_MAX_FORM_FIELDS = 8  # the forms have one or two fields; a browser adds none


def install(app: FastAPI, services: Services, secret_key: str) -> None:
    """Register the instructor's routes and keep their access checker on ``app.state``."""
    app.state.qkv_instructor = InstructorAuth(
        secret_key, services.store.instructors, secure=services.settings.secure_cookies
    )

    # First: its /instructor/export/items.csv must win over this module's /instructor/export/{name}.
    app.include_router(class_page.pages)
    app.include_router(class_page.api)
    app.include_router(same_programs.router)  # the similarity report
    app.include_router(pages)
    app.include_router(api)


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    return parse_form(body, content_type, max_fields=_MAX_FORM_FIELDS, max_bytes=_MAX_FORM_BYTES)


# -- signing in and out ------------------------------------------------------------------------------


@pages.get("/instructor/sign-in", response_class=HTMLResponse, name="instructor_sign_in")
def sign_in_page(request: Request, services: AppServices, token: str = "") -> Response:
    """The page a sign-in link opens: a button that uses the link (a link preview cannot use it up).

    The link carries its token in the URL's fragment, which no request holds; the page's script puts it
    in the form. A link of the old form (the token in the query) is sent on to the fragment form.
    """
    if token:
        return RedirectResponse(instructor_sign_in_url("", token[:200]), 303, headers=NO_STORE)
    return render_page(request, services, "instructor/sign_in.html", {}, None)


@pages.post(
    "/instructor/sign-in",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(token="The one-time token of the sign-in link."),
)
async def sign_in(request: Request) -> Response:
    """Use up a one-time sign-in token and set the instructor cookie."""
    if not same_origin(request):
        raise HTTPException(403, "Instructor sign-in is only accepted from qkv's own sign-in page.")
    token = (await _form(request)).get("token", "")
    auth = auth_of(request)
    session = await run_in_threadpool(auth.desk.redeem, token)
    if session is None:
        raise HTTPException(
            401,
            "This sign-in link was already used, has expired or was never issued; ask for a new one with "
            "'qkv instructor link NAME'.",
        )
    response = RedirectResponse("/instructor", status_code=303, headers=NO_STORE)
    response.headers.append("set-cookie", auth.cookie_header(session))
    return response


@pages.post(
    "/instructor/sign-out",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(csrf_token="The CSRF token of the instructor page."),
)
async def sign_out(request: Request, signed_in: Instructor) -> Response:
    """End the session on every server (CSRF-checked: header ``X-CSRF-Token`` or form field)."""
    form = (await _form(request)) if "x-csrf-token" not in request.headers else {}
    auth = auth_of(request)
    auth.check_csrf(request, signed_in, form.get(CSRF_FIELD, ""))
    await run_in_threadpool(auth.desk.end_session, signed_in.session)
    response = RedirectResponse("/instructor/sign-in", status_code=303, headers=NO_STORE)
    response.headers.append("set-cookie", auth.clear_cookie_header())
    return response


@pages.post(
    "/instructor/course",
    response_class=HTMLResponse,
    name="instructor_course",
    openapi_extra=form_body_schema(
        course="The id of the course to look at ('all': every learner, administrators only).",
        csrf_token="The CSRF token of the instructor page.",
    ),
)
async def choose_course(request: Request, services: AppServices, signed_in: Instructor) -> Response:
    """The course picker: this session looks at another of the instructor's courses (404 if not theirs)."""
    form = await _form(request)
    auth = auth_of(request)
    auth.check_csrf(request, signed_in, form.get(CSRF_FIELD, ""))
    chosen = await run_in_threadpool(check_choice, services, signed_in, form.get("course", ""))
    await run_in_threadpool(auth.desk.choose_course, signed_in.session, chosen.course_id or WHOLE_SERVER)
    return RedirectResponse("/instructor", status_code=303, headers=NO_STORE)


# -- pages -----------------------------------------------------------------------------------------


def _exercise_charts(ex: dict[str, Any]) -> list[Any]:
    if ex["kind"] == "code":
        return [_failed_tests_chart(ex["id"], ex["stats"]), _hints_chart(ex["id"], ex["stats"])]
    return [_mistakes_chart(ex["id"], ex["stats"]), _variants_chart(ex["id"], ex["stats"])]


def _failed_tests_chart(key: str, stats: dict[str, Any]) -> Markup:
    """A code exercise's tests, each with the share of graded programs in which it failed."""
    tests = stats["tests"]
    return bar_chart(
        f"tests-{key}",
        f"{key}: share of graded programs in which each test failed",
        [
            Bar(t["name"], t["rate"] or 0.0, f"{t['failed']} of {t['runs']} ({percent(t['rate'])})")
            for t in tests
        ],
        ["Test", "Function", "Programs that ran it", "Failed", "Failure rate", "Not run"],
        [[t["name"], t["function"], t["runs"], t["failed"], percent(t["rate"]), t["not_run"]] for t in tests],
    )


def _hints_chart(key: str, stats: dict[str, Any]) -> Markup:
    """A code exercise's hints, each with how often failed tests showed it."""
    hints = stats["hints"]
    most = max((h["count"] for h in hints), default=0)
    return bar_chart(
        f"hints-{key}",
        f"{key}: hints shown with failed tests",
        [Bar(h["hint"], h["count"] / most if most else 0.0, f"{plural(h['count'], 'time')}") for h in hints],
        ["Hint", "Times shown", "Learners"],
        [[h["hint"], h["count"], h["learners"]] for h in hints],
        table_visible=True,
    )


def _mistakes_chart(key: str, stats: dict[str, Any]) -> Markup:
    """An answer exercise's named mistakes, each with its share of the wrong answers."""
    mistakes = stats["mistakes"]
    wrong = stats["wrong"]
    return bar_chart(
        f"mistakes-{key}",
        f"{key}: named mistakes among {wrong} wrong answers",
        [
            Bar(
                f"{m['id']}: {m['message']}",
                m["count"] / wrong if wrong else 0.0,
                f"{m['count']} ({plural(m['learners'], 'learner')})",
            )
            for m in mistakes
        ],
        ["Mistake", "Wrong answers", "Learners", "Message (as the lesson writes it)"],
        [[m["id"], m["count"], m["learners"], m["message"]] for m in mistakes],
        table_visible=True,
    )


def _variants_chart(key: str, stats: dict[str, Any]) -> Markup:
    """An answer exercise's solve rate in each variant."""
    variants = stats["variants"]
    return bar_chart(
        f"variants-{key}",
        f"{key}: solve rate by variant",
        [
            Bar(v["variant"], v["rate"] or 0.0, f"{v['solved']} of {v['learners']} ({percent(v['rate'])})")
            for v in variants
        ],
        ["Variant", "Learners who answered", "Solved", "Solve rate"],
        [[v["variant"], v["learners"], v["solved"], percent(v["rate"])] for v in variants],
    )


def _lesson_numbers(
    request: Request, services: AppServices, lesson_id: str, scope: LearnerScope
) -> tuple[dict[str, Any], int]:
    """One lesson's detailed numbers, from that lesson's kept rows of ``scope``'s learners only, each
    exercise with its question."""
    lesson_obj = services.lesson(lesson_id)
    desk = auth_of(request).desk.within(scope)
    answers = desk.answer_events(lesson_id=lesson_obj.id)
    programs = desk.code_events(lesson_id=lesson_obj.id)
    learners = desk.learners()
    data = lesson_numbers(lesson_obj, answers, programs)
    counts = services.store.class_view.within(scope).exercise_counts()
    for ex in data["exercises"]:
        # Started, solved and attempts to solve from the kept totals, as on the dashboard and in the
        # exports (rows may have been pruned or, past a client's storage budget, not kept at all).
        found = counts.get((lesson_obj.id, ex["id"]))
        if found is not None:
            ex["stats"].update(started=found.started, solved=found.solved)
            if found.solvers_counted:  # else solved before attempts to solve were kept: the rows tell
                ex["stats"]["median_attempts"] = found.median_attempts
        texts = lesson_obj.texts(ex["id"])
        ex["question"] = texts.prompt
        ex["question_html"] = Markup(texts.prompt_html)
        for mistake in ex["stats"].get("mistakes", []):
            mistake["message"] = texts.mistakes.get(mistake["id"], mistake["message"])
    return data, len(learners)


@pages.get("/instructor/lessons/{lesson_id}", response_class=HTMLResponse, name="instructor_lesson")
def instructor_lesson(
    lesson_id: Annotated[str, Path(max_length=32)],
    request: Request,
    services: AppServices,
    access: InCourse,
) -> Response:
    """One lesson in detail: per exercise, mistakes and unmatched wrong answers, or tests and hints."""
    lesson, learner_count = _lesson_numbers(request, services, lesson_id, access.scope)
    for ex in lesson["exercises"]:
        ex["charts"] = _exercise_charts(ex)
    context = {"lesson": lesson, "learner_count": learner_count}
    return render_page(request, services, "instructor/lesson.html", context, access)


TIMELINE_PAGE = 50


def _exercise_filter(exercise: str) -> tuple[str | None, str | None]:
    if not exercise:
        return None, None
    lesson_id, slash, exercise_id = exercise.partition("/")
    if not slash or not lesson_id or not exercise_id:
        raise HTTPException(
            400,
            "The exercise filter must read LESSON/EXERCISE (a lesson id, a slash, an exercise id), "
            f"not {exercise[:40]!r}.",
        )
    return lesson_id, exercise_id


@pages.get("/instructor/learners/{learner_id}", response_class=HTMLResponse, name="instructor_learner")
def instructor_learner(
    learner_id: Annotated[str, Path(max_length=36)],
    request: Request,
    services: AppServices,
    access: InCourse,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    exercise: Annotated[str, Query(max_length=100)] = "",
) -> Response:
    """One learner's answers and programs, in the order they were saved, a page of 50 at a time
    (``?exercise=LESSON/EXERCISE`` shows one exercise's). Another course's learner answers 404, as an
    unknown one does."""
    desk = auth_of(request).desk.within(access.scope)
    learner = desk.learner(learner_id)
    if learner is None:
        raise HTTPException(404, f"No learner with the id {learner_id!r} has saved any work.")
    lesson_id, exercise_id = _exercise_filter(exercise)
    page_number = max(1, page)
    found = services.store.class_view.within(access.scope).learner_events(
        learner_id,
        offset=(page_number - 1) * TIMELINE_PAGE,
        limit=TIMELINE_PAGE,
        lesson_id=lesson_id,
        exercise_id=exercise_id,
    )
    pages_total = max(1, -(-found.total // TIMELINE_PAGE))
    if page_number > pages_total:
        raise HTTPException(404, f"This timeline has {pages_total} pages; there is no page {page_number}.")
    items = timeline(found.answers, found.programs, found.help, desk.help_events(learner_id))
    context = {
        "person": learner,
        "items": items,
        "page": page_number,
        "pages": pages_total,
        "total": found.total,
        "first_number": found.offset + 1,
        "exercise": exercise,
        "links_made": services.store.courses.link_records(learner_id),
    }
    return render_page(request, services, "instructor/learner.html", context, access)


# -- exports ---------------------------------------------------------------------------------------


def _download(text: str, filename: str, media_type: str) -> Response:
    headers = {**NO_STORE, "Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(text, media_type=media_type, headers=headers)


@pages.get("/instructor/export/{name}", name="instructor_export")
def instructor_export(
    name: Annotated[str, Path(max_length=32)], request: Request, services: AppServices, access: InCourse
) -> Response:
    """``gradebook.csv``, ``gradebook.json``, ``lms.csv`` (an LMS gradebook import) or ``events.csv``, of
    the course's learners only."""
    out = io.StringIO()
    desk = auth_of(request).desk.within(access.scope)
    gradebook = services.store.gradebook.within(access.scope)
    late = LateWork.of_course(services.store, access.course_id)  # the course's dates: late work marked
    if name in {"gradebook.csv", "gradebook.json"}:
        fmt = name.rsplit(".", 1)[1]
        write_gradebook(gradebook.rows(catalog_exercises(services.catalog)), fmt, out, late)
        media = "application/json" if fmt == "json" else "text/csv; charset=utf-8"
        return _download(out.getvalue(), f"qkv-{name}", media)
    if name == "lms.csv":
        rows = gradebook.rows(catalog_exercises(services.catalog))
        write_lms(services.catalog, rows, desk.learners(), out, services.settings.help_policy, late)
        return _download(out.getvalue(), "qkv-lms-gradebook.csv", "text/csv; charset=utf-8")
    if name == "events.csv":
        notes = services.store.mistakes.shown(access.scope)
        write_events(
            desk.answer_events(), desk.code_events(), desk.learners(), out, desk.help_events(), notes, late
        )
        return _download(out.getvalue(), "qkv-events.csv", "text/csv; charset=utf-8")
    raise HTTPException(
        404,
        f"There is no export {name!r}; the exports are gradebook.csv, gradebook.json, lms.csv, events.csv, "
        "items.csv.",
    )


# -- the JSON API ------------------------------------------------------------------------------------


@api.get("/lessons/{lesson_id}", summary="One lesson's detailed numbers")
def api_lesson(
    lesson_id: Annotated[str, Path(max_length=32)],
    request: Request,
    services: AppServices,
    access: InCourse,
) -> dict[str, Any]:
    """Per exercise: variants, named mistakes, unmatched wrong answers, tests and hints (kept rows)."""
    lesson, learners = _lesson_numbers(request, services, lesson_id, access.scope)
    for ex in lesson["exercises"]:
        del ex["question_html"]
    return {"learners": learners, "lesson": lesson}


@api.post("/sign-out", summary="End the instructor session")
def api_sign_out(request: Request, signed_in: Instructor) -> dict[str, str]:
    """End this instructor session on every server; needs the ``X-CSRF-Token`` of the instructor page."""
    auth = auth_of(request)
    auth.check_csrf(request, signed_in)
    auth.desk.end_session(signed_in.session)
    return {"status": "signed out"}
