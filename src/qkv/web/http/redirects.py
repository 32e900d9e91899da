"""Every redirect's ``Location`` is the configured public URL plus a path, or the path alone: never ``Host``.

Starlette builds the trailing-slash redirect (``/instructor/`` → ``/instructor``) from the request's
``Host`` header, so a request naming another host would be sent there (cache poisoning, or a link
that leads off the site). This middleware rewrites the ``Location`` of every response on the way
out, whoever made it, so no route has to remember to.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SafeLocationMiddleware", "public_origin", "safe_location"]

# A path that starts with two slashes (or a slash and a backslash, which browsers read alike) is a
# link to another host, so a run of them at the start is folded into one.
_LEADING_SLASHES = re.compile(r"^[/\\]+")


def public_origin(url: str) -> str:
    """``scheme://host[:port]`` of the server's public URL, checked; the form ``--public-url`` takes.

    Raises
    ------
    ValueError
        With a sentence quoting the URL, unless it is http(s), names a host, and has no user, path
        (other than ``/``), query or fragment.

    Examples
    --------
    >>> public_origin("https://qkv.school.example/")
    'https://qkv.school.example'
    >>> public_origin("qkv.school.example")
    Traceback (most recent call last):
    ...
    ValueError: The public URL 'qkv.school.example' must start with http:// or https://.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"}:
        raise ValueError(f"The public URL {url!r} must start with http:// or https://.")
    if not parts.hostname:
        raise ValueError(f"The public URL {url!r} names no host.")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"The public URL {url!r} must not hold a user name or password.")
    if parts.path not in {"", "/"} or parts.query or parts.fragment:
        raise ValueError(
            f"The public URL {url!r} must be only scheme, host and port (like https://qkv.example): "
            "qkv serves from the root of its address."
        )
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        raise ValueError(f"The public URL {url!r} has a port that is not a number from 0 to 65535.") from None
    return f"{parts.scheme}://{parts.netloc}".lower()


def safe_location(location: str, origin: str | None) -> str:
    """The ``Location`` to send instead of ``location``: ``origin`` (if any) and the path, query and fragment.

    Examples
    --------
    >>> safe_location("http://evil.example/instructor?x=1", None)
    '/instructor?x=1'
    >>> safe_location("/instructor", "https://qkv.example")
    'https://qkv.example/instructor'
    >>> safe_location("//evil.example/x", None), safe_location("/\\\\evil.example/x", None)
    ('/x', '/evil.example/x')
    """
    parts = urlsplit(location)
    path = _LEADING_SLASHES.sub("/", parts.path)
    if not parts.scheme and not parts.netloc and not path.startswith("/"):
        path = "/" + path  # every route is absolute; a relative one would resolve differently per page
    tail = (
        path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    )
    return (origin or "") + tail


class SafeLocationMiddleware:
    """Rewrites the ``Location`` header of every HTTP response with ``safe_location``.

    Parameters
    ----------
    app : ASGI app
    public_url : str or None
        The server's public URL (``--public-url``); None gives relative redirects.
    """

    def __init__(self, app: ASGIApp, *, public_url: str | None = None) -> None:
        self.app = app
        self.origin = public_origin(public_url) if public_url else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_safely(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (name, self._rewrite(value) if name.lower() == b"location" else value)
                    for name, value in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, send_safely)

    def _rewrite(self, value: bytes) -> bytes:
        return safe_location(value.decode("latin-1"), self.origin).encode("latin-1")
