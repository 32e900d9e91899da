"""The access log keeps no secret from a URL: a token in a query string is replaced before it is written.

Sign-in links carry their token in the URL's fragment, which no request holds
(``qkv.web.http.sign_in_links``). This filter is the second line: a link of the old form, a hand-typed
URL or any parameter named like a token (``token``, ``id_token``, ``access_token``) is written as
``token=[redacted]``, whole, so not even a prefix of it reaches the log.
"""

from __future__ import annotations

import logging
import re

__all__ = ["ACCESS_LOGGER", "RedactTokens", "install", "redact"]

ACCESS_LOGGER = "uvicorn.access"
_TOKEN_PARAMETER = re.compile(r"([?&;][^=&;#\s]*token[^=&;#\s]*=)[^&;#\s]*", re.IGNORECASE)


def redact(target: str) -> str:
    """A request target with the value of every token-like query parameter replaced.

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
    """
    return _TOKEN_PARAMETER.sub(r"\1[redacted]", target)


class RedactTokens(logging.Filter):
    """Rewrites uvicorn's access records (``client, method, target, version, status``) in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record's request target (and its message, for other formats); keep the record."""
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(redact(arg) if isinstance(arg, str) else arg for arg in args)
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def install(logger_name: str = ACCESS_LOGGER) -> None:
    """Put the filter on the access logger, once (after uvicorn has configured its logging).

    Examples
    --------
    >>> install("example.access"); install("example.access")
    >>> sum(isinstance(f, RedactTokens) for f in logging.getLogger("example.access").filters)
    1
    """
    logger = logging.getLogger(logger_name)
    if not any(isinstance(existing, RedactTokens) for existing in logger.filters):
        logger.addFilter(RedactTokens())
