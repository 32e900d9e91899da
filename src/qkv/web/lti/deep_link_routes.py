"""The deep-linking pages: the picker an instructor's ``LtiDeepLinkingRequest`` opens, and ``POST
/lti/deep-link``, which answers the LMS with the chosen lessons (see ``deep_linking``).

Both pages may be framed by the requesting platform only (``framing``); the answer's form may post to
the LMS's return URL only. A lesson whose line item the course has already (found by resourceId through
the request's line-items service) is linked without a ``lineItem``, so choosing it again makes no second
column; its launches find that line item (``line_items``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.store.lti.platforms import PlatformRecord
from qkv.web.http.forms import parse_form
from qkv.web.lti import deep_linking as dl
from qkv.web.lti import framing, line_items
from qkv.web.lti.claims import LINEITEM_SCOPE, Launch
from qkv.web.lti.origin import origin_of
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.service_tokens import ServiceUnavailable
from qkv.web.lti.tool import LtiTool
from qkv.web.services import AppServices, Services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
_NO_STORE = {"Cache-Control": "no-store"}


def offered_lessons(services: Services) -> dict[str, dl.PickedLesson]:
    """The chapter's lessons as the picker offers them, with the points each counts."""
    offered: dict[str, dl.PickedLesson] = {}
    for lesson in services.catalog.lessons:
        counted = {part.id for part in lesson.parts if part.counts_toward_done}
        points = sum(1 for exercise in lesson.exercises.values() if exercise.part in counted)
        offered[lesson.id] = dl.PickedLesson(lesson.id, lesson.title, points)
    return offered


def picker_page(request: Request, services: Services, tool: LtiTool, checked: Launch) -> Response:
    """The picker for a checked deep-linking launch (a refusal for a learner or a request without a return
    URL)."""
    settings = dl.check_request(checked)
    context: dict[str, Any] = {
        "learner": None,
        "csrf_token": None,
        "lessons": list(offered_lessons(services).values()),
        "accept_multiple": settings.accept_multiple,
        "course": checked.context_title,
        "picker_pass": dl.issue_pass(tool.key, checked, settings),
    }
    page = services.templates.TemplateResponse(request, "lti/deep_link.html", context, headers=_NO_STORE)
    return framing.allow_framing(page, _platforms(tool, checked.issuer, checked.client_id))


def _platforms(tool: LtiTool, issuer: str, client_id: str) -> list[PlatformRecord]:
    found = tool.platforms.find(issuer, client_id)
    return [found] if found else []


@router.post("/lti/deep-link", name="lti_deep_link")
async def answer(request: Request, services: AppServices) -> Response:
    """Answer the LMS: a signed ``LtiDeepLinkingResponse`` with the chosen lessons, posted by the page."""
    form = parse_form(
        await request.body(), request.headers.get("content-type", ""), max_fields=200, max_bytes=64 * 1024
    )
    tool: LtiTool = request.app.state.qkv_lti
    try:
        picked = dl.read_pass(tool.key, form.get("pass", ""))
        platform = await run_in_threadpool(tool.platforms.find, picked.issuer, picked.client_id)
        if platform is None:
            raise LaunchRefused(
                403, f"The LMS {picked.issuer!r} is no longer registered with qkv, so it cannot be answered."
            )
        chosen = [value for name, value in form.items() if name == "lesson" or name.startswith("lesson-")]
        lessons = dl.chosen_lessons(picked, chosen, offered_lessons(services))
        expires = datetime.fromtimestamp(picked.expires_at, UTC).replace(tzinfo=None)
        if not await run_in_threadpool(tool.logins.use_nonce, picked.issuer, "dl:" + picked.nonce, expires):
            raise LaunchRefused(
                400, "These lessons were sent to the LMS already; open the picker again to add more."
            )
    except LaunchRefused as refusal:
        log.info("deep-linking answer refused (%d): %s", refusal.status, refusal)
        raise HTTPException(refusal.status, str(refusal)) from None
    origin = _origin(request, services)
    items = await run_in_threadpool(_content_items, tool, platform, picked, lessons, origin)
    message = f"Added {', '.join(lesson.id for lesson in lessons)} from qkv."
    token = tool.key.sign(dl.response_claims(picked, items, message))
    context = {
        "learner": None,
        "csrf_token": None,
        "return_url": picked.return_url,
        "fields": [("JWT", token)],
        "message": message + " Returning to your LMS.",
    }
    page = services.templates.TemplateResponse(
        request, "lti/deep_link_return.html", context, headers=_NO_STORE
    )
    return framing.allow_framing(page, [platform], [picked.return_url])


def _origin(request: Request, services: Services) -> str:
    return origin_of(services, request)


def _content_items(
    tool: LtiTool,
    platform: PlatformRecord,
    picked: dl.PickerPass,
    lessons: list[dl.PickedLesson],
    origin: str,
) -> list[dict[str, Any]]:
    """Each lesson's content item; with a ``lineItem`` unless the LMS takes none or the course has one."""
    items = []
    for lesson in lessons:
        with_item = picked.accept_lineitem and not _course_has_item(tool, platform, picked, lesson)
        items.append(dl.content_item(origin, lesson, with_item))
    return items


def _course_has_item(
    tool: LtiTool, platform: PlatformRecord, picked: dl.PickerPass, lesson: dl.PickedLesson
) -> bool:
    if not picked.lineitems_url:
        return False
    try:
        token = tool.tokens.token(platform, (LINEITEM_SCOPE,))
        return line_items.find(tool.client, token, picked.lineitems_url, lesson.id) is not None
    except ServiceUnavailable as error:  # then the LMS makes the column, as for a first choice
        log.warning("the line items of %s could not be read: %s", picked.issuer, error)
        return False
