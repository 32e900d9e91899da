"""The access log keeps no secret from a URL: a token in a query string or in a path is replaced before it
is written.

Sign-in links carry their token in the URL's fragment, which no request holds
(``qkv.web.http.sign_in_links``). This filter is the second line: a link of the old form, a hand-typed
URL or any parameter named like a token (``token``, ``id_token``, ``access_token``, ``registration_token``)
is written as ``token=[redacted]``, whole, so not even a prefix of it reaches the log.

A path may carry a secret too (``/lti/register/TOKEN``, the one-time registration link). Which segments
are secret is read from the app's own routes (``secret_paths``): every path parameter is secret but those
named in ``LOGGED_PATH_PARAMETERS`` (lessons, exercises, exports and ids that open nothing by themselves),
so a route added later with a token in its path is redacted without anyone remembering to list it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["ACCESS_LOGGER", "LOGGED_PATH_PARAMETERS", "RedactTokens", "install", "redact", "secret_paths"]

ACCESS_LOGGER = "uvicorn.access"
REDACTED = "[redacted]"
LOGGED_PATH_PARAMETERS = frozenset({"lesson_id", "exercise_id", "number", "name", "learner_id", "job_id"})
_TOKEN_PARAMETER = re.compile(r"([?&;][^=&;#\s]*token[^=&;#\s]*=)[^&;#\s]*", re.IGNORECASE)
_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(:[A-Za-z]+)?\}")

SecretPath = tuple[str | None, ...]
"""A route's path as its segments, ``None`` where a secret parameter is."""


def secret_path(template: str) -> SecretPath | None:
    """A route's path template as segments with ``None`` for each secret one; None when it has none.

    Examples
    --------
    >>> secret_path("/lti/register/{token}")
    ('', 'lti', 'register', None)
    >>> secret_path("/lessons/{lesson_id}") is None
    True
    """
    segments: list[str | None] = []
    for segment in template.split("/"):
        names = [found.group(1) for found in _PARAMETER.finditer(segment)]
        secret = any(name not in LOGGED_PATH_PARAMETERS for name in names)
        segments.append(None if secret else segment)
    return tuple(segments) if None in segments else None


def secret_paths(app: Any) -> tuple[SecretPath, ...]:
    """The paths of ``app``'s routes that carry a secret parameter (see ``secret_path``)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before 0.165 lists the included routers' routes in ``app.routes``
        routes = list(app.routes)
    else:
        routes = list(iter_route_contexts(app.routes))
    templates = {path for route in routes if isinstance(path := getattr(route, "path", None), str)}
    return tuple(sorted((p for t in templates if (p := secret_path(t)) is not None), key=repr))


def _redact_path(path: str, paths: tuple[SecretPath, ...]) -> str:
    """``path`` with the segments that a secret path has a parameter in replaced (extra segments, such as a
    trailing slash, do not hide it)."""
    segments = path.split("/")
    for secret in paths:
        if len(segments) < len(secret):
            continue
        if all(want is None or want == got for want, got in zip(secret, segments, strict=False)):
            for at, want in enumerate(secret):
                if want is None:
                    segments[at] = REDACTED
    return "/".join(segments)


def redact(target: str, paths: tuple[SecretPath, ...] = ()) -> str:
    """A request target with every token-like query value, and every secret path segment, replaced.

    Examples
    --------
    >>> redact("/sign-in?token=abc123&x=1")
    '/sign-in?token=[redacted]&x=1'
    >>> redact("/lti/launch?id_token=e.y.J&Token=q")
    '/lti/launch?id_token=[redacted]&Token=[redacted]'
    >>> redact("/lessons/x?tokens=3")  # a name merely holding "token" is still redacted
    '/lessons/x?tokens=[redacted]'
    >>> redact("/api/tokenizer")  # a path is not a query
    '/api/tokenizer'
    >>> registration = (secret_path("/lti/register/{token}"),)
    >>> redact("/lti/register/s3cr3t?registration_token=x&openid_configuration=y", registration)
    '/lti/register/[redacted]?registration_token=[redacted]&openid_configuration=y'
    >>> redact("/lti/register/s3cr3t/", registration), redact("/lti/registered", registration)
    ('/lti/register/[redacted]/', '/lti/registered')
    """
    path, mark, rest = target.partition("?")
    if paths:
        path = _redact_path(path, paths)
    return _TOKEN_PARAMETER.sub(r"\1" + REDACTED, path + mark + rest)


class RedactTokens(logging.Filter):
    """Rewrites uvicorn's access records (``client, method, target, version, status``) in place.

    Parameters
    ----------
    paths : tuple of SecretPath
        The app's paths with a secret in them (``secret_paths(app)``).
    """

    def __init__(self, paths: tuple[SecretPath, ...] = ()) -> None:
        super().__init__()
        self.paths = paths

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record's request target (and its message, for other formats); keep the record."""
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(redact(arg, self.paths) if isinstance(arg, str) else arg for arg in args)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg, self.paths)
        return True


def install(logger_name: str = ACCESS_LOGGER, app: Any = None) -> RedactTokens:
    """Put the filter on the access logger, once (after uvicorn has configured its logging), with the
    secret paths of ``app``'s routes.

    Examples
    --------
    >>> first, again = install("example.access"), install("example.access")
    >>> first is again, sum(isinstance(f, RedactTokens) for f in logging.getLogger("example.access").filters)
    (True, 1)
    """
    logger = logging.getLogger(logger_name)
    found = next((f for f in logger.filters if isinstance(f, RedactTokens)), None)
    if found is None:
        found = RedactTokens()
        logger.addFilter(found)
    if app is not None:
        found.paths = secret_paths(app)
    return found
