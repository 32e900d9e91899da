"""Signing a learner in and out: the one place that opens and ends a learner's database session.

Any way of proving who a learner is (a roster or device link, an LTI launch) ends in ``sign_in``:

1. the browser's anonymous learner (its ``qkv_learner`` cookie, if the request carries one) is merged
   into the account: every answer and program moves, the better result of each exercise is kept
   (``qkv.store.accounts_merge``);
2. the browser's old session, if any, is ended and a fresh one opened (rotation: a session id seen
   before sign-in is never the signed-in one);
3. the response gets ``qkv_session`` (HttpOnly, SameSite=Lax, Secure under ``--secure-cookies``) and
   loses ``qkv_learner``, so that after signing out the browser starts as a new anonymous learner.

``sign_in`` is synchronous (it writes to the database): call it from a ``def`` route, or with
``await run_in_threadpool(sign_in, request, response, learner_id)`` from an ``async def`` one.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from starlette.responses import Response

from qkv.store import MergeReport
from qkv.web.services import Services, get_services

__all__ = ["SignedIn", "sign_in", "sign_out"]


@dataclass(frozen=True)
class SignedIn:
    """What ``sign_in`` did: the account's learner id, the new session id, and the anonymous work merged."""

    learner_id: str
    session: str
    merged: MergeReport


def sign_in(request: Request, response: Response, learner_id: str) -> SignedIn:
    """Sign this browser in as ``learner_id`` (an account's learner id, from ``Accounts``).

    Parameters
    ----------
    request : fastapi.Request
        The request that proved who the learner is; its anonymous cookie (if any) names the work to merge.
    response : starlette.responses.Response
        The response that will reach the browser: it gets the ``Set-Cookie`` headers.
    learner_id : str
        The account's learner id (``Accounts.find_or_create``, ``Accounts.redeem``).

    Returns
    -------
    SignedIn
        The learner id, the new session and what was merged (``merged.nothing`` when nothing was).

    Raises
    ------
    qkv.store.StoreError
        If the database cannot be written.
    """
    services = get_services(request)
    identity, accounts = services.identity, services.store.accounts
    merged = _merge_anonymous(services, request, learner_id)
    previous = identity.session_of(request)
    if previous is not None:
        accounts.end_session(previous)  # rotation: the old session id stops working everywhere
    session = accounts.open_session(learner_id)
    response.headers.append("set-cookie", identity.session_cookie_header(session))
    response.headers.append("set-cookie", identity.clear_learner_cookie_header())
    response.headers["cache-control"] = "no-store"
    request.state.qkv_set_cookie = None  # this response must not mint an anonymous learner as well
    request.state.qkv_session_learner = (learner_id,)
    return SignedIn(learner_id, session, merged)


def _merge_anonymous(services: Services, request: Request, learner_id: str) -> MergeReport:
    """Merge the request's anonymous learner into the account, unless it is an account itself."""
    anonymous = services.identity.anonymous_learner(request)
    if anonymous is None or anonymous == learner_id or services.store.accounts.get(anonymous) is not None:
        return MergeReport(0, 0, 0, 0)
    return services.store.accounts.merge(anonymous, into=learner_id)


def sign_out(request: Request, response: Response) -> None:
    """End the request's session on every server and remove both learner cookies from the browser.

    Parameters
    ----------
    request : fastapi.Request
        The request of the signed-in browser (check its CSRF token first).
    response : starlette.responses.Response
        The response that will reach the browser.
    """
    services = get_services(request)
    session = services.identity.session_of(request)
    if session is not None:
        services.store.accounts.end_session(session)
    response.headers.append("set-cookie", services.identity.clear_session_cookie_header())
    response.headers.append("set-cookie", services.identity.clear_learner_cookie_header())
    response.headers["cache-control"] = "no-store"
    request.state.qkv_set_cookie = None
