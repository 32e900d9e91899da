"""The instructor's LTI page (``/instructor/lti``): the classes seen in launches, pulling a class's roster
from the LMS, the scores waiting for an LMS, and those it refused (with its sentence)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from qkv.web.forms import parse_form
from qkv.web.instructor_auth import CSRF_FIELD, InstructorAuth, SignedInInstructor
from qkv.web.lti import accounts_bridge
from qkv.web.lti.claims import INSTRUCTOR_ROLE
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.roster import Member, pull_members
from qkv.web.lti.routes import tool_of
from qkv.web.lti.service_tokens import ServiceUnavailable
from qkv.web.services import Services, get_services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
AppServices = Annotated[Services, Depends(get_services)]
_NO_STORE = {"Cache-Control": "no-store"}


def _auth(request: Request) -> InstructorAuth:
    found: InstructorAuth = request.app.state.qkv_instructor
    return found


def _signed_in(request: Request) -> SignedInInstructor:
    return _auth(request).require(request)


Instructor = Annotated[SignedInInstructor, Depends(_signed_in)]


@router.get("/instructor/lti", name="instructor_lti")
def lti_page(request: Request, services: AppServices, signed_in: Instructor, pulled: str = "") -> Response:
    """The classes from launches, with a roster button each, and the scores waiting for their LMS."""
    tool = tool_of(request)
    context: dict[str, Any] = {
        "learner": None,
        "instructor": signed_in.instructor,
        "csrf_token": _auth(request).csrf_token(signed_in.session),
        "csrf_field": CSRF_FIELD,
        "classes": tool.links.contexts(),
        "waiting": tool.outbox.waiting(),
        "refused": tool.outbox.parked(),
        "delivered": tool.outbox.delivered_count(),
        "pulled": pulled[:200],
    }
    return services.templates.TemplateResponse(request, "lti/instructor.html", context, headers=_NO_STORE)


@router.post("/instructor/lti/roster", name="instructor_lti_roster")
async def pull_roster(request: Request, services: AppServices, signed_in: Instructor) -> Response:
    """Pull a class's membership from its LMS and make an account for each learner in it."""
    form = parse_form(
        await request.body(), request.headers.get("content-type", ""), max_fields=8, max_bytes=4096
    )
    _auth(request).check_csrf(request, signed_in, form.get(CSRF_FIELD, ""))
    tool = tool_of(request)
    key = (form.get("issuer", ""), form.get("client_id", ""), form.get("context_id", ""))
    found = await run_in_threadpool(tool.links.context, *key)
    if found is None:
        raise HTTPException(
            404, f"No class {key[2]!r} of {key[0]!r} was seen in a launch; launch it from the LMS first."
        )
    try:
        members = await run_in_threadpool(pull_members, found, tool.platforms, tool.tokens, tool.client)
    except ServiceUnavailable as error:
        raise HTTPException(502, f"The roster of {found.title!r} could not be pulled: {error}") from None
    learners = [member for member in members if INSTRUCTOR_ROLE not in member.roles]
    made = await run_in_threadpool(_accounts_for, services, found.issuer, learners)
    await run_in_threadpool(tool.links.roster_pulled, *key)
    return RedirectResponse(f"/instructor/lti?pulled={made}", status_code=303, headers=_NO_STORE)


def _accounts_for(services: Services, issuer: str, members: list[Member]) -> int:
    """Find or make each member's account; how many there are (a member whose LMS id the accounts refuse
    is left out, and logged)."""
    made = 0
    for member in members:
        try:
            accounts_bridge.account_for(services, issuer, member.subject, member.name, member.email)
        except LaunchRefused as refused:
            log.info("a roster member of %s was left out: %s", issuer, refused)
            continue
        made += 1
    return made
