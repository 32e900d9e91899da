"""``--log-format json``: every log record as one JSON object on one line, for a school's log collector.

Each line holds ``time`` (ISO 8601, UTC, milliseconds), ``level``, ``logger`` and ``message``, and where the
record has them (the request log of ``qkv.web.http.request_log``, and any record logged while a request
is handled): ``request_id``, ``method``, ``route`` (the route's template, ``/api/lessons/{lesson_id}/code``,
never the path a client sent), ``status``, ``duration_ms`` and ``learner`` (the first 16 hex digits of the
SHA-256 of the learner's id, never the id). A traceback comes as ``exception``, one string.

No secret reaches a line: the request log writes no query string, no cookie and no header, and every
message and traceback passes through ``qkv.web.http.access_log.redact`` (a token-like query parameter is
written ``token=[redacted]``) in case some other record quotes a URL.

Plain ``logging``: a formatter and a filter, no dependency.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
from datetime import UTC, datetime

from qkv.web.http.access_log import redact

__all__ = ["REQUEST_FIELDS", "JsonFormatter", "RequestContext", "hashed_learner", "install", "request_id"]

# The request's id while it is handled, for the records logged meanwhile (threads of the threadpool too:
# Starlette copies the context into them).
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("qkv_request_id", default=None)
REQUEST_FIELDS = ("request_id", "method", "route", "status", "duration_ms", "learner")


def hashed_learner(learner_id: str) -> str:
    """What a log line says of a learner: enough to follow one through the log, not their id.

    Examples
    --------
    >>> hashed_learner("00000000-0000-4000-8000-00000000000a")
    '1ad35d608dd7b52a'
    """
    return hashlib.sha256(learner_id.encode("utf-8")).hexdigest()[:16]


class RequestContext(logging.Filter):
    """Gives every record logged while a request is handled that request's id."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add ``request_id`` where the record has none; keep the record."""
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line.

    Examples
    --------
    >>> record = logging.LogRecord("qkv.web", logging.INFO, "", 1, "GET %s", ("/sign-in?token=abc",), None)
    >>> record.created = 0.0
    >>> line = json.loads(JsonFormatter().format(record))
    >>> line["time"], line["level"], line["logger"], line["message"]
    ('1970-01-01T00:00:00.000Z', 'info', 'qkv.web', 'GET /sign-in?token=[redacted]')
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line: the fixed fields, the request's fields it has, its traceback."""
        moment = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, object] = {
            "time": moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for field in REQUEST_FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                line[field] = value
        if record.exc_info:
            line["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)


def install(level: str) -> None:
    """Send every logger's records, at ``level`` and above, to standard error as JSON lines.

    Replaces the root logger's handlers (``logging.basicConfig`` would keep an earlier one).

    Parameters
    ----------
    level : str
        ``debug``, ``info`` or ``warning``.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestContext())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
