"""``GET /readyz``: whether this server can do its work now, each part checked, with a reason when not.

``/healthz`` stays the cheap liveness check (one trivial query) that a load balancer polls; ``/readyz`` is
for the deployment and the monitoring: the database reachable and at the schema version this qkv knows,
graders available (this server's own sandbox, or with ``--grading remote`` a grader whose heartbeat is at
most the queue's stall limit old, 30 s by default) and the LTI tool's signing key loaded. It answers 200
``{"status": "ready", "checks": {...}}`` when every check passes, and 503 with ``"status": "not ready"``
and ``"reasons"``, one sentence per failing check, otherwise. Nothing in it names a learner.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from qkv.store import LATEST_VERSION, StoreError, schema_version
from qkv.web.http.jsonsafe import SafeJSONResponse
from qkv.web.services import Services

router = APIRouter()
log = logging.getLogger("qkv.web.readiness")
_NO_STORE = {"Cache-Control": "no-store"}
OK = "ok"


def database_check(services: Services) -> str:
    """``ok``, or why the database cannot serve: unreachable, or at another schema version than this qkv's."""
    try:
        with services.store.database.read() as conn:
            version = schema_version(conn)
    except StoreError as error:
        return f"The database cannot be reached: {error}"
    if version != LATEST_VERSION:
        return (
            f"The database has schema version {version}, but this server runs version {LATEST_VERSION}; "
            "restart it (a newer qkv upgraded the database) or upgrade qkv."
        )
    return OK


async def grading_check(services: Services) -> str:
    """``ok``, or why no program would be graded now."""
    if services.remote is not None:
        try:
            alive = int((await services.remote.health())["graders_alive"])
        except Exception as error:  # the queue's database unreachable: a reason, never a 500
            log.warning("the grading queue could not be read for /readyz: %s", error)
            return f"The graders' job queue cannot be read ({type(error).__name__})."
        if alive == 0:
            return "No grader is alive: none has sent a heartbeat recently, so programs would wait."
        return OK
    if services.queue is None or services.grader is None:
        return services.grading_off_reason or "This server's grader is not running."
    return OK


def lti_check(request: Request) -> str:
    """``ok``, or why the LTI tool could not sign a message (its key is not loaded)."""
    tool = getattr(request.app.state, "qkv_lti", None)
    if tool is None or not getattr(tool.key, "kid", None):
        return "The LTI tool's signing key is not loaded, so LMS launches and scores cannot be signed."
    return OK


@router.get("/readyz")
async def readiness(request: Request) -> SafeJSONResponse:
    """For deployments and monitoring: 200 when the database, the graders and the LTI keys are ready;
    503 with a sentence for each that is not."""
    services: Services = request.app.state.qkv
    checks: dict[str, Any] = {
        "database": await run_in_threadpool(database_check, services),
        "grading": await grading_check(services),
        "lti": lti_check(request),
    }
    reasons = [said for said in checks.values() if said != OK]
    if not reasons:
        return SafeJSONResponse({"status": "ready", "checks": checks}, headers=_NO_STORE)
    body = {"status": "not ready", "reasons": reasons, "checks": checks}
    return SafeJSONResponse(body, status_code=503, headers=_NO_STORE)
