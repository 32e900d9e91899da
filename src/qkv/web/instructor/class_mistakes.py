"""The page "Mistakes of this class": the course's failing programs grouped by behaviour, and the notes.

Groups come from ``qkv.store.instructor.mistake_groups``: by lesson and function, unnamed ones first, the
most learners first, a group whose message learners often marked unhelpful at the very top. Each shows the
message its learners got, up to three example programs beside the exercise's reference (a diff), and a
field for one sentence. An instructor's sentence reaches the learners at once; a teaching assistant's is
a proposal an instructor names. ``/api/instructor/mistakes`` is the same list as JSON.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.store.instructor.courses import StaffRole
from qkv.store.instructor.mistake_group_records import MAX_SENTENCE, MistakeGroup, UnhelpfulLine
from qkv.web.http.course_access import CourseAccess, InCourse
from qkv.web.http.forms import form_body_schema, parse_form
from qkv.web.http.instructor_auth import CSRF_FIELD
from qkv.web.instructor.rendering import NO_STORE, auth_of, render_page
from qkv.web.services import AppServices, Services

__all__ = ["install"]

pages = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/api/instructor", include_in_schema=False)
GroupId = Annotated[
    str, Path(max_length=16, description="A group's id, as the page and `qkv mistakes list` show.")
]
LessonFilter = Annotated[str | None, Query(max_length=32, description="Only this lesson's groups.")]
_GROUP = re.compile(r"[0-9a-f]{16}")
KIND_WORDS = {
    "lesson": "catalogued hint",
    "relation": "relation",
    "mutant": "mutant",
    "crash": "crashing line named",
    "note": "instructor's note",
    "plain": "comparison alone",
    "answer": "hand-answer message",
}
"""How the page names each kind of message learners mark (``FEEDBACK_KINDS``)."""
_MAX_FORM_BYTES = 4096


def install(app: FastAPI) -> None:
    """Add the page, its form and its JSON."""
    app.include_router(pages)
    app.include_router(api)


def course_key(access: CourseAccess) -> str:
    """The key the course's notes are kept under: its id, or '' for every learner of the server."""
    return access.course_id or ""


def _groups(services: Services, access: CourseAccess, lesson: str | None) -> list[MistakeGroup]:
    return services.store.mistakes.groups(access.scope, course_key(access), lesson=lesson)


def _reference(services: Services, group: MistakeGroup) -> str | None:
    try:
        return services.catalog.code_exercise(f"{group.lesson}/{group.exercise}").exercise.solution
    except Exception:  # a lesson this server no longer has: the examples are shown without a diff
        return None


def _diff(reference: str | None, example: str) -> str:
    if reference is None:
        return example
    lines = difflib.unified_diff(
        reference.splitlines(), example.splitlines(), "reference", "this program", lineterm="", n=2
    )
    return "\n".join(lines) or "(the same text as the reference)"


def _view(services: Services, groups: list[MistakeGroup]) -> list[dict[str, Any]]:
    """The page's sections: one per lesson and function, each with its groups and their diffs."""
    sections: dict[tuple[str, str, str], dict[str, Any]] = {}
    for group in groups:
        key = (group.lesson, group.exercise, group.function)
        section = sections.setdefault(
            key,
            {"lesson": group.lesson, "exercise": group.exercise, "function": group.function, "groups": []},
        )
        reference = _reference(services, group)
        section["groups"].append(
            {"group": group, "diffs": [_diff(reference, text) for text in group.examples]}
        )
    return list(sections.values())


def _lines_by_exercise(lines: list[UnhelpfulLine]) -> list[dict[str, Any]]:
    """The lines on messages in no group, one entry per lesson and exercise, in the store's order."""
    exercises: dict[tuple[str, str], dict[str, Any]] = {}
    for line in lines:
        entry = exercises.setdefault(
            (line.lesson, line.exercise), {"lesson": line.lesson, "exercise": line.exercise, "lines": []}
        )
        entry["lines"].append(line)
    return list(exercises.values())


@pages.get("/instructor/mistakes", response_class=HTMLResponse)
def mistakes_page(
    request: Request, services: AppServices, access: InCourse, lesson: LessonFilter = None
) -> Response:
    """The course's mistakes grouped by behaviour, with the notes and the learners' marks."""
    groups = _groups(services, access, lesson)
    context = {
        "sections": _view(services, groups),
        "unhelpful": services.store.mistakes.unhelpful_by_kind(access.scope, lesson),
        "lines": _lines_by_exercise(services.store.mistakes.unhelpful_lines(access.scope, lesson)),
        "kind_words": KIND_WORDS,
        "lesson_filter": lesson,
        "max_sentence": MAX_SENTENCE,
        "proposes": access.role is not StaffRole.INSTRUCTOR,
    }
    return render_page(request, services, "instructor/mistakes.html", context, access)


@api.get("/mistakes")
def mistakes_json(
    services: AppServices, access: InCourse, lesson: LessonFilter = None
) -> list[dict[str, Any]]:
    """The course's groups as JSON (the list ``qkv mistakes list --json`` prints)."""
    return [group.to_dict() for group in _groups(services, access, lesson)]


@pages.post(
    "/instructor/mistakes/{group_id}",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(
        sentence="The note: one sentence.",
        action="'name' (a teaching assistant's naming is a proposal) or 'unname'.",
        csrf_token="The CSRF token of the instructor page.",
    ),
)
async def name_group(
    group_id: GroupId, request: Request, services: AppServices, access: InCourse
) -> Response:
    """Name a group of the course with one sentence, or take its note away (404: not the course's group)."""
    form = parse_form(
        await request.body(), request.headers.get("content-type", ""), max_fields=8, max_bytes=_MAX_FORM_BYTES
    )
    auth_of(request).check_csrf(request, access.signed_in, form.get(CSRF_FIELD, ""))
    mistakes = services.store.mistakes
    if not _GROUP.fullmatch(group_id) or not await run_in_threadpool(
        mistakes.made_in, access.scope, group_id
    ):
        raise HTTPException(404, f"There is no group of mistakes {group_id[:16]!r} in this course.")
    action = form.get("action", "name")
    by = access.signed_in.instructor.name
    if action == "unname":
        access.require_instructor("take a note away")
        await run_in_threadpool(mistakes.unname, course_key(access), group_id)
    elif action == "name":
        propose = access.role is not StaffRole.INSTRUCTOR
        try:
            await run_in_threadpool(
                lambda: mistakes.name(
                    course_key(access), group_id, form.get("sentence", ""), by=by, propose=propose
                )
            )
        except ValueError as error:
            raise HTTPException(422, str(error)) from None
    else:
        raise HTTPException(422, f"The action must be 'name' or 'unname', not {action[:20]!r}.")
    chosen = request.query_params.get("course")
    where = (
        f"/instructor/mistakes?course={access.course_id}"
        if chosen and access.course_id
        else "/instructor/mistakes"
    )
    return RedirectResponse(f"{where}#group-{group_id}", status_code=303, headers=NO_STORE)
