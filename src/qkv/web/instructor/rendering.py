"""What every instructor page shares: the signed-in instructor and the page rendered with its navigation.

``routes.py`` and ``class_page.py`` both render through here, so neither imports the other's private
helpers.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.responses import Response

from qkv.web.http.course_access import WHOLE_SERVER, CourseAccess
from qkv.web.http.instructor_auth import CSRF_FIELD, InstructorAuth, SignedInInstructor
from qkv.web.services import Services

NO_STORE = {"Cache-Control": "no-store"}


def auth_of(request: Request) -> InstructorAuth:
    """The app's instructor access checker, kept on ``app.state`` by ``routes.install``."""
    found: InstructorAuth = request.app.state.qkv_instructor
    return found


def require_instructor(request: Request) -> SignedInInstructor:
    """The signed-in instructor of ``request``; raises the access checker's refusal when there is none."""
    return auth_of(request).require(request)


Instructor = Annotated[SignedInInstructor, Depends(require_instructor)]


def render_page(
    request: Request,
    services: Services,
    template: str,
    context: dict[str, Any],
    who: SignedInInstructor | CourseAccess | None,
) -> Response:
    """An instructor page; with a ``CourseAccess``, its navigation shows the course and its picker."""
    access = who if isinstance(who, CourseAccess) else None
    signed_in = who.signed_in if isinstance(who, CourseAccess) else who
    base = {
        "learner": None,
        "instructor": signed_in.instructor if signed_in else None,
        "csrf_token": auth_of(request).csrf_token(signed_in.session) if signed_in else None,
        "csrf_field": CSRF_FIELD,
        "access": access,
        "whole_server": WHOLE_SERVER,
    }
    return services.templates.TemplateResponse(request, template, {**base, **context}, headers=NO_STORE)
