"""Learner sign-in links: the URL a token makes, and its QR code as an inline SVG ``data:`` URI.

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

__all__ = ["SIGN_IN_PATH", "qr_data_uri", "sign_in_url"]

SIGN_IN_PATH = "/sign-in"


def sign_in_url(base_url: str, token: str) -> str:
    """The sign-in link for a token, under ``base_url`` (the server's public address).

    Examples
    --------
    >>> sign_in_url("https://qkv.example/", "a+b")
    'https://qkv.example/sign-in?token=a%2Bb'
    """
    return f"{base_url.rstrip('/')}{SIGN_IN_PATH}?token={quote(token, safe='')}"


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
    >>> qr_data_uri("https://qkv.example/sign-in?token=x").startswith("data:image/svg+xml;base64,")
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
