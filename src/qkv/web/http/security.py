"""Who is asking, and may they: the learner's cookies, CSRF tokens and the security headers.

A learner is either signed in or anonymous. A signed-in learner's browser holds ``qkv_session``: a
signed, HttpOnly, SameSite=Lax cookie carrying a session id whose (hashed) row lives in the database,
so every server sharing it accepts the session and signing out ends it everywhere; its learner is the
account's learner id. Otherwise the learner is the id in the anonymous cookie ``qkv_learner`` (signed,
HttpOnly, SameSite=Lax), minted on the first visit. The API never takes a learner id from anywhere
else, so nobody can name another learner's id. State-changing requests must also carry
``X-CSRF-Token`` (or, for an HTML form, a ``csrf_token`` field): an HMAC of the learner id that only
pages served to that browser contain.

Both cookies are SameSite=Lax, not Strict, on purpose: a sign-in that arrives as a cross-site
top-level navigation (an LTI launch is a form POST from the LMS) can set ``qkv_session`` on its
response, and the redirect that follows (a top-level GET) carries it. A cross-site POST itself never
carries them, so no other site can act as the learner.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import HTTPException, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qkv.web.http.clients import request_client_key
from qkv.web.http.identity_limits import MintLimit, TooManyIdentities
from qkv.web.http.signing import CookiePolicy, CookieSigner, SameSite

COOKIE_NAME = "qkv_learner"
SESSION_COOKIE = "qkv_session"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
COOKIE_MAX_AGE_S = 400 * 24 * 3600  # the longest lifetime browsers accept

# No inline scripts or styles from markup; the lesson's JS and CSS are files under /static.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


@dataclass(frozen=True)
class RequestLearner:
    """The learner behind a request. ``from_cookie`` is False for a browser seen for the first time;
    ``signed_in`` is True when a live database session (``qkv_session``) named the learner."""

    id: str
    from_cookie: bool
    signed_in: bool = False


class LearnerIdentity:
    """Signs and checks learner cookies and derives each learner's CSRF token.

    Parameters
    ----------
    secret_key : str
        The signing key; servers sharing a database must share it.
    secure : bool
        Add the ``Secure`` flag (HTTPS only).
    mint_limit : MintLimit, optional
        Bounds the new learners per client address; a learner is counted at their first write, not
        when their cookie is minted, so reading pages never uses the bound up.
    has_saved_work : callable, optional
        ``learner_id -> bool``: whether the store holds work of this learner already (saved before a
        restart, or on another server), so their writes are not counted as a new learner's.
    session_learner : callable, optional
        ``session id -> learner id or None``: the learner of a live database session (the store's
        ``Accounts.learner_for_session``). Without it nobody is ever signed in.
    session_max_age_s : int
        The session cookie's lifetime (the session row's own expiry is what counts).
    require_sign_in : bool
        Refuse writes of anonymous learners (``qkv serve --require-sign-in``).

    Examples
    --------
    >>> identity = LearnerIdentity("k" * 32)
    >>> cookie = identity.sign("1b4e28ba-2fa1-11d2-883f-0016d3cca427")
    >>> identity.unsign(cookie)
    '1b4e28ba-2fa1-11d2-883f-0016d3cca427'
    >>> identity.unsign(cookie[:-1] + "x") is None
    True
    """

    def __init__(
        self,
        secret_key: str,
        *,
        secure: bool = False,
        mint_limit: MintLimit | None = None,
        has_saved_work: Callable[[str], bool] | None = None,
        session_learner: Callable[[str], str | None] | None = None,
        session_max_age_s: int = 30 * 24 * 3600,
        require_sign_in: bool = False,
    ) -> None:
        self._signer = CookieSigner(secret_key, "learner")
        self._cookie = CookiePolicy(COOKIE_NAME, COOKIE_MAX_AGE_S, SameSite.LAX, secure)
        self._session_signer = CookieSigner(secret_key, "learner-session")
        self._session_cookie = CookiePolicy(SESSION_COOKIE, session_max_age_s, SameSite.LAX, secure)
        self.secure = secure
        self.mint_limit = mint_limit
        self.has_saved_work = has_saved_work
        self.session_learner = session_learner
        self.require_sign_in = require_sign_in

    def sign(self, learner_id: str) -> str:
        """The cookie value for ``learner_id``."""
        return self._signer.sign(learner_id)

    def unsign(self, cookie: str | None) -> str | None:
        """The learner id in a genuine cookie, or None for a missing, forged or tampered one."""
        value = self._signer.unsign(cookie)
        if value is None:
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError:
            return None

    def csrf_token(self, learner_id: str) -> str:
        """The token pages give this learner's browser; it works for no other learner."""
        return self._signer.csrf_token(learner_id)

    # -- sessions of signed-in learners -----------------------------------------------------------

    def session_of(self, request: Request) -> str | None:
        """The session id in the request's genuine ``qkv_session`` cookie (live or not), or None."""
        value = self._session_signer.unsign(request.cookies.get(SESSION_COOKIE))
        return value if value is not None and 0 < len(value) <= 200 else None

    def signed_in_learner(self, request: Request) -> str | None:
        """The learner of the request's live session, or None; looked up once per request."""
        cached: tuple[str | None] | None = getattr(request.state, "qkv_session_learner", None)
        if cached is not None:
            return cached[0]
        session = self.session_of(request)
        found = self.session_learner(session) if session and self.session_learner else None
        request.state.qkv_session_learner = (found,)
        return found

    def anonymous_learner(self, request: Request) -> str | None:
        """The learner id in the request's genuine anonymous cookie, or None."""
        return self.unsign(request.cookies.get(COOKIE_NAME))

    def session_cookie_header(self, session: str) -> str:
        """``Set-Cookie`` for a new session: HttpOnly, SameSite=Lax (see the module's note), whole site."""
        return self._session_cookie.set_header(self._session_signer.sign(session))

    def clear_session_cookie_header(self) -> str:
        """``Set-Cookie`` that removes the session cookie."""
        return self._session_cookie.clear_header()

    def clear_learner_cookie_header(self) -> str:
        """``Set-Cookie`` that removes the anonymous learner cookie (the next page mints a fresh one)."""
        return self._cookie.clear_header()

    def clear_cookies(self, request: Request, response: Response) -> None:
        """Remove both learner cookies from the browser through ``response`` (and set no new one for
        ``request``): the next page starts a new anonymous learner."""
        response.headers.append("set-cookie", self.clear_session_cookie_header())
        response.headers.append("set-cookie", self.clear_learner_cookie_header())
        request.state.qkv_set_cookie = None

    # -- the request's learner ----------------------------------------------------------------------

    def learner(self, request: Request) -> RequestLearner:
        """The request's learner: the signed-in one, else the anonymous one; a new anonymous learner
        (with a cookie to set) if neither cookie is genuine."""
        account = self.signed_in_learner(request)
        if account is not None:
            found = RequestLearner(account, from_cookie=True, signed_in=True)
        elif (known := self.unsign(request.cookies.get(COOKIE_NAME))) is not None:
            found = RequestLearner(known, from_cookie=True)
        else:
            # Free: nothing is stored for it, and it is counted against its address only when it first saves.
            found = RequestLearner(str(uuid.uuid4()), from_cookie=False)
            request.state.qkv_set_cookie = self.cookie_header(found.id)
        request.state.qkv_learner_id = found.id  # for the request log, which writes it hashed
        return found

    def cookie_header(self, learner_id: str) -> bytes:
        """A ``Set-Cookie`` value: HttpOnly, SameSite=Lax, whole site, about a year."""
        return self._cookie.set_header(self.sign(learner_id)).encode("latin-1")

    def require_csrf(self, request: Request, form_token: str = "") -> RequestLearner:
        """The learner of a state-changing request, after checking its cookie and CSRF token.

        Parameters
        ----------
        request : fastapi.Request
            The request; its ``X-CSRF-Token`` header carries the token.
        form_token : str
            For an HTML form: its ``csrf_token`` field, used when there is no header.

        Raises
        ------
        fastapi.HTTPException
            403 with a sentence when the cookie or the token is missing or wrong; 401 when the server
            requires sign-in and the learner is anonymous; 429 when this is a new anonymous learner's
            first write and their address has started as many new learners as it may.
        """
        account = self.signed_in_learner(request)
        learner_id = account or self.unsign(request.cookies.get(COOKIE_NAME))
        if learner_id is None:
            raise HTTPException(
                403,
                "This request carries no valid learner cookie, so it cannot change any progress; "
                "open the lesson page to get one, then try again.",
            )
        given = request.headers.get(CSRF_HEADER, "") or form_token
        if not given:
            raise HTTPException(
                403,
                f"This request has no {CSRF_HEADER} header; state-changing requests must send the token "
                "from the page's csrf-token meta tag.",
            )
        if not self._signer.csrf_matches(given, learner_id):
            raise HTTPException(
                403,
                f"The {CSRF_HEADER} header does not match this browser's learner; "
                "reload the page and try again.",
            )
        if account is not None:
            return RequestLearner(account, from_cookie=True, signed_in=True)  # accounts are not minted here
        if self.require_sign_in:
            raise HTTPException(
                401,
                "This server asks learners to sign in before their work is saved; open your personal "
                "sign-in link (from your instructor or your LMS), then try again.",
            )
        self._count_new_learner(request, learner_id)
        return RequestLearner(learner_id, from_cookie=True)

    def _count_new_learner(self, request: Request, learner_id: str) -> None:
        """Count a learner against their address's bound at their first write (once; see ``MintLimit``)."""
        limit = self.mint_limit
        if limit is None or limit.counted(learner_id):
            return
        if self.has_saved_work is not None and self.has_saved_work(learner_id):
            limit.remember(learner_id)  # work saved before a restart, or on another server: not new
            return
        address = request_client_key(request)  # an IPv6 client by its prefix, as every per-address bound
        try:
            limit.take(address, learner_id)
        except TooManyIdentities as refused:
            raise HTTPException(
                429, str(refused), headers={"Retry-After": str(refused.retry_after_s)}
            ) from None


def _lets_a_frame_in(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a response set its own Content-Security-Policy that lets some origin frame it (the LTI
    pages a registered LMS shows in its iframe, ``qkv.web.lti.framing``)."""
    return any(
        name.lower() == b"content-security-policy" and b"frame-ancestors 'none'" not in value
        for name, value in headers
    )


class SecurityHeadersMiddleware:
    """Adds the security headers to every response, and the learner cookie when one was issued."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                if _lets_a_frame_in(headers):
                    present.add(b"x-frame-options")  # it cannot name an origin; the CSP says who may frame
                headers.extend(item for item in SECURITY_HEADERS if item[0] not in present)
                cookie = scope.get("state", {}).get("qkv_set_cookie")
                if cookie:
                    headers.append((b"set-cookie", cookie))
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
