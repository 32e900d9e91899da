"""Launching inside an LMS's iframe, where the browser keeps no cookie of qkv's (third-party cookies off).

The login binds its ``state`` to the browser that started it. Normally a cookie does that
(``state_cookie``); in a third-party frame the browser drops it. A platform that offers the LTI
client-side postMessage storage says so with ``lti_storage_target`` in the login request (the frame
that answers ``lti.put_data`` / ``lti.get_data``: ``_parent`` or a named frame of the parent). Then

1. the login page (qkv's, in the frame) stores ``state_<state>`` in the platform's storage by
   ``postMessage`` to the platform's OIDC origin only, before it goes on to the platform; when the
   platform does not answer, the page says so in a sentence and offers to open qkv in a new window,
   where qkv's cookies are first-party;
2. the launch, arriving without the cookie, answers with a page that reads ``state_<state>`` back from
   the platform's storage (a reply is taken only from the platform's origin) and posts it to
   ``/lti/launch`` again, from qkv's own page: qkv takes that proof only on a same-origin POST (its
   ``Origin`` header), so another site cannot post it into someone's browser, and only the browser that
   started the login holds the value in the platform's storage.

The storage target rides in the state itself (``STATE.TARGET``), so the launch knows the login asked for
it without a cookie or a new column.
"""

from __future__ import annotations

import re
from html import escape

from fastapi import Request
from starlette.responses import HTMLResponse

from qkv.web.lti.refusal import LaunchRefused

_TARGET = re.compile(r"[A-Za-z0-9_\-]{1,64}")
SEPARATOR = "."  # never part of a URL-safe base64 state
_NO_STORE = {"Cache-Control": "no-store"}


def storage_target(value: str | None) -> str | None:
    """A platform's ``lti_storage_target`` when it is a plain frame name, else None.

    Examples
    --------
    >>> storage_target("_parent"), storage_target("post_message_forwarding"), storage_target("x'><")
    ('_parent', 'post_message_forwarding', None)
    """
    return value if value and _TARGET.fullmatch(value) else None


def with_target(state: str, target: str | None) -> str:
    """The state as sent to the platform: with the storage target when the login asked for it.

    Examples
    --------
    >>> with_target("abc", "_parent"), with_target("abc", None)
    ('abc._parent', 'abc')
    """
    return f"{state}{SEPARATOR}{target}" if target else state


def split_state(state: str) -> tuple[str, str | None]:
    """The stored state and the storage target of a state as the platform sent it back.

    Examples
    --------
    >>> split_state("abc._parent"), split_state("abc")
    (('abc', '_parent'), ('abc', None))
    """
    base, _, target = state.partition(SEPARATOR)
    return base, storage_target(target)


def _page(title: str, body: str) -> HTMLResponse:
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark"><link rel="stylesheet" href="/static/lesson.css">'
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml"></head>'
        f'<body><main id="main">{body}</main>'
        '<script type="module" src="/static/lti-storage.js"></script></body></html>'
    )
    return HTMLResponse(html, headers=_NO_STORE)


def _fallback(new_window_url: str) -> str:
    link = escape(new_window_url, quote=True)
    return (
        '<div id="lti-storage-fallback" hidden><p role="alert">Your browser keeps qkv from remembering this '
        "sign-in inside the LMS page (it blocks qkv's cookies there, and the LMS did not keep it either). "
        f'Open qkv in a new window to go on.</p><p><a href="{link}" target="_blank" rel="opener">'
        "Open qkv in a new window</a></p></div>"
    )


def login_page(
    auth_url: str, platform_origin: str, target: str, state: str, new_window_url: str
) -> HTMLResponse:
    """The login page that stores the state in the platform's storage, then goes on to ``auth_url``."""
    data = (
        f'data-mode="put" data-target="{escape(target)}" data-origin="{escape(platform_origin)}" '
        f'data-key="state_{escape(state)}" data-value="{escape(state)}" '
        f'data-next="{escape(auth_url, quote=True)}"'
    )
    body = (
        f'<p id="lti-storage" {data}>Signing you in through your LMS.</p>'
        f'<noscript><p><a href="{escape(auth_url, quote=True)}">Continue</a>.</p></noscript>'
        + _fallback(new_window_url)
    )
    return _page("qkv: signing in", body)


def launch_page(platform_origin: str, target: str, state: str, id_token: str) -> HTMLResponse:
    """The launch's first answer without a cookie: read the state back from the platform, post it here."""
    data = (
        f'data-mode="get" data-target="{escape(target)}" data-origin="{escape(platform_origin)}" '
        f'data-key="state_{escape(state)}"'
    )
    fields = "".join(
        f'<input type="hidden" name="{name}" value="{escape(value, quote=True)}">'
        for name, value in (("id_token", id_token), ("state", state), ("storage_value", ""))
    )
    body = (
        f'<p id="lti-storage" {data}>Checking this sign-in with your LMS.</p>'
        f'<form method="post" action="/lti/launch" id="lti-storage-launch">{fields}</form>'
        '<div id="lti-storage-fallback" hidden><p role="alert">The LMS did not confirm that this browser '
        "started the sign-in, so qkv cannot go on inside the LMS page. Open the activity again; if this "
        "repeats, open qkv in a new window from the LMS.</p></div>"
    )
    return _page("qkv: signing in", body)


def check_proof(state: str, value: str, request: Request, origin: str) -> None:
    """Accept a state read back from the platform's storage only from qkv's own page in this browser.

    Raises
    ------
    LaunchRefused
        401 when the value is not the state, or the POST did not come from a page of this server.
    """
    sent_from = request.headers.get("origin", "")
    fetch_site = request.headers.get("sec-fetch-site", "same-origin")
    if sent_from.lower() != origin.lower() or fetch_site != "same-origin":
        raise LaunchRefused(
            401,
            "The sign-in's proof from the LMS's storage must be posted by qkv's own page in the browser "
            f"that started the login (this one came from {sent_from or 'nowhere'!r}); launch again.",
        )
    if value != state:
        raise LaunchRefused(
            401,
            "The LMS's storage does not hold this sign-in's state, so this browser did not start it; "
            "launch again from the LMS.",
        )


__all__ = ["check_proof", "launch_page", "login_page", "split_state", "storage_target", "with_target"]
