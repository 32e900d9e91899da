"""The LTI 1.3 claims qkv reads from a launch's id token, by their URIs, and the launch they describe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
MESSAGE_TYPE = LTI + "message_type"
VERSION = LTI + "version"
DEPLOYMENT_ID = LTI + "deployment_id"
TARGET_LINK_URI = LTI + "target_link_uri"
ROLES = LTI + "roles"
CONTEXT = LTI + "context"
RESOURCE_LINK = LTI + "resource_link"
AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"

RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest"
LTI_VERSION = "1.3.0"
INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


@dataclass(frozen=True)
class Launch:
    """A checked launch: who, from which platform, to where, and the services it offers."""

    issuer: str
    client_id: str
    deployment_id: str
    subject: str
    name: str | None
    email: str | None
    roles: tuple[str, ...]
    target_link_uri: str
    context_id: str | None
    context_title: str | None
    lineitem_url: str | None
    memberships_url: str | None

    @property
    def is_instructor(self) -> bool:
        """Whether the launch carries the LIS membership role Instructor.

        Examples
        --------
        >>> launch_from_claims({"sub": "1", ROLES: [INSTRUCTOR_ROLE]}, "i", "c", "d").is_instructor
        True
        """
        return INSTRUCTOR_ROLE in self.roles


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def launch_from_claims(claims: dict[str, Any], issuer: str, client_id: str, deployment_id: str) -> Launch:
    """The launch that verified ``claims`` describe (optional claims of the wrong shape are ignored).

    Examples
    --------
    >>> ags = {"lineitem": "https://lms/li/1", "scope": [SCORE_SCOPE]}
    >>> claims = {"sub": "s1", "name": "Ada", AGS_ENDPOINT: ags}
    >>> launch = launch_from_claims(claims, "https://lms", "c", "d")
    >>> launch.name, launch.lineitem_url, launch.is_instructor
    ('Ada', 'https://lms/li/1', False)
    """
    context, ags, nrps = _mapping(claims, CONTEXT), _mapping(claims, AGS_ENDPOINT), _mapping(claims, NRPS)
    roles, scopes = _items(claims, ROLES), _items(ags, "scope")
    lineitem = _text(ags.get("lineitem")) if SCORE_SCOPE in scopes else None
    return Launch(
        issuer=issuer,
        client_id=client_id,
        deployment_id=deployment_id,
        subject=str(claims.get("sub", "")),
        name=_text(claims.get("name")) or _joined_name(claims),
        email=_text(claims.get("email")),
        roles=tuple(role for role in roles if isinstance(role, str)),
        target_link_uri=str(claims.get(TARGET_LINK_URI, "")),
        context_id=_text(context.get("id")),
        context_title=_text(context.get("title")) or _text(context.get("label")),
        lineitem_url=lineitem,
        memberships_url=_text(nrps.get("context_memberships_url")),
    )


def _mapping(claims: dict[str, Any], key: str) -> dict[str, Any]:
    value = claims.get(key)
    return value if isinstance(value, dict) else {}


def _items(claims: dict[str, Any], key: str) -> list[Any]:
    value = claims.get(key)
    return value if isinstance(value, list) else []


def _joined_name(claims: dict[str, Any]) -> str | None:
    parts = [_text(claims.get(key)) for key in ("given_name", "family_name")]
    return " ".join(part for part in parts if part) or None
