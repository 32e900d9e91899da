"""Refusing bad path and query parameters before any route sees them: control characters, over-long values.

A NUL in a path or query parameter reaches PostgreSQL as a text it refuses (SQLite takes it), and a value
longer than a column answers with a database error, so one generic check stands in front of every route
and every mounted folder: the decoded path and every query name and value may hold no control character
(NUL included), a path segment at most ``max_segment`` characters, a query value at most ``max_value``,
the query string at most ``max_query_bytes`` and ``max_fields`` fields. Each refusal is a 4xx with a
sentence naming the parameter and its size. Form fields are read by ``qkv.web.http.forms``, which refuses
control characters the same way; request bodies by ``qkv.web.http.body_limits``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from qkv.web.http.error_responses import error_page, wants_html
from qkv.web.http.jsonsafe import SafeJSONResponse

# Tab, CR and LF are text a person might type in a query; the other C0 controls and DEL are not.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_SEGMENT = 256
MAX_VALUE = 4096
MAX_QUERY_BYTES = 16 * 1024
MAX_FIELDS = 64


def parameter_problem(
    path: str,
    query: bytes,
    *,
    max_segment: int = MAX_SEGMENT,
    max_value: int = MAX_VALUE,
    max_query_bytes: int = MAX_QUERY_BYTES,
    max_fields: int = MAX_FIELDS,
) -> tuple[int, str] | None:
    """The status and sentence refusing a request's path or query, or None when both are fine.

    Parameters
    ----------
    path : str
        The request's decoded path.
    query : bytes
        Its raw query string.
    max_segment, max_value, max_query_bytes, max_fields : int
        The bounds (see the module's note).

    Returns
    -------
    tuple of (int, str) or None

    Examples
    --------
    >>> parameter_problem("/lessons/L4.1", b"page=2") is None
    True
    >>> parameter_problem("/instructor/learners/\\x00", b"")
    (400, 'The path holds the control character U+0000, which no address here takes.')
    >>> parameter_problem("/lti/login", b"iss=a%00b")
    (400, "The query parameter 'iss' holds the control character U+0000, which no parameter here takes.")
    >>> parameter_problem("/x", b"q=" + b"y" * 5000)
    (414, "The query parameter 'q' has 5,000 characters; at most 4,096 are accepted.")
    """
    control = PATH_CONTROL.search(path)
    if control:
        return (
            400,
            f"The path holds the control character {_code(control.group())}, which no address here takes.",
        )
    longest = max(path.split("/"), key=len)
    if len(longest) > max_segment:
        return 414, (
            f"A part of the path has {len(longest):,} characters ({longest[:20]!r}...); at most "
            f"{max_segment:,} are accepted."
        )
    if len(query) > max_query_bytes:
        return 414, f"The query string is {len(query):,} bytes; at most {max_query_bytes:,} are accepted."
    fields = parse_qsl(query.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="replace")
    if len(fields) > max_fields:
        return 400, f"The query string has {len(fields)} parameters; at most {max_fields} are accepted."
    return _field_problem(fields, max_value)


def _field_problem(fields: list[tuple[str, str]], max_value: int) -> tuple[int, str] | None:
    for name, value in fields:
        shown = name[:40]
        for text in (name, value):
            control = CONTROL.search(text)
            if control:
                return 400, (
                    f"The query parameter {shown!r} holds the control character {_code(control.group())}, "
                    "which no parameter here takes."
                )
        if len(name) > max_value or len(value) > max_value:
            size = max(len(name), len(value))
            return (
                414,
                f"The query parameter {shown!r} has {size:,} characters; at most {max_value:,} are accepted.",
            )
    return None


def _code(character: str) -> str:
    return f"U+{ord(character):04X}"


class ParameterLimitMiddleware:
    """Answers a request whose path or query ``parameter_problem`` refuses, before any route runs.

    Parameters
    ----------
    app : ASGI app
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = parameter_problem(scope.get("path", ""), scope.get("query_string", b""))
        if problem is None:
            await self.app(scope, receive, send)
            return
        status, sentence = problem
        request = Request(scope, receive)
        if "app" in scope and wants_html(request):
            response = error_page(request, status, sentence, {})
        else:
            response = SafeJSONResponse({"detail": sentence}, status_code=status)
        await response(scope, receive, send)
