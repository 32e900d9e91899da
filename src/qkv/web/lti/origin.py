"""This server's origin as a platform sees it, which every LTI route puts in the URLs it sends."""

from __future__ import annotations

from starlette.requests import Request

from qkv.web.http.redirects import public_origin
from qkv.web.services import Services


def origin_of(services: Services, request: Request) -> str:
    """This server's origin: ``--public-url`` when set, else the request's own."""
    if services.settings.public_url:
        return public_origin(services.settings.public_url)
    return f"{request.url.scheme}://{request.url.netloc}".lower()
