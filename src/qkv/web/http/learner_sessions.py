"""Signing a learner in and out: the one place that opens and ends a learner's database session.

Any way of proving who a learner is (a personal or device link, an LTI launch) ends in ``sign_in``:

1. unless told not to (a device link: whoever presses it need not be the account's owner), the browser's
   anonymous learner (its ``qkv_learner`` cookie, if the request carries one) is merged into the
   account: every answer and program moves, the better result of each exercise is kept
   (``qkv.store.learner.accounts_merge``);
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


def sign_in(request: Request, response: Response, learner_id: str, *, merge: bool = True) -> SignedIn:
    """Sign this browser in as ``learner_id`` (an account's learner id, from ``Accounts``).

    Parameters
    ----------
    request : fastapi.Request
        The request that proved who the learner is; its anonymous cookie (if any) names the work to merge.
    response : starlette.responses.Response
        The response that will reach the browser: it gets the ``Set-Cookie`` headers.
    learner_id : str
        The account's learner id (``Accounts.find_or_create``, ``Accounts.use_link``).
    merge : bool
        Bring the browser's anonymous work into the account: True for the person's own proof (their
        personal link, their LMS launch), False for a device link.

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
    merged = _merge_anonymous(services, request, learner_id) if merge else MergeReport(0, 0, 0, 0)
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


def sign_out(request: Request, response: Response, *, everywhere: bool = False) -> None:
    """End the request's session on every server and remove both learner cookies from the browser.

    Parameters
    ----------
    request : fastapi.Request
        The request of the signed-in browser (check its CSRF token first).
    response : starlette.responses.Response
        The response that will reach the browser.
    everywhere : bool
        End every session of the learner (each device they signed in on), not only this browser's; the
        sessions live in the database, so every server sharing it agrees at once.
    """
    services = get_services(request)
    session = services.identity.session_of(request)
    learner_id = services.identity.signed_in_learner(request) if everywhere else None
    if learner_id is not None:
        services.store.accounts.end_all_sessions(learner_id)
    elif session is not None:
        services.store.accounts.end_session(session)
    services.identity.clear_cookies(request, response)
    response.headers["cache-control"] = "no-store"
