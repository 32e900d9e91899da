"""Refusing bad request bodies before the app parses them: too big, too slow, ambiguous, not UTF-8, not JSON.

The whole body of a state-changing request is read here (it is small, at most ``max_body_bytes``)
and handed on unchanged, so the routes never see a body that would make them fail.
"""

from __future__ import annotations

import asyncio
import json
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qkv.web.http.jsonsafe import SafeJSONResponse

_WITH_BODY = {"POST", "PUT", "PATCH", "DELETE"}
_Refusal = tuple[int, str]  # the status and the sentence a refused request gets


class BodyLimitMiddleware:
    """413 for bodies over ``max_bytes``, 408 for bodies that trickle in, 400 for undecodable JSON.

    Parameters
    ----------
    app : ASGI app
    max_bytes : int
        Largest accepted body.
    timeout_s : float
        Time allowed to receive the whole body.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        raw_headers = [(name.lower(), value) for name, value in scope.get("headers", [])]
        refusal = self._header_refusal(raw_headers)
        if refusal is not None:
            await _refuse(scope, receive, send, *refusal)
            return
        body = await self._receive_body(receive)
        if body is None:  # the client went away before the whole body arrived
            return
        if isinstance(body, tuple):
            await _refuse(scope, receive, send, *body)
            return
        problem = _json_problem_of(dict(raw_headers), body)
        if problem is not None:
            await _refuse(scope, receive, send, 400, problem)
            return
        await self.app(scope, _replaying(body, receive), send)

    def _header_refusal(self, raw_headers: list[tuple[bytes, bytes]]) -> _Refusal | None:
        """Framing headers sent twice, or a Content-Length that is no number or over the limit."""
        for framing in (b"content-type", b"content-length", b"transfer-encoding"):
            count = sum(1 for name, _ in raw_headers if name == framing)
            if count > 1:
                # Two of them would be read differently by different layers (the first or the last wins).
                title = framing.decode().title()
                return 400, f"The request has {count} {title} headers; send exactly one."
        declared = dict(raw_headers).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                return 400, "The Content-Length header is not a whole number."
            if int(declared) > self.max_bytes:
                return 413, self._too_big(int(declared))
        return None

    async def _receive_body(self, receive: Receive) -> bytes | _Refusal | None:
        """The whole body, or why it is refused (too slow, too big); None when the client went away."""
        body = bytearray()
        deadline = time.monotonic() + self.timeout_s
        more = True
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return 408, f"The request body took longer than {self.timeout_s:g} s to arrive."
            if message["type"] == "http.disconnect":
                return None
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                return 413, self._too_big(len(body), at_least=True)
            more = bool(message.get("more_body", False))
        return bytes(body)

    def _too_big(self, size: int, *, at_least: bool = False) -> str:
        amount = f"more than {self.max_bytes:,}" if at_least else f"{size:,}"
        return (
            f"The request body is {amount} bytes; this server accepts at most {self.max_bytes:,} bytes "
            f"({self.max_bytes // 1024} KiB)."
        )


def _json_problem_of(headers: dict[bytes, bytes], body: bytes) -> str | None:
    """Why a JSON body (or one without a Content-Type) is not acceptable JSON; None for other bodies."""
    content_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
    # FastAPI reads a body without a Content-Type as JSON too, so those are checked as well.
    if body and (content_type in (b"", b"application/json") or content_type.endswith(b"+json")):
        return json_problem(body)
    return None


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, whole, then whatever the client sends next."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def json_problem(body: bytes) -> str | None:
    """A sentence saying why ``body`` is not acceptable JSON, or None if it is fine.

    Examples
    --------
    >>> json_problem(b'{"a": 1}') is None
    True
    >>> json_problem(b'{"a": NaN}')
    'The request body contains NaN; numbers must be finite.'
    >>> json_problem(b'\\xff')
    'The request body is not valid UTF-8 (byte 0xff at position 0).'
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        bad = body[error.start]
        return f"The request body is not valid UTF-8 (byte 0x{bad:02x} at position {error.start})."

    def refuse_constant(name: str) -> object:
        raise _NonFinite(name)

    try:
        document = json.loads(text, parse_constant=refuse_constant)
    except _NonFinite as constant:
        return f"The request body contains {constant}; numbers must be finite."
    except RecursionError:
        return "The request body's JSON is nested too deeply."
    except json.JSONDecodeError as error:
        return (
            f"The request body is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}."
        )
    return _text_problem(document)


def _text_problem(document: object) -> str | None:
    r"""A sentence naming a string in ``document`` that the app could not store or send back, if any.

    JSON escapes can spell a lone surrogate (``"\ud800"``), which no UTF-8 encoder accepts, and NUL
    (``"\u0000"``), which PostgreSQL text columns refuse; both would otherwise fail deep in a route.
    The walk is iterative: the document may be as deeply nested as the JSON parser allows.

    Examples
    --------
    >>> _text_problem({"code": "x = 1", "n": [1, "ok"]}) is None
    True
    >>> _text_problem({"code": "x = '\ud800'"})
    'The request body contains a lone surrogate (\\ud800) in a string; text must be valid Unicode.'
    >>> _text_problem(["a\x00b"])
    'The request body contains a NUL character (\\u0000) in a string, which this server does not accept.'
    """
    pending: list[object] = [document]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item
        elif isinstance(item, str):
            if "\x00" in item:
                return (
                    "The request body contains a NUL character (\\u0000) in a string, "
                    "which this server does not accept."
                )
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                surrogate = f"\\u{ord(item[error.start]):04x}"
                return (
                    f"The request body contains a lone surrogate ({surrogate}) in a string; "
                    "text must be valid Unicode."
                )
    return None


class _NonFinite(ValueError):
    pass


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, sentence: str) -> None:
    response = SafeJSONResponse({"detail": sentence}, status_code=status, headers={"connection": "close"})
    await response(scope, receive, send)
