"""Who may see the class: the instructor's signed session cookie, its CSRF token and the access checks.

An instructor signs in with a one-time link from ``qkv instructor add`` (or ``link``) and gets their
own cookie, ``qkv_instructor``, separate from the learner cookie: a signed, HttpOnly, SameSite=Strict
session id whose session row lives in the database (so every server sharing it accepts the cookie,
and signing out ends it everywhere). The learner cookie never opens an instructor page: a browser
with only a learner cookie gets 403, one with no cookie or a forged, ended or expired instructor
cookie gets 401.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import HTTPException, Request

from qkv.store.instructor.instructors import SESSION_LIFETIME, InstructorDesk, InstructorRecord
from qkv.web.http.security import COOKIE_NAME as LEARNER_COOKIE
from qkv.web.http.security import CSRF_HEADER
from qkv.web.http.signing import CookiePolicy, CookieSigner, SameSite

INSTRUCTOR_COOKIE = "qkv_instructor"
CSRF_FIELD = "csrf_token"


@dataclass(frozen=True)
class SignedInInstructor:
    """The instructor behind a request, with the session id their cookie carries."""

    instructor: InstructorRecord
    session: str


class InstructorAuth:
    """Signs instructor cookies, checks them against the database's sessions, derives CSRF tokens.

    Parameters
    ----------
    secret_key : str
        The key the servers share (the same one that signs learner cookies, under another salt).
    desk : InstructorDesk
        The instructors' accounts and sessions in the database.
    secure : bool
        Add the ``Secure`` flag (HTTPS only).

    Examples
    --------
    >>> from qkv.store import Store
    >>> auth = InstructorAuth("k" * 32, Store("sqlite://").instructors)
    >>> auth.unsign(auth.sign("abc"))
    'abc'
    >>> auth.unsign(auth.sign("abc")[:-1] + "x") is None
    True
    """

    def __init__(self, secret_key: str, desk: InstructorDesk, *, secure: bool = False) -> None:
        self._signer = CookieSigner(secret_key, "instructor")
        self._cookie = CookiePolicy(
            INSTRUCTOR_COOKIE, int(SESSION_LIFETIME.total_seconds()), SameSite.STRICT, secure
        )
        self.desk = desk
        self.secure = secure

    def sign(self, session: str) -> str:
        """The cookie value for a session id."""
        return self._signer.sign(session)

    def unsign(self, cookie: str | None) -> str | None:
        """The session id in a genuine cookie, or None for a missing, forged or tampered one."""
        value = self._signer.unsign(cookie)
        return value if value is not None and 0 < len(value) <= 200 else None

    def csrf_token(self, session: str) -> str:
        """The token instructor pages embed; it works for no other session (nor for any learner)."""
        return self._signer.csrf_token(session)

    def cookie_header(self, session: str) -> str:
        """``Set-Cookie`` for a new session: HttpOnly, SameSite=Strict, as long as the session lives."""
        return self._cookie.set_header(self.sign(session))

    def clear_cookie_header(self) -> str:
        """``Set-Cookie`` that removes the instructor cookie."""
        return self._cookie.clear_header()

    def require(self, request: Request) -> SignedInInstructor:
        """The signed-in instructor, or 401 (no or bad instructor cookie) / 403 (a learner's browser)."""
        raw = request.cookies.get(INSTRUCTOR_COOKIE)
        if not raw:
            if request.cookies.get(LEARNER_COOKIE):
                raise HTTPException(
                    403,
                    "This browser is signed in as a learner, and learners cannot open the instructor's "
                    "view; an instructor signs in with the link that 'qkv instructor add' prints.",
                )
            raise HTTPException(
                401,
                "The instructor's view needs an instructor's sign-in; open the link that "
                "'qkv instructor add' (or 'qkv instructor link') printed.",
            )
        session = self.unsign(raw)
        if session is None:
            raise HTTPException(
                401, "The instructor cookie is not genuine; sign in again with a new instructor link."
            )
        instructor = self.desk.instructor_for_session(session)
        if instructor is None:
            raise HTTPException(
                401,
                "This instructor session has ended (signed out, expired or removed); "
                "sign in again with a new link from 'qkv instructor link'.",
            )
        return SignedInInstructor(instructor, session)

    def check_csrf(self, request: Request, signed_in: SignedInInstructor, form_token: str = "") -> None:
        """403 unless the request carries this session's CSRF token (header or form field)."""
        given = request.headers.get(CSRF_HEADER, "") or form_token
        if not given:
            raise HTTPException(
                403,
                f"This request has no {CSRF_HEADER} header or {CSRF_FIELD} field; state-changing "
                "instructor requests must send the token of the instructor page.",
            )
        if not self._signer.csrf_matches(given, signed_in.session):
            raise HTTPException(
                403, "The CSRF token does not match this instructor session; reload the page and try again."
            )


def same_origin(request: Request) -> bool:
    """False when the browser says the request came from another site (``Sec-Fetch-Site`` or ``Origin``).

    The sign-in form uses this against login CSRF: another site cannot sign a teacher's browser in
    as someone else.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None:  # every current browser sends it; it survives reverse proxies that rewrite Host
        return site in {"same-origin", "none"}
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.split("://", 1)[-1] == request.headers.get("host", "")
