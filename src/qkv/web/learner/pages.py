"""The HTML pages (lesson list, lesson), the API reference page and the health check."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from qkv.store import LessonActivity
from qkv.web.http.jsonsafe import SafeJSONResponse
from qkv.web.http.security import RequestLearner
from qkv.web.learner.apidocs import render_api_reference
from qkv.web.learner.instructor_notes import progress_with_notes
from qkv.web.lesson_progress import build_progress
from qkv.web.services import AppServices, Services

router = APIRouter(include_in_schema=False)


def _reader(request: Request, services: AppServices) -> RequestLearner:
    return services.identity.learner(request)


Reader = Annotated[RequestLearner, Depends(_reader)]
_NO_STORE = {"Cache-Control": "no-store"}  # pages embed the learner's progress


def _activity(services: Services, learner: RequestLearner, lesson_id: str) -> LessonActivity:
    if not learner.from_cookie:
        return LessonActivity(lesson_id, None)  # a first visit has nothing saved; skip the database
    return services.store.progress.lesson_activity(learner.id, lesson_id)


def _learner_view(services: Services, learner: RequestLearner) -> dict[str, Any]:
    name = services.store.learners.display_name(learner.id) if learner.from_cookie else None
    return {"display_name": name, "signed_in": learner.signed_in}


def _sign_in_first(request: Request, services: Services, learner: RequestLearner) -> Response | None:
    """Under ``--require-sign-in``, the page that asks an anonymous learner to sign in (401); else None."""
    if learner.signed_in or not services.settings.require_sign_in:
        return None
    context = {"learner": None, "csrf_token": None}
    return services.templates.TemplateResponse(
        request, "account/sign_in_required.html", context, status_code=401, headers=_NO_STORE
    )


@router.get("/", response_class=HTMLResponse)
def index(request: Request, services: AppServices, learner: Reader) -> Response:
    """Every chapter with its written lessons and the learner's progress on each."""
    asked = _sign_in_first(request, services, learner)
    if asked is not None:
        return asked
    chapters = []
    for chapter in services.catalog.chapters:
        written = {
            lesson.id: lesson for lesson in services.catalog.lessons if lesson.chapter_id == chapter.id
        }
        lessons: list[dict[str, Any]] = []
        for planned in chapter.planned:  # the chapter's whole outline, written lessons and planned ones
            lesson = written.get(planned.id)
            if lesson is None:
                entry = {"id": planned.id, "title": planned.title, "place": chapter.position(planned.id)}
                lessons.append({**entry, "written": False})
                continue
            progress = build_progress(lesson, _activity(services, learner, lesson.id))
            lessons.append(
                {
                    "id": lesson.id,
                    "title": lesson.title,
                    "place": lesson.place,
                    "goal": lesson.goal,
                    "url": str(request.url_for("lesson_page", lesson_id=lesson.id).path),
                    "done": progress["done"],
                    "total": progress["total"],
                    "written": True,
                }
            )
        # A chapter is complete when every one of its lessons is written and every counted exercise is done.
        complete = bool(lessons) and all(
            entry["written"] and entry["total"] and entry["done"] >= entry["total"] for entry in lessons
        )
        chapters.append({"id": chapter.id, "title": chapter.title, "lessons": lessons, "complete": complete})
    context = {
        "chapters": chapters,
        "learner": _learner_view(services, learner),
        "csrf_token": services.identity.csrf_token(learner.id),
    }
    return services.templates.TemplateResponse(request, "index.html", context, headers=_NO_STORE)


def _onward(request: Request, services: Services, lesson_id: str) -> dict[str, Any] | None:
    """The lesson after this one in its chapter: a link when it is written, its title when planned."""
    for chapter in services.catalog.chapters:
        if lesson_id not in chapter.lesson_ids:
            continue
        index = chapter.lesson_ids.index(lesson_id)
        if index + 1 == len(chapter.lesson_ids):
            return None
        following = chapter.planned[index + 1]
        written = {lesson.id for lesson in services.catalog.lessons}
        url = (
            str(request.url_for("lesson_page", lesson_id=following.id).path)
            if following.id in written
            else None
        )
        return {"title": following.title, "place": chapter.position(following.id), "url": url}
    return None


@router.get("/lessons/{lesson_id}", response_class=HTMLResponse, name="lesson_page")
def lesson_page(lesson_id: str, request: Request, services: AppServices, learner: Reader) -> Response:
    """The whole lesson, with the learner's saved answers, code and variant."""
    lesson = services.lesson(lesson_id)
    asked = _sign_in_first(request, services, learner)
    if asked is not None:
        return asked
    activity = _activity(services, learner, lesson.id)
    seed = activity.variant_seed
    context = {
        "lesson": lesson,
        "sections": services.sections(lesson, seed),
        "progress": progress_with_notes(
            services.store, learner.id, lesson.id, build_progress(lesson, activity)
        ),
        "csrf_token": services.identity.csrf_token(learner.id),
        "learner": _learner_view(services, learner),
        "variant": lesson.variant(seed),
        "variant_sections": lesson.variant_section_ids(),
        "onward": _onward(request, services, lesson.id),
    }
    return services.templates.TemplateResponse(request, "lesson.html", context, headers=_NO_STORE)


@router.get("/docs", response_class=HTMLResponse)
def api_reference(request: Request) -> HTMLResponse:
    """The JSON API reference, rendered on the server from the OpenAPI document (works offline)."""
    return HTMLResponse(render_api_reference(request.app.openapi()))


@router.get("/healthz")
def health(services: AppServices) -> dict[str, str]:
    """For load balancers: 200 when the database answers; says how code is graded."""
    services.store.ping()
    return {"status": "ok", "grading": services.sandbox}


@router.get("/healthz/grading")
async def grading_health(services: AppServices) -> Response:
    """For monitoring: how code is graded and the line; 503 when programs wait and no grader is alive.

    With ``--grading remote`` the figures are the whole cluster's (every server reads the same queue):
    ``queued``, ``running``, ``oldest_queued_s``, ``verdicts_last_minute``, ``failed_last_hour``,
    ``abandoned_last_hour`` and ``graders_alive`` (graders whose heartbeat is recent).
    """
    if services.remote is not None:
        figures: dict[str, Any] = {"mode": "remote", **(await services.remote.health())}
        stuck = figures["queued"] > 0 and figures["graders_alive"] == 0
        figures["status"] = "no grader is alive" if stuck else "ok"
        return SafeJSONResponse(figures, status_code=503 if stuck else 200, headers=_NO_STORE)
    if services.queue is not None:
        local = {"mode": "local", "status": "ok", "admitted": services.queue.admitted}
        local["concurrency"] = services.queue.concurrency
        return SafeJSONResponse(local, headers=_NO_STORE)
    off = {"mode": "off", "status": services.grading_off_reason or "Grading is turned off on this server."}
    return SafeJSONResponse(off, status_code=503, headers=_NO_STORE)
