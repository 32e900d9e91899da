"""qkv as an LTI 1.3 tool: launches from an LMS, grades back to it (AGS), its rosters (NRPS).

``install(app, services)`` opens the tool on the store's database and adds its routes: ``/lti/login``,
``/lti/launch``, ``/lti/jwks.json`` and the instructor's ``/instructor/lti``. The app starts the score
sender in its lifespan (``start``) and stops it there (``stop``). docs/lms.md tells how to register qkv
in Moodle and Canvas.
"""

from __future__ import annotations

from fastapi import FastAPI

from qkv.web.lti.tool import LtiTool
from qkv.web.services import Services
from qkv.web.solution_credit import AfterSolutionCredit, credited_score


def install(app: FastAPI, services: Services) -> LtiTool:
    """Open the tool on the store's database and register its routes."""
    from qkv.web.lti import instructor_page, routes

    tool = LtiTool.open(services.store.database, poll_s=services.settings.lti_score_poll_s)
    app.state.qkv_lti = tool
    app.include_router(routes.router)
    app.include_router(instructor_page.router)
    return tool


def lesson_changed(app_state: object, learner_id: str, lesson_id: str, progress: dict[str, object]) -> None:
    """The hook the lesson API calls after saving work: queue the learner's LMS score if it changed."""
    tool: LtiTool | None = getattr(app_state, "qkv_lti", None)
    if tool is None:
        return
    # A solve after the reference solution was shown earns the instructor's choice of credit, and is said.
    credit: AfterSolutionCredit = app_state.qkv.settings.after_solution_credit  # type: ignore[attr-defined]
    after = int(progress.get("solved_after_solution", 0))  # type: ignore[call-overload]
    score = credited_score(int(progress["done"]), after, credit)  # type: ignore[call-overload]
    note = None
    if after:
        solves = f"{after} exercise{'' if after == 1 else 's'}"
        note = f"{solves} solved after the reference solution was shown ({credit.describe()})."
    tool.scores.lesson_changed(learner_id, lesson_id, score, int(progress["total"]), note)  # type: ignore[call-overload]


__all__ = ["LtiTool", "install", "lesson_changed"]
