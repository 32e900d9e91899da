"""Sign-in links: the URL a one-time token makes, and its QR code as an inline SVG ``data:`` URI.

The token travels in the URL's fragment (``/sign-in#token=…``), which a browser never sends: no request
line, access log, proxy log or ``Referer`` header ever holds it, and a mail scanner or chat preview that
fetches the link gets the page without the token. The page's script reads the fragment, wipes it from the
address bar and posts the token in a form body (``static/sign-in-link.js``).

The QR code is drawn by ``segno`` as an SVG document and embedded as a ``data:`` URI in an ``<img>``
(the page's CSP allows ``img-src 'self' data:``; no inline script or style is needed).
"""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:  # the CLI builds links too, without loading the web stack
    from fastapi import Request

    from qkv.web.settings import Settings

__all__ = [
    "INSTRUCTOR_SIGN_IN_PATH",
    "SIGN_IN_PATH",
    "instructor_sign_in_url",
    "qr_data_uri",
    "sign_in_url",
]

SIGN_IN_PATH = "/sign-in"
INSTRUCTOR_SIGN_IN_PATH = "/instructor/sign-in"


def _link(base_url: str, path: str, token: str) -> str:
    return f"{base_url.rstrip('/')}{path}#token={quote(token, safe='')}"


def sign_in_url(base_url: str, token: str) -> str:
    """A learner's sign-in link for a token, under ``base_url`` (the server's public address).

    Examples
    --------
    >>> sign_in_url("https://qkv.example/", "a+b")
    'https://qkv.example/sign-in#token=a%2Bb'
    """
    return _link(base_url, SIGN_IN_PATH, token)


def instructor_sign_in_url(base_url: str, token: str) -> str:
    """An instructor's sign-in link for a token, under ``base_url``.

    Examples
    --------
    >>> instructor_sign_in_url("http://127.0.0.1:8000", "t")
    'http://127.0.0.1:8000/instructor/sign-in#token=t'
    """
    return _link(base_url, INSTRUCTOR_SIGN_IN_PATH, token)


def request_base_url(request: Request, settings: Settings) -> str:
    """Where this server is reached: ``--public-url`` when set, else the address the request used.

    The link is shown only to the person who asked for it (never stored, never a redirect), so without a
    configured public URL the request's own address is the one their other device can reach too.
    """
    return settings.public_url or str(request.base_url)


def qr_data_uri(link: str) -> str:
    """The link's QR code: an SVG image in a ``data:`` URI, dark modules on a light ground with a quiet zone.

    Examples
    --------
    >>> qr_data_uri("https://qkv.example/sign-in#token=x").startswith("data:image/svg+xml;base64,")
    True
    """
    import segno

    code = segno.make(link, error="m", micro=False)
    buffer = io.BytesIO()
    # Fixed colours on a white ground: a phone's camera reads it in dark mode too.
    code.save(
        buffer, kind="svg", scale=6, border=4, dark="#000000", light="#ffffff", xmldecl=False, svgns=True
    )
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
