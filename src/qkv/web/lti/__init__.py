"""qkv as an LTI 1.3 tool: launches from an LMS, grades back to it (AGS), its rosters (NRPS).

``install(app, services)`` opens the tool on the store's database and adds its routes: ``/lti/login``,
``/lti/launch`` (resource links and deep linking), ``/lti/deep-link`` (the picker's answer),
``/lti/register/TOKEN`` (Dynamic Registration), ``/lti/continue`` (a framed launch's new window),
``/lti/jwks.json`` and the instructor's ``/instructor/lti``. The app starts the score
sender in its lifespan (``start``) and stops it there (``stop``). docs/lms.md tells how to register qkv
in Moodle and Canvas.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from fastapi import FastAPI

from qkv.web.lesson_hooks import add_listener
from qkv.web.lti.lms_fetch import FetchPolicy
from qkv.web.lti.scores import queue_lesson_score
from qkv.web.lti.tool import LtiTool
from qkv.web.services import Services
from qkv.web.solution_credit import HelpPolicy


def install(app: FastAPI, services: Services) -> LtiTool:
    """Open the tool on the store's database and register its routes."""
    from qkv.web.lti import (
        deep_link_routes,
        framed_launch,
        instructor_page,
        launch_routes,
        registration_routes,
    )

    settings = services.settings
    fetch = FetchPolicy(
        allow_private=settings.allow_private_lms, deadline_s=settings.lti_registration_deadline_s
    )
    tool = LtiTool.open(services.store.database, poll_s=settings.lti_score_poll_s, fetch=fetch)
    app.state.qkv_lti = tool
    add_listener(app.state, partial(lesson_changed, app.state))  # the learner's LMS score, if launched
    app.include_router(launch_routes.router)
    app.include_router(deep_link_routes.router)
    app.include_router(registration_routes.router)
    app.include_router(framed_launch.router)
    app.include_router(instructor_page.router)
    return tool


def lesson_changed(app_state: object, learner_id: str, lesson_id: str, progress: dict[str, Any]) -> None:
    """The listener :func:`install` adds (:mod:`qkv.web.lesson_hooks`): after the lesson API saves a learner's
    work, queue the learner's LMS score if it changed."""
    tool: LtiTool | None = getattr(app_state, "qkv_lti", None)
    if tool is None:
        return
    services: Services = app_state.qkv  # type: ignore[attr-defined]
    policy: HelpPolicy = services.settings.help_policy
    queue_lesson_score(tool.scores, services.store.due_dates, learner_id, lesson_id, progress, policy)


__all__ = ["LtiTool", "install", "lesson_changed"]
