"""The instructor's LTI page (``/instructor/lti``): the course's classes seen in launches, pulling a
class's roster from the LMS into its course, the course's scores waiting for the LMS and those it refused
(with its sentence). For the course's instructors only (not its teaching assistants); another course's
class answers 404."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from qkv.store.instructor.courses import MembershipSource
from qkv.web.http.course_access import WHOLE_SERVER, InCourse
from qkv.web.http.forms import parse_form
from qkv.web.http.instructor_auth import CSRF_FIELD, InstructorAuth
from qkv.web.lti import accounts_bridge
from qkv.web.lti.claims import CourseRole, course_role
from qkv.web.lti.launch_routes import tool_of
from qkv.web.lti.names_and_roles import Member, pull_members
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.service_tokens import ServiceUnavailable
from qkv.web.services import AppServices, Services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
_NO_STORE = {"Cache-Control": "no-store"}


@router.get("/instructor/lti", name="instructor_lti")
def lti_page(request: Request, services: AppServices, access: InCourse, pulled: str = "") -> Response:
    """The course's classes from launches, with a roster button each, and its scores waiting for the LMS
    (an administrator's whole-server view: every class and every score). Instructors only."""
    access.require_instructor("open the LMS page of the course")
    tool = tool_of(request)
    auth: InstructorAuth = request.app.state.qkv_instructor
    mine = access.course_id
    context: dict[str, Any] = {
        "learner": None,
        "instructor": access.signed_in.instructor,
        "csrf_token": auth.csrf_token(access.signed_in.session),
        "csrf_field": CSRF_FIELD,
        "access": access,
        "whole_server": WHOLE_SERVER,
        "classes": [c for c in tool.links.contexts() if mine is None or c.course_id == mine],
        "waiting": [e for e in tool.outbox.waiting() if mine is None or e.course_id == mine],
        "refused": tool.outbox.parked(course_id=mine),
        "delivered": tool.outbox.delivered_count(mine),
        "pulled": pulled[:200],
    }
    return services.templates.TemplateResponse(request, "lti/instructor.html", context, headers=_NO_STORE)


@router.post("/instructor/lti/roster", name="instructor_lti_roster")
async def pull_roster(request: Request, services: AppServices, access: InCourse) -> Response:
    """Pull a class's membership from its LMS: an account for each learner in it, each a member of the
    class's course only (instructors, teaching assistants, mentors and administrators are left out)."""
    form = parse_form(
        await request.body(), request.headers.get("content-type", ""), max_fields=8, max_bytes=4096
    )
    auth: InstructorAuth = request.app.state.qkv_instructor
    auth.check_csrf(request, access.signed_in, form.get(CSRF_FIELD, ""))
    tool = tool_of(request)
    key = (form.get("issuer", ""), form.get("client_id", ""), form.get("context_id", ""))
    found = await run_in_threadpool(tool.links.context, *key)
    if found is None or (access.course_id is not None and found.course_id != access.course_id):
        # Another course's class answers as an unknown one: nothing says that it exists.
        raise HTTPException(
            404, f"No class {key[2][:100]!r} of {key[0][:200]!r} was seen in a launch of this course."
        )
    access.require_instructor("pull the course's roster")
    try:
        members = await run_in_threadpool(pull_members, found, tool.platforms, tool.tokens, tool.client)
    except ServiceUnavailable as error:
        raise HTTPException(502, f"The roster of {found.title!r} could not be pulled: {error}") from None
    learners = [member for member in members if course_role(member.roles) is CourseRole.LEARNER]
    made = await run_in_threadpool(_accounts_for, services, found.issuer, learners, found.course_id)
    await run_in_threadpool(tool.links.roster_pulled, *key)
    return RedirectResponse(f"/instructor/lti?pulled={made}", status_code=303, headers=_NO_STORE)


def _accounts_for(services: Services, issuer: str, members: list[Member], course_id: str | None) -> int:
    """Find or make each member's account, a member of ``course_id``; how many there are (a member whose
    LMS id the accounts refuse is left out, and logged)."""
    made = 0
    for member in members:
        try:
            learner_id = accounts_bridge.account_for(
                services, issuer, member.subject, member.name, member.email
            )
        except LaunchRefused as refused:
            log.info("a roster member of %s was left out: %s", issuer, refused)
            continue
        if course_id is not None:
            services.store.courses.enrol(course_id, learner_id, MembershipSource.LTI)
        made += 1
    return made
