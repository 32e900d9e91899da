"""``/lti/register/TOKEN``: the one-time URL an administrator pastes into the LMS (see ``registration``);
and ``/lti/canvas.json``, the configuration a Canvas developer key reads from its URL.

The LMS shows it in its own iframe (Moodle, Canvas) or a window. A refusal before the link is known to be
good is unframeable like every page; after that, the page (refusal or success) may be framed by the host
of the LMS's configuration, so the administrator reads it where they are. The route is async and its
fetches run on the event loop, bounded by ``registration_attempts``, so no LMS holds a thread that serves
pages.
"""

from __future__ import annotations

import logging
from html import escape

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, Response

from qkv.store.lti.registrations import RegistrationLinks
from qkv.web.http.clients import request_client_key
from qkv.web.lti import framing
from qkv.web.lti import registration as dr
from qkv.web.lti.origin import origin_of
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.registration_attempts import Opening
from qkv.web.lti.tool import LtiTool
from qkv.web.services import AppServices, Services

log = logging.getLogger("qkv.web.lti")
router = APIRouter(include_in_schema=False)
_NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def _page(title: str, text: str, status: int, *, close: bool) -> HTMLResponse:
    script = '<script src="/static/lti-close.js"></script>' if close else ""
    button = '<p><button type="button" id="lti-close">Close</button></p>' if close else ""
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<title>{escape(title)}</title><meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark"><link rel="stylesheet" href="/static/lesson.css">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head>'
        f'<body><main id="main"><h1>{escape(title)}</h1><p role="status">{escape(text)}</p>{button}</main>'
        f"{script}</body></html>"
    )
    return HTMLResponse(body, status_code=status, headers=_NO_STORE)


@router.get("/lti/canvas.json", name="lti_canvas_configuration")
def canvas_json(request: Request, services: AppServices) -> JSONResponse:
    """The tool's configuration for a Canvas developer key (LTI 1.3, "Enter URL")."""
    return JSONResponse(
        dr.canvas_configuration(_origin(request, services)), headers={"Cache-Control": "no-store"}
    )


@router.get("/lti/register/{token}", name="lti_register")
async def register(token: str, request: Request, services: AppServices) -> Response:
    """Register the LMS that opened this one-time URL, and close its dialog."""
    tool: LtiTool = request.app.state.qkv_lti
    links = RegistrationLinks(services.store.database)
    configuration_url = request.query_params.get("openid_configuration", "")
    opening = Opening(
        configuration_url,
        request.query_params.get("registration_token", "")[:4096],
        _origin(request, services),
    )
    try:
        await run_in_threadpool(dr.check_link, links, token)
    except LaunchRefused as refusal:
        log.info("LTI registration refused (%d): %s", refusal.status, refusal)
        return _refused(refusal, "")
    try:
        dr.check_request(configuration_url)
        record = await tool.registrar.register(
            links, tool.platforms, token, request_client_key(request), opening
        )
    except LaunchRefused as refusal:
        log.info("LTI registration refused (%d): %s", refusal.status, refusal)
        return _refused(refusal, framing.origin(configuration_url))
    log.info("LTI platform %s registered dynamically (client id %s)", record.issuer, record.client_id)
    text = (
        f"qkv is registered with {record.issuer} (client id {record.client_id}, deployment "
        f"{', '.join(record.deployment_ids)}). You can close this window; the LMS may ask you to enable qkv."
    )
    return framing.allow_framing(_page("qkv: registered", text, 200, close=True), [record])


def _refused(refusal: LaunchRefused, frame_origin: str | None) -> HTMLResponse:
    """The refusal's page: framable by ``frame_origin`` (the LMS's configuration host) once the link was
    known to be good, otherwise by no one; a 429 says when to try again."""
    page = _page("qkv: registration refused", str(refusal), refusal.status, close=False)
    if frame_origin:
        page.headers["content-security-policy"] = framing.policy([frame_origin])
    if refusal.status == 429:
        page.headers["retry-after"] = "10"
    return page


def _origin(request: Request, services: Services) -> str:
    return origin_of(services, request)
