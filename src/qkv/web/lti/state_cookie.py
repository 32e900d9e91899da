"""The cookie that binds a login's ``state`` to the browser that started it.

The LMS posts the launch to qkv from its own site, so the cookie must come back on a cross-site POST:
that needs ``SameSite=None; Secure``, which browsers keep only from HTTPS pages. On a local ``http://``
server (``make run``, the tests) such a cookie is dropped, so a second cookie is set beside it with
``SameSite=Lax``: it comes back when the LMS is on the same site (another port of the same host), and
never on a cross-site POST. The launch accepts either. A real LMS on another site therefore needs qkv
served over HTTPS (docs/lms.md). Each login has its own cookie name (from the state's hash), so launches
in several tabs at once do not overwrite each other; each lives 10 minutes and only under ``/lti/``.
"""

from __future__ import annotations

from collections.abc import Mapping

from qkv.store.lti.logins import LOGIN_LIFETIME, state_digest

PREFIX = "qkv_lti_"
PATH = "/lti/"


def cookie_names(state: str) -> tuple[str, str]:
    """The cross-site cookie's name and its same-site fallback's, for one state.

    Examples
    --------
    >>> cross, lax = cookie_names("abc")
    >>> cross.startswith("qkv_lti_"), lax == cross + "_lax"
    (True, True)
    """
    name = PREFIX + state_digest(state)[:24]
    return name, name + "_lax"


def set_headers(state: str, *, secure: bool) -> list[str]:
    """The two ``Set-Cookie`` values a login sets.

    Examples
    --------
    >>> [header.split("; ")[-1] for header in set_headers("abc", secure=False)]
    ['SameSite=None', 'SameSite=Lax']
    """
    cross, lax = cookie_names(state)
    age = int(LOGIN_LIFETIME.total_seconds())
    common = f"Path={PATH}; Max-Age={age}; HttpOnly"
    return [
        f"{cross}=1; {common}; Secure; SameSite=None",
        f"{lax}=1; {common}{'; Secure' if secure else ''}; SameSite=Lax",
    ]


def clear_headers(state: str) -> list[str]:
    """``Set-Cookie`` values that remove both cookies (the launch used them up)."""
    cross, lax = cookie_names(state)
    return [
        f"{cross}=; Path={PATH}; Max-Age=0; HttpOnly; Secure; SameSite=None",
        f"{lax}=; Path={PATH}; Max-Age=0; HttpOnly; SameSite=Lax",
    ]


def came_back(state: str, cookies: Mapping[str, str]) -> bool:
    """Whether this browser brought back one of the state's cookies.

    Examples
    --------
    >>> came_back("abc", {cookie_names("abc")[1]: "1"}), came_back("abc", {})
    (True, False)
    """
    return any(cookies.get(name) == "1" for name in cookie_names(state))
