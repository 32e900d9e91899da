"""Who is asking, and may they: the signed learner cookie, CSRF tokens and the security headers.

A learner is an id in a signed, HttpOnly, SameSite=Lax cookie; the API never takes a learner id
from anywhere else, so nobody can name another learner's id. State-changing requests must also
carry ``X-CSRF-Token``: an HMAC of the learner id that only pages served to that browser contain.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qkv.web.identity_limits import MintLimit, TooManyIdentities
from qkv.web.signing import CookiePolicy, CookieSigner, SameSite

COOKIE_NAME = "qkv_learner"
CSRF_HEADER = "X-CSRF-Token"
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
    """The learner behind a request. ``from_cookie`` is False for a browser seen for the first time."""

    id: str
    from_cookie: bool


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
    ) -> None:
        self._signer = CookieSigner(secret_key, "learner")
        self._cookie = CookiePolicy(COOKIE_NAME, COOKIE_MAX_AGE_S, SameSite.LAX, secure)
        self.secure = secure
        self.mint_limit = mint_limit
        self.has_saved_work = has_saved_work

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

    def learner(self, request: Request) -> RequestLearner:
        """The request's learner; a new one (with a cookie to set) if the cookie is absent or not genuine."""
        known = self.unsign(request.cookies.get(COOKIE_NAME))
        if known is not None:
            return RequestLearner(known, from_cookie=True)
        # Free: nothing is stored for it, and it is counted against its address only when it first saves.
        fresh = RequestLearner(str(uuid.uuid4()), from_cookie=False)
        request.state.qkv_set_cookie = self.cookie_header(fresh.id)
        return fresh

    def cookie_header(self, learner_id: str) -> bytes:
        """A ``Set-Cookie`` value: HttpOnly, SameSite=Lax, whole site, about a year."""
        return self._cookie.set_header(self.sign(learner_id)).encode("latin-1")

    def require_csrf(self, request: Request) -> RequestLearner:
        """The learner of a state-changing request, after checking its cookie and CSRF token.

        Raises
        ------
        fastapi.HTTPException
            403 with a sentence when the cookie or the token is missing or wrong; 429 when this is a new
            learner's first write and their address has started as many new learners as it may.
        """
        learner_id = self.unsign(request.cookies.get(COOKIE_NAME))
        if learner_id is None:
            raise HTTPException(
                403,
                "This request carries no valid learner cookie, so it cannot change any progress; "
                "open the lesson page to get one, then try again.",
            )
        given = request.headers.get(CSRF_HEADER, "")
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
        address = request.client.host if request.client else ""  # behind a trusted proxy: the forwarded one
        try:
            limit.take(address, learner_id)
        except TooManyIdentities as refused:
            raise HTTPException(
                429, str(refused), headers={"Retry-After": str(refused.retry_after_s)}
            ) from None


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
                headers.extend(item for item in SECURITY_HEADERS if item[0] not in present)
                cookie = scope.get("state", {}).get("qkv_set_cookie")
                if cookie:
                    headers.append((b"set-cookie", cookie))
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
