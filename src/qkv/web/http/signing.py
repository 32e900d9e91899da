"""Signed cookies and the CSRF tokens bound to them: written once, for learners and instructors alike.

Each use of the server's key has a purpose (``"learner"``, ``"instructor"``): the purpose salts the cookie
signature and derives its own CSRF key, so a cookie or a token made for one purpose is worthless for
another, and servers that share the key accept each other's cookies.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from enum import StrEnum

from itsdangerous import BadSignature, URLSafeSerializer

__all__ = ["CookiePolicy", "CookieSigner", "SameSite"]


class SameSite(StrEnum):
    """The cookie's ``SameSite`` attribute."""

    LAX = "Lax"
    STRICT = "Strict"


@dataclass(frozen=True)
class CookiePolicy:
    """How one cookie is set: its name, lifetime, ``SameSite`` and whether it needs HTTPS."""

    name: str
    max_age_s: int
    same_site: SameSite
    secure: bool = False

    def set_header(self, value: str) -> str:
        """``Set-Cookie`` for ``value``: HttpOnly, whole site.

        Examples
        --------
        >>> CookiePolicy("c", 60, SameSite.STRICT).set_header("v")
        'c=v; Path=/; Max-Age=60; HttpOnly; SameSite=Strict'
        """
        parts = [f"{self.name}={value}", "Path=/", f"Max-Age={self.max_age_s}", "HttpOnly"]
        parts.append(f"SameSite={self.same_site}")
        return "; ".join([*parts, "Secure"] if self.secure else parts)

    def clear_header(self) -> str:
        """``Set-Cookie`` that removes the cookie.

        Examples
        --------
        >>> CookiePolicy("c", 60, SameSite.LAX).clear_header()
        'c=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax'
        """
        return f"{self.name}=; Path=/; Max-Age=0; HttpOnly; SameSite={self.same_site}"


class CookieSigner:
    """Signs values into cookies and derives the CSRF token of each value, for one purpose.

    Parameters
    ----------
    secret_key : str
        The server's key (shared by every server of one database).
    purpose : str
        What the cookies are for; a cookie or token of one purpose fails for every other.

    Examples
    --------
    >>> learners = CookieSigner("k" * 32, "learner")
    >>> cookie = learners.sign("ada")
    >>> learners.unsign(cookie), learners.unsign(cookie[:-1] + "x")
    ('ada', None)
    >>> CookieSigner("k" * 32, "instructor").unsign(cookie) is None  # another purpose
    True
    >>> learners.csrf_matches(learners.csrf_token("ada"), "ada"), learners.csrf_matches("forged", "ada")
    (True, False)
    """

    def __init__(self, secret_key: str, purpose: str) -> None:
        self._serializer = URLSafeSerializer(secret_key, salt=f"qkv.{purpose}")
        # The learner's CSRF key was derived before purposes had names; keeping it keeps pages open across
        # an upgrade valid.
        label = b"qkv.csrf" if purpose == "learner" else f"qkv.{purpose}.csrf".encode()
        self._csrf_key = hashlib.sha256(label + b"\x00" + secret_key.encode()).digest()

    def sign(self, value: str) -> str:
        """The cookie value that carries ``value``."""
        return str(self._serializer.dumps(value))

    def unsign(self, cookie: str | None) -> str | None:
        """The string in a genuine cookie, or None for a missing, forged, tampered or non-string one."""
        if not cookie:
            return None
        try:
            value = self._serializer.loads(cookie)
        except BadSignature:
            return None
        return value if isinstance(value, str) else None

    def csrf_token(self, value: str) -> str:
        """The token a page gives the browser that holds ``value``; it works for no other value."""
        return hmac.new(self._csrf_key, value.encode(), hashlib.sha256).hexdigest()

    def csrf_matches(self, given: str, value: str) -> bool:
        """Whether ``given`` is ``value``'s token, compared in constant time."""
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.csrf_token(value).encode())
