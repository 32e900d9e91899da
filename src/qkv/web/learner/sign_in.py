"""The learner's sign-in pages: using a sign-in link, signing out, and "Sign in on another device".

A link carries its one-time token in the URL's fragment (``/sign-in#token=...``), which no request line
holds: ``GET /sign-in`` is the page, and its script posts the token to ``POST /sign-in/check``, which names
the account the link opens ("Sign in as Ada Lovelace (s-1001)?") and what becomes of this browser's
anonymous work, without using the link up. Only that page's same-site ``POST /sign-in`` uses it up, so a
link preview or a mail scanner that fetches the URL uses nothing and sees no token. A personal link (the
learner's own) brings the browser's anonymous work into the account; a device link never does.
``POST /sign-out`` ends this browser's session everywhere, ``POST /sign-out/everywhere`` every session of
the learner. ``/account/devices`` makes a short-lived device link, with its QR code. The forms carry the
learner's CSRF token in a ``csrf_token`` field.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from qkv.store.learner.accounts import DEVICE_LINK_LIFETIME, AccountRecord, SignInLink
from qkv.web.http.forms import form_body_schema, parse_form
from qkv.web.http.instructor_auth import same_origin
from qkv.web.http.learner_sessions import sign_in, sign_out
from qkv.web.http.security import CSRF_FIELD, RequestLearner
from qkv.web.http.sign_in_links import qr_data_uri, request_base_url, sign_in_url
from qkv.web.services import AppServices, Services

router = APIRouter(include_in_schema=False)

_NO_STORE = {"Cache-Control": "no-store"}
_MAX_FORM_BYTES = 4096
_MAX_FORM_FIELDS = 8


def _reader(request: Request, services: AppServices) -> RequestLearner:
    return services.identity.learner(request)


Reader = Annotated[RequestLearner, Depends(_reader)]


def learner_context(services: Services, learner: RequestLearner) -> dict[str, Any]:
    """What ``base.html`` shows of the learner: their name, whether signed in, and the CSRF token."""
    name = services.store.learners.display_name(learner.id) if learner.from_cookie else None
    return {
        "learner": {"display_name": name, "signed_in": learner.signed_in},
        "csrf_token": services.identity.csrf_token(learner.id),
    }


def _render(
    request: Request,
    services: Services,
    template: str,
    context: dict[str, Any],
    learner: RequestLearner | None,
    status_code: int = 200,
) -> Response:
    base: dict[str, Any] = {"learner": None, "csrf_token": None}
    if learner is not None:
        base = learner_context(services, learner)
    return services.templates.TemplateResponse(
        request,
        template,
        {**base, "csrf_field": CSRF_FIELD, **context},
        status_code=status_code,
        headers=_NO_STORE,
    )


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    content_type = request.headers.get("content-type", "")
    return parse_form(body, content_type, max_fields=_MAX_FORM_FIELDS, max_bytes=_MAX_FORM_BYTES)


_LINK_REFUSED = (
    "This sign-in link was already used, has expired or was never issued; ask your instructor for a new "
    "one, or make one on a device where you are signed in (Sign in on another device)."
)


def account_label(account: AccountRecord) -> str:
    """How a page names an account: its name and external id, ``Ada Lovelace (s-1001)``.

    Examples
    --------
    >>> from datetime import datetime
    >>> ada = AccountRecord("x", None, "s-1001", "Ada Lovelace", None, datetime(2026, 1, 1), None)
    >>> account_label(ada)
    'Ada Lovelace (s-1001)'
    """
    if account.display_name:
        return f"{account.display_name} ({account.external_id})"
    return account.external_id


@router.get("/sign-in", response_class=HTMLResponse, name="learner_sign_in")
def sign_in_page(request: Request, services: AppServices, learner: Reader, token: str = "") -> Response:
    """The page a sign-in link opens; its script reads the token from the fragment and posts it.

    A link of the old form, with the token in the query, is sent on to the fragment form (the access
    log redacts the query: ``qkv.web.http.access_log``).
    """
    if token:
        return RedirectResponse(sign_in_url("", token[:200]), 303, headers=_NO_STORE)
    return _render(request, services, "account/sign_in.html", {}, learner)


async def _link_token(request: Request, what: str) -> str:
    if not same_origin(request):
        raise HTTPException(403, f"{what} is only accepted from qkv's own sign-in page.")
    return (await _form(request)).get("token", "")


@router.post(
    "/sign-in/check",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(token="The link's token."),
)
async def check_sign_in_link(request: Request, services: AppServices, learner: Reader) -> Response:
    """Name the account the link opens and what happens to this browser's work; the link stays unused."""
    token = await _link_token(request, "Checking a sign-in link")
    link: SignInLink | None = await run_in_threadpool(services.store.accounts.inspect_link, token)
    if link is None:
        raise HTTPException(401, _LINK_REFUSED)
    context = {"token": token, "link": link, "label": account_label(link.account)}
    return _render(request, services, "account/confirm_sign_in.html", context, learner)


@router.post(
    "/sign-in", response_class=HTMLResponse, openapi_extra=form_body_schema(token="The link's token.")
)
async def use_sign_in_link(request: Request, services: AppServices) -> Response:
    """Use up a one-time link, open a session, and (a personal link only) merge the anonymous work."""
    token = await _link_token(request, "Signing in")
    link: SignInLink | None = await run_in_threadpool(services.store.accounts.use_link, token)
    if link is None:
        raise HTTPException(401, _LINK_REFUSED)
    learner_id = link.account.learner_id
    response = HTMLResponse("")
    signed = await run_in_threadpool(sign_in, request, response, learner_id, merge=link.merges)
    page = _render(
        request,
        services,
        "account/signed_in.html",
        {"merged": signed.merged, "account": link.account, "link": link},
        RequestLearner(learner_id, from_cookie=True, signed_in=True),
    )
    for name, value in response.headers.items():
        if name == "set-cookie":
            page.headers.append(name, value)
    return page


@router.post(
    "/sign-out",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(csrf_token="The CSRF token of the page."),
)
async def sign_out_route(request: Request, services: AppServices) -> Response:
    """End this browser's session on every server (CSRF-checked) and start anew as an anonymous learner."""
    return await _end_sessions(request, services, everywhere=False)


@router.post(
    "/sign-out/everywhere",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(csrf_token="The CSRF token of the page."),
)
async def sign_out_everywhere_route(request: Request, services: AppServices) -> Response:
    """End every session of the signed-in learner, on every device and server (CSRF-checked)."""
    return await _end_sessions(request, services, everywhere=True)


async def _end_sessions(request: Request, services: AppServices, *, everywhere: bool) -> Response:
    """Sign out this browser, or every device of its learner, and send the browser home."""
    form = await _form(request)
    # An anonymous browser has no session to end, and its cookie is not cleared: a cross-site form (which
    # never carries the SameSite cookies) must not be able to throw away an anonymous learner's identity.
    if await run_in_threadpool(services.identity.signed_in_learner, request) is None:
        raise HTTPException(
            401,
            "This browser is not signed in (or its session has ended), so there is nothing to sign out of.",
        )
    services.identity.require_csrf(request, form.get(CSRF_FIELD, ""))
    response = RedirectResponse("/", status_code=303, headers=_NO_STORE)
    await run_in_threadpool(sign_out, request, response, everywhere=everywhere)
    return response


def _signed_in(learner: RequestLearner) -> None:
    if not learner.signed_in:
        raise HTTPException(
            401,
            "Only a signed-in learner can make a link for another device; sign in with your personal link "
            "first (from your instructor or your LMS).",
        )


@router.get("/account/devices", response_class=HTMLResponse, name="learner_devices")
def devices_page(request: Request, services: AppServices, learner: Reader) -> Response:
    """ "Sign in on another device": a button that makes a short-lived one-time link."""
    _signed_in(learner)
    context = {"lifetime_minutes": int(DEVICE_LINK_LIFETIME.total_seconds() // 60), "link": None}
    return _render(request, services, "account/devices.html", context, learner)


@router.post(
    "/account/devices",
    response_class=HTMLResponse,
    openapi_extra=form_body_schema(csrf_token="The CSRF token of the page."),
)
async def make_device_link(request: Request, services: AppServices) -> Response:
    """Make a one-time link for another device, shown with its QR code (CSRF-checked)."""
    form = await _form(request)
    learner = services.identity.require_csrf(request, form.get(CSRF_FIELD, ""))
    _signed_in(learner)
    token = await run_in_threadpool(services.store.accounts.new_device_token, learner.id)
    link = sign_in_url(request_base_url(request, services.settings), token)
    context = {
        "lifetime_minutes": int(DEVICE_LINK_LIFETIME.total_seconds() // 60),
        "link": link,
        "qr": qr_data_uri(link),
    }
    return _render(request, services, "account/devices.html", context, learner)
