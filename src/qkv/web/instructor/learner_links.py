"""The instructor's "sign-in link" button: a new personal one-time link for a learner with an account.

It does what ``qkv learners link ID`` does, from a learner's page on the instructor's view (reached
from the "Who is where" grid). The page that shows the link is for the instructor's eyes (the link
signs the learner in): it is never cached, and the request must carry the instructor session's CSRF token.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, HTTPException, Path, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.store.learner.accounts import ROSTER_LINK_LIFETIME, AccountRecord
from qkv.web.http.course_access import InCourse
from qkv.web.http.forms import form_body_schema, parse_form
from qkv.web.http.instructor_auth import CSRF_FIELD, InstructorAuth
from qkv.web.http.sign_in_links import qr_data_uri, request_base_url, sign_in_url
from qkv.web.services import AppServices, Services

router = APIRouter(include_in_schema=False)
LearnerId = Annotated[str, Path(max_length=36)]


def install(app: FastAPI, services: Services) -> None:
    """Add the route, and ``learner_accounts()`` to the templates: the accounts by learner id."""

    def learner_accounts() -> dict[str, AccountRecord]:
        return {record.learner_id: record for record in services.store.accounts.all()}

    services.templates.env.globals["learner_accounts"] = learner_accounts
    app.include_router(router)


@router.post(
    "/instructor/learners/{learner_id}/sign-in-link",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(csrf_token="The CSRF token of the instructor page."),
)
async def make_sign_in_link(
    learner_id: LearnerId, request: Request, services: AppServices, access: InCourse
) -> Response:
    """A new one-time sign-in link (7 days) for a roster learner of the instructor's course, shown once to
    the signed-in instructor and recorded (who made it, when) on the learner's page.

    Another course's learner answers 404, as an unknown one does; a teaching assistant gets 403; a learner
    from an LMS gets none (403: they sign in through their LMS).
    """
    auth: InstructorAuth = request.app.state.qkv_instructor
    signed_in = access.signed_in
    body = await request.body()
    form = parse_form(body, request.headers.get("content-type", ""), max_fields=8, max_bytes=4096)
    auth.check_csrf(request, signed_in, form.get(CSRF_FIELD, ""))
    if await run_in_threadpool(auth.desk.within(access.scope).learner, learner_id) is None:
        raise HTTPException(404, f"No learner with the id {learner_id!r} has saved any work.")
    access.require_instructor("make sign-in links for learners")
    account = await run_in_threadpool(services.store.accounts.get, learner_id)
    if account is None:
        raise HTTPException(
            404,
            f"The learner {learner_id!r} has no account, so there is no sign-in link to make: anonymous "
            "learners have only their browser. Import a roster with 'qkv learners import ROSTER.csv'.",
        )
    if account.issuer:
        raise HTTPException(
            403,
            f"The learner {account.display_name or account.external_id!r} came from the LMS "
            f"{account.issuer!r} and signs in through it; qkv makes sign-in links for roster learners only.",
        )
    await run_in_threadpool(
        services.store.courses.record_link,
        learner_id,
        signed_in.instructor.id,
        signed_in.instructor.name,
        access.course_id,
    )
    token = await run_in_threadpool(services.store.accounts.new_sign_in_token, learner_id)
    link = sign_in_url(request_base_url(request, services.settings), token)
    context: dict[str, Any] = {
        "learner": None,
        "instructor": signed_in.instructor,
        "csrf_token": auth.csrf_token(signed_in.session),
        "csrf_field": CSRF_FIELD,
        "account": account,
        "link": link,
        "qr": qr_data_uri(link),
        "days": ROSTER_LINK_LIFETIME.days,
    }
    return services.templates.TemplateResponse(
        request, "instructor/sign_in_link.html", context, headers={"Cache-Control": "no-store"}
    )
