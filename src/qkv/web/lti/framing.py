"""Who may frame qkv's LTI pages: a registered platform's origin, and only on the pages that need it.

Every page of qkv answers ``frame-ancestors 'none'`` (``qkv.web.http.security``). Moodle and Canvas show deep
linking and registration inside an iframe of their own page, and many courses embed launches, so the LTI
pages a platform opens (the login, the launch, the picker and its answer, the registration) answer with a
Content-Security-Policy whose ``frame-ancestors`` names that platform's origins: those of its issuer and
of its OIDC auth URL (an LMS may serve its pages from another host than its issuer). The origins are read
from the stored platforms for each request, so a platform removed with ``qkv lti remove`` can frame
nothing from then on. ``X-Frame-Options`` cannot name an origin, so the security headers leave it out of
a response whose own policy lets a frame in (the CSP supersedes it in every browser that frames).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.responses import Response

from qkv.store.lti.platforms import PlatformRecord
from qkv.web.http.security import CONTENT_SECURITY_POLICY


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, lower-cased; None for anything else.

    Examples
    --------
    >>> origin("https://Moodle.School.example/mod/lti/auth.php?x=1")
    'https://moodle.school.example'
    >>> origin("javascript:alert(1)") is None, origin("http://[::1") is None
    (True, True)
    """
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:  # e.g. "http://[::1": not a URL
        return None
    if parts.scheme not in {"http", "https"} or not hostname:
        return None
    if any(char in parts.netloc for char in " ;,'\"*"):
        return None  # never let a stored URL widen or break the policy
    host = parts.netloc.rsplit("@", 1)[-1].lower()
    return f"{parts.scheme}://{host}"


def platform_origins(platforms: Iterable[PlatformRecord]) -> list[str]:
    """The origins a platform's pages are served from: its issuer's and its auth URL's, each once.

    Examples
    --------
    >>> from datetime import datetime
    >>> p = PlatformRecord("https://lms.example", "c", ("d",), "https://sso.lms.example/auth",
    ...                    "https://lms.example/token", "https://lms.example/jwks", datetime(2026, 1, 1))
    >>> platform_origins([p])
    ['https://lms.example', 'https://sso.lms.example']
    """
    found: list[str] = []
    for platform in platforms:
        for url in (platform.issuer, platform.auth_url):
            at = origin(url)
            if at and at not in found:
                found.append(at)
    return found


def policy(frame_ancestors: Iterable[str], form_targets: Iterable[str] = ()) -> str:
    """qkv's Content-Security-Policy with ``frame-ancestors`` naming these origins (``'none'`` when there
    are none) and ``form-action`` also allowing ``form_targets`` (an LMS's return URL).

    Examples
    --------
    >>> "frame-ancestors https://lms.example;" in policy(["https://lms.example"]) + ";"
    True
    >>> policy([]).endswith("frame-ancestors 'none'")
    True
    >>> "form-action 'self' https://lms.example;" in policy([], ["https://lms.example"])
    True
    """
    ancestors = " ".join(dict.fromkeys(frame_ancestors)) or "'none'"
    targets = " ".join(dict.fromkeys(form_targets))
    text = CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", f"frame-ancestors {ancestors}")
    if targets:
        text = text.replace("form-action 'self'", f"form-action 'self' {targets}")
    return text


def allow_framing(
    response: Response, platforms: Iterable[PlatformRecord], form_targets: Iterable[str] = ()
) -> Response:
    """Let these platforms (only) frame ``response``; ``form_targets`` may receive its forms."""
    targets = [at for at in (origin(url) for url in form_targets) if at]
    response.headers["content-security-policy"] = policy(platform_origins(platforms), targets)
    return response


__all__ = ["allow_framing", "origin", "platform_origins", "policy"]
