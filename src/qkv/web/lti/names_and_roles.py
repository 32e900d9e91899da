"""Pulling a class's membership from the LMS (LTI NRPS), so the class list shows every enrolled learner."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from qkv.store.lti.links import ClassContext
from qkv.store.lti.platforms import LtiPlatforms
from qkv.web.lti.claims import MEMBERSHIP_SCOPE
from qkv.web.lti.service_tokens import ServiceTokens, ServiceUnavailable

MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_PAGES = 50
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


@dataclass(frozen=True)
class Member:
    """One active member of a class."""

    subject: str
    name: str | None
    email: str | None
    roles: tuple[str, ...]


def members_of(document: Any) -> list[Member]:
    """The active members in one NRPS membership page (others, and malformed entries, are skipped).

    Examples
    --------
    >>> ada = {"user_id": "u1", "name": "Ada", "roles": ["Learner"]}
    >>> members_of({"members": [ada, {"status": "Inactive", "user_id": "u2"}]})
    [Member(subject='u1', name='Ada', email=None, roles=('Learner',))]
    """
    found = []
    entries = document.get("members") if isinstance(document, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("status", "Active") != "Active":
            continue
        subject = entry.get("user_id")
        if not isinstance(subject, str) or not subject:
            continue
        roles: list[Any] = entry["roles"] if isinstance(entry.get("roles"), list) else []
        name = entry.get("name") if isinstance(entry.get("name"), str) else None
        email = entry.get("email") if isinstance(entry.get("email"), str) else None
        found.append(Member(subject, name, email, tuple(r for r in roles if isinstance(r, str))))
    return found


def pull_members(
    context: ClassContext, platforms: LtiPlatforms, tokens: ServiceTokens, client: httpx.Client
) -> list[Member]:
    """Every active member of a class, following the LMS's ``rel="next"`` pages.

    Parameters
    ----------
    context : ClassContext
        The class, with the memberships URL of its last launch.
    platforms : LtiPlatforms
        Where the class's LMS is registered (its token endpoint).
    tokens : ServiceTokens
        Service tokens.
    client : httpx.Client
        How the LMS is reached.

    Returns
    -------
    list of Member

    Raises
    ------
    ServiceUnavailable
        With a sentence, when the class has no membership URL or the LMS does not answer.
    """
    if not context.memberships_url:
        raise ServiceUnavailable(
            f"The class {context.title!r} was launched without the names-and-roles service; turn on "
            "'Share roster with the tool' (Moodle: 'IMS LTI Names and Role Provisioning') in the LMS and "
            "launch once more as an instructor."
        )
    platform = platforms.find(context.issuer, context.client_id)
    if platform is None:
        raise ServiceUnavailable(f"The platform {context.issuer!r} is no longer registered with qkv.")
    token = tokens.token(platform, (MEMBERSHIP_SCOPE,))
    url: str | None = context.memberships_url
    members: list[Member] = []
    for _ in range(MAX_PAGES):
        if url is None:
            break
        try:
            response = client.get(
                url, headers={"Authorization": f"Bearer {token}", "Accept": MEMBERSHIP_TYPE}, timeout=20.0
            )
        except httpx.HTTPError as error:
            raise ServiceUnavailable(
                f"The LMS at {url} could not be reached ({type(error).__name__})."
            ) from None
        if response.status_code != 200:
            raise ServiceUnavailable(
                f"The LMS at {url} answered {response.status_code}: {response.text[:200]!r}."
            )
        try:
            members += members_of(response.json())
        except ValueError:
            raise ServiceUnavailable(f"The LMS at {url} answered with something that is not JSON.") from None
        following = _NEXT_LINK.search(response.headers.get("link", ""))
        url = following.group(1) if following else None
    return members
