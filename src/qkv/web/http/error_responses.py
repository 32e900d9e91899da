"""Every error becomes a sentence: ``{"detail": "..."}`` for the API, the error page for browsers."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from qkv.store import LearnerErased, StoreError
from qkv.web.http.jsonsafe import SafeJSONResponse

log = logging.getLogger("qkv.web")

_PLAIN_DETAILS = {"Not Found", "Method Not Allowed"}


def validation_sentence(errors: list[Any]) -> str:
    """One sentence describing pydantic's validation errors for a request.

    Examples
    --------
    >>> validation_sentence([{"loc": ("body", "answer"), "msg": "Field required", "type": "missing"}])
    "The request body is missing the field 'answer'."
    >>> validation_sentence([{"loc": ("body", "x", 0), "msg": "Input should be a valid number", "type": "x"}])
    "The request body's field 'x[0]' is not acceptable: input should be a valid number."
    """
    sentences = [_one_error(error) for error in errors[:3]]
    more = len(errors) - 3
    text = " ".join(sentences)
    if more > 0:
        text += f" ({more} more problem{'s' if more > 1 else ''} not shown.)"
    return text or "The request is not acceptable."


def _one_error(error: Any) -> str:
    location = [part for part in error.get("loc", ()) if part != "body"]
    where = ""
    for part in location:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    kind = error.get("type", "")
    message = str(error.get("msg", "is not acceptable")).rstrip(".")
    message = message[:1].lower() + message[1:]
    if kind == "missing":
        return f"The request body is missing the field {where!r}."
    if kind == "extra_forbidden":
        return f"The request body has a field {where!r} that this endpoint does not take."
    if kind == "json_invalid":
        return "The request body is not valid JSON."
    if kind in {"model_attributes_type", "model_type", "dict_type"} and not where:
        return "The request body must be a JSON object with the documented fields."
    if not where:
        return f"The request body is not acceptable: {message}."
    return f"The request body's field {where!r} is not acceptable: {message}."


def wants_html(request: Request) -> bool:
    """Whether the error for ``request`` is the error page (a browser's page request) rather than JSON."""
    path = request.url.path
    if path.startswith(("/api/", "/static/")) or path in {"/openapi.json", "/healthz", "/readyz"}:
        return False
    return "text/html" in request.headers.get("accept", "")


def _sentence_for(request: Request, status: int, detail: Any) -> str:
    if isinstance(detail, str) and detail not in _PLAIN_DETAILS:
        return detail
    if status == 404:
        return f"There is nothing at {request.url.path}."
    if status == 405:
        return f"{request.method} is not allowed on {request.url.path}."
    return f"The request failed with status {status}."


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn exceptions into sentences."""

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, StarletteHTTPException)
        sentence = _sentence_for(request, error.status_code, error.detail)
        return _answer(request, error.status_code, sentence, dict(error.headers or {}))

    async def invalid_request(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        return SafeJSONResponse({"detail": validation_sentence(list(error.errors()))}, status_code=422)

    async def store_failed(request: Request, error: Exception) -> Response:
        log.error("database error on %s %s: %s", request.method, request.url.path, error)
        from qkv.web.metrics import DATABASE_ERRORS  # here: the metrics import the HTTP plumbing

        DATABASE_ERRORS.inc()
        # The details (database address, driver message) go to the log, not to learners.
        sentence = (
            "Your work could not be saved or read just now: the database is not answering. "
            "Try again in a moment."
        )
        return _answer(request, 503, sentence, {"Retry-After": "5"})

    async def learner_erased(request: Request, error: Exception) -> Response:
        # The browser still holds the cookie of a learner erased on request: nothing is saved under it,
        # and both cookies go, so that the next page starts a new learner.
        log.info("a write for an erased learner was refused on %s %s", request.method, request.url.path)
        sentence = (
            "This browser's learner was erased on request, with all of their work, so nothing more is "
            "saved for them. Reload the page to start afresh as a new learner."
        )
        response = _answer(request, 410, sentence, {"Cache-Control": "no-store"})
        identity = getattr(getattr(request.app.state, "qkv", None), "identity", None)
        if identity is not None:
            identity.clear_cookies(request, response)
        return response

    async def unexpected(request: Request, error: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        sentence = "Something went wrong on the server; the error has been logged. Please try again."
        return _answer(request, 500, sentence, {})

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StoreError, store_failed)
    app.add_exception_handler(LearnerErased, learner_erased)
    app.add_exception_handler(Exception, unexpected)


def _answer(request: Request, status: int, sentence: str, headers: dict[str, str]) -> Response:
    """The sentence as the error page for a browser, or as ``{"detail": ...}`` for the API."""
    if wants_html(request):
        return error_page(request, status, sentence, headers)
    return SafeJSONResponse({"detail": sentence}, status_code=status, headers=headers)


def error_page(request: Request, status: int, message: str, headers: dict[str, str]) -> Response:
    """The ``error.html`` page, or a bare page if the templates cannot be used."""
    from html import escape

    from starlette.responses import HTMLResponse

    state = getattr(request.app.state, "qkv", None)
    if state is not None:
        try:
            page: Response = state.templates.TemplateResponse(
                request,
                "error.html",
                {"status_code": status, "message": message, "csrf_token": None, "learner": None},
                status_code=status,
                headers=headers,
            )
            return page
        except Exception:  # a broken template must not hide the original error
            log.exception("the error page template failed")
    body = f"<!doctype html><title>qkv: error {status}</title><h1>Error {status}</h1><p>{escape(message)}</p>"
    return HTMLResponse(body, status_code=status, headers=headers)
