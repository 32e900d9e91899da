"""A launch inside an LMS's iframe opens qkv in a new window, signed in there.

qkv's pages other than the LTI ones cannot be framed, and a browser keeps no session cookie set inside
a third-party frame (qkv's sessions are SameSite=Lax). So a framed launch (``Sec-Fetch-Dest: iframe``, or
one checked through the LMS's storage) answers with a page the LMS may frame: a sentence and a button
that opens the lesson (or the instructor's view) in a new window. The button posts a *ticket*: a JWT the
tool signs, valid five minutes, used once, naming whom to sign in and where to go. ``/lti/continue``
takes it only from qkv's own page (a same-origin POST), signs the new window in, and opens the page.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from datetime import UTC, datetime
from html import escape
from typing import Any

import jwt
from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from qkv.store.instructor.courses import CourseRecord
from qkv.web.http.forms import parse_form
from qkv.web.lti import accounts_bridge
from qkv.web.lti.claims import Launch
from qkv.web.lti.instructor_launch import sign_in_instructor
from qkv.web.lti.origin import origin_of
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.tool import LtiTool
from qkv.web.services import AppServices, Services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
TICKET_AUDIENCE = "qkv-lti-continue"
TICKET_LIFETIME_S = 300
_NO_STORE = {"Cache-Control": "no-store"}


def is_framed(request: Request) -> bool:
    """Whether the browser loads this response into a frame (it says so in ``Sec-Fetch-Dest``)."""
    return request.headers.get("sec-fetch-dest", "") in {"iframe", "frame"}


def ticket(
    tool: LtiTool, checked: Launch, url: str, learner_id: str | None, course_id: str | None = None
) -> str:
    """A ticket that signs a new window in as the launch's learner (or course staff, on the launch's
    course ``course_id``) and opens ``url``."""
    now = int(time.time())
    body: dict[str, Any] = {
        "aud": TICKET_AUDIENCE,
        "iat": now,
        "exp": now + TICKET_LIFETIME_S,
        "nonce": secrets.token_urlsafe(18),
        "iss": checked.issuer,
        "url": url,
    }
    if learner_id is not None:
        body["learner"] = learner_id
    else:
        body["launch"] = dataclasses.asdict(checked)
        body["course"] = course_id
    return tool.key.sign(body)


def new_window_page(ticket_value: str, what: str) -> HTMLResponse:
    """The framed launch's answer: a sentence and the button that opens qkv in a new window."""
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>qkv</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark"><link rel="stylesheet" href="/static/lesson.css">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head><body><main id="main">'
        f"<p>qkv opens {escape(what)} in a window of its own, where your work is saved as you go.</p>"
        '<form method="post" action="/lti/continue" target="_blank" id="lti-continue">'
        f'<input type="hidden" name="ticket" value="{escape(ticket_value, quote=True)}">'
        f'<button type="submit">Open {escape(what)} in a new window</button></form></main></body></html>'
    )
    return HTMLResponse(html, headers=_NO_STORE)


@router.post("/lti/continue", name="lti_continue")
async def continue_in_window(request: Request, services: AppServices) -> Response:
    """Sign this (new, top-level) window in with a framed launch's ticket, and open its page."""
    form = parse_form(
        await request.body(), request.headers.get("content-type", ""), max_fields=4, max_bytes=32 * 1024
    )
    tool: LtiTool = request.app.state.qkv_lti
    try:
        body = _read(tool, request, form.get("ticket", ""), _origin(request, services))
        expires = datetime.fromtimestamp(int(body["exp"]), UTC).replace(tzinfo=None)
        if not await run_in_threadpool(
            tool.logins.use_nonce, str(body["iss"]), "go:" + body["nonce"], expires
        ):
            raise LaunchRefused(400, "This button was used already; open the activity again from the LMS.")
        url = str(body["url"])
        if not url.startswith("/") or url.startswith("//"):
            raise LaunchRefused(400, "The ticket names no page of this server.")
        page = RedirectResponse(url, status_code=303, headers=_NO_STORE)
        if "learner" in body:
            await run_in_threadpool(accounts_bridge.sign_in, request, page, str(body["learner"]))
        else:
            checked = Launch(**{**body["launch"], "roles": tuple(body["launch"]["roles"])})
            course = await run_in_threadpool(_launch_course, services, body.get("course"))
            cookie = await run_in_threadpool(sign_in_instructor, request, checked, course)
            page.headers.append("set-cookie", cookie)
    except LaunchRefused as refusal:
        log.info("LTI continue refused (%d): %s", refusal.status, refusal)
        raise HTTPException(refusal.status, str(refusal)) from None
    return page


def _launch_course(services: Services, course_id: object) -> CourseRecord:
    """The course a staff ticket names (the launch's), still on this server."""
    course = services.store.courses.get(course_id) if isinstance(course_id, str) else None
    if course is None:
        raise LaunchRefused(
            400, "The course this button was made for is no longer on this server; launch again from it."
        )
    return course


def _read(tool: LtiTool, request: Request, value: str, origin: str) -> dict[str, Any]:
    sent_from = request.headers.get("origin", "")
    if sent_from.lower() != origin.lower():
        raise LaunchRefused(
            403,
            f"This button works only on qkv's own page (this request came from {sent_from or 'nowhere'!r}).",
        )
    try:
        return tool.key.verify(value, TICKET_AUDIENCE)
    except jwt.ExpiredSignatureError:
        raise LaunchRefused(
            400, "This button is over five minutes old; open the activity again from the LMS."
        ) from None
    except jwt.PyJWTError:
        raise LaunchRefused(
            400, "This button's ticket is not one qkv signed; open the activity again."
        ) from None


def _origin(request: Request, services: Services) -> str:
    return origin_of(services, request)


__all__ = ["is_framed", "new_window_page", "router", "ticket"]
