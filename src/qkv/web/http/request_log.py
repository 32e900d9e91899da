"""One log record per request, with what an operator filters by: its id, the route's template, the status,
the time it took and whose it was (hashed); ``qkv serve --log-format json`` writes it instead of uvicorn's
access line.

The record names the route by its template (``/instructor/learners/{learner_id}``), so no learner id,
token or other value from the path or the query reaches the log. The request id is a fresh random one,
or the ``X-Request-ID`` a proxy in front sent when it is short and plain (letters, digits, ``.-_``), so a
request can be followed from the proxy's log into qkv's; it is sent back in ``X-Request-ID``.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qkv.web.http.json_logs import hashed_learner, request_id

__all__ = ["REQUEST_LOGGER", "RequestLogMiddleware", "route_template"]

REQUEST_LOGGER = "qkv.request"
_PLAIN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
log = logging.getLogger(REQUEST_LOGGER)


def route_template(scope: Scope) -> str:
    """The template of the route that answered (``/lessons/{lesson_id}``); a mount's prefix and
    ``/{path}`` for its files; ``(no route)`` when none matched.

    Examples
    --------
    >>> route_template({"path": "/nowhere"})
    '(no route)'
    >>> route_template({"path": "/static/app.js", "root_path": "/static"})
    '/static/{path}'
    """
    template = getattr(scope.get("route"), "path", None)
    if isinstance(template, str):
        return template
    root = str(scope.get("root_path") or "")
    return f"{root}/{{path}}" if root else "(no route)"


def _incoming_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            text = bytes(value).decode("latin-1")
            if _PLAIN_ID.fullmatch(text):
                return text
    return secrets.token_hex(8)


def _learner_of(state: dict[str, Any]) -> str | None:
    """The hashed id of the request's learner, where the request named one."""
    learner = state.get("qkv_learner_id")
    return hashed_learner(learner) if isinstance(learner, str) else None


class RequestLogMiddleware:
    """Log each HTTP request once it is answered (or fails), on the ``qkv.request`` logger."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request through the app, then log it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _incoming_id(scope)
        state: dict[str, Any] = scope.setdefault("state", {})
        status = 500  # if the app fails before answering, the server answers 500
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid.encode("latin-1"))]
            await send(message)

        token = request_id.set(rid)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(token)
            log.info(
                "%s %s %d",
                scope["method"],
                route_template(scope),
                status,
                extra={
                    "request_id": rid,
                    "method": scope["method"],
                    "route": route_template(scope),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "learner": _learner_of(state),
                },
            )
