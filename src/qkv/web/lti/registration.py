"""LTI Dynamic Registration 1.0: the tool's side of "the administrator pastes one URL into the LMS".

``qkv lti registration-link`` makes a one-time URL, ``/lti/register/TOKEN``. The LMS opens it (in an
iframe or a window) with ``openid_configuration`` (where its OpenID configuration is) and usually a
``registration_token``. qkv then

1. refuses a token it never made, or one used, expired or spent by failed attempts, before it fetches
   anything (``check_link``), and a request without an http(s) configuration URL (``check_request``);
2. reads the platform's configuration, whose ``issuer`` must be on the host the configuration came from
   (so a link cannot be turned into a registration of another LMS), with the registration token as
   bearer (Moodle and Canvas require it);
3. spends the link, and posts its client registration to the platform's ``registration_endpoint``
   (``registration_request``: redirect URIs, login and JWKS URLs, the launch URL, the AGS and NRPS
   scopes, both message types, the claims it reads, its name and logo);
4. stores the platform with the client id and deployment id the LMS gave back (``store_platform``), and
   answers with the page that posts ``{subject: "org.imsglobal.lti.close"}`` to its opener or parent,
   which closes the LMS's dialog.

Steps 2 and 3 fetch through ``lms_fetch`` (public addresses only, one deadline, bounded answers), and
every way they fail is a ``FetchFailed`` for the log; ``registration_attempts`` bounds the attempts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from qkv.store.lti.platforms import LtiPlatforms, PlatformRecord, check_identifier, check_url
from qkv.store.lti.registrations import LinkState, RegistrationLinks
from qkv.web.lti import claims as c
from qkv.web.lti.lms_fetch import FetchFailed, LmsClient, where
from qkv.web.lti.refusal import LaunchRefused

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_NAME = "qkv: queries, keys and values"
SCOPES = (
    c.LINEITEM_SCOPE,
    c.LINEITEM_READ_SCOPE,
    c.RESULT_READ_SCOPE,
    c.SCORE_SCOPE,
    c.MEMBERSHIP_SCOPE,
)
CLAIMS = ("iss", "sub", "name", "given_name", "family_name", "email")


@dataclass(frozen=True)
class PlatformConfiguration:
    """What qkv reads from a platform's OpenID configuration."""

    issuer: str
    auth_url: str
    token_url: str
    jwks_url: str
    registration_url: str
    product: str


def check_link(links: RegistrationLinks, token: str) -> None:
    """Refuse a registration link that is not a fresh one of this server's (nothing is fetched first).

    Raises
    ------
    LaunchRefused
        403 for a token qkv never made; 410 for one used already, expired or spent by failed attempts;
        429 while another attempt holds it.
    """
    refuse_link(links.check(token), links.max_failures)


def refuse_link(state: LinkState, max_failures: int) -> None:
    """The refusal for a link in ``state`` (nothing for a fresh one).

    Examples
    --------
    >>> refuse_link(LinkState.FRESH, 3)
    >>> try:
    ...     refuse_link(LinkState.FAILED, 3)
    ... except LaunchRefused as refused:
    ...     print(refused.status, str(refused)[:62])
    410 This registration URL was tried 3 times without success, so it
    """
    if state is LinkState.UNKNOWN:
        raise LaunchRefused(
            403,
            "This registration URL was not made by this qkv server, so it registers nothing; an "
            "administrator makes one with 'qkv lti registration-link' and pastes it into the LMS.",
        )
    if state is LinkState.BUSY:
        raise LaunchRefused(
            429,
            "Another attempt with this registration URL is in progress; wait a few seconds for it to end, "
            "then try again.",
        )
    if state is not LinkState.FRESH:
        why = {
            LinkState.USED: "was used already",
            LinkState.EXPIRED: "has expired",
            LinkState.FAILED: f"was tried {max_failures} times without success, so it is spent",
        }[state]
        raise LaunchRefused(
            410,
            f"This registration URL {why}: each works once, for a limited time. Make a new one with "
            "'qkv lti registration-link' and paste that into the LMS.",
        )


def check_request(configuration_url: str) -> None:
    """Refuse a request that names no OpenID configuration, or not as an http(s) URL (nothing is fetched).

    Raises
    ------
    LaunchRefused
        400, with a sentence.
    """
    if not configuration_url:
        raise LaunchRefused(
            400,
            "This is qkv's registration URL, but it was opened without openid_configuration: paste it "
            "into the LMS's LTI Dynamic Registration (Moodle: Tool URL, then Add LTI Advantage; "
            "Canvas: Developer Keys, LTI Registration); see docs/lms.md.",
        )
    try:
        check_url(configuration_url, "The openid_configuration URL")
    except ValueError:  # also a URL urlsplit cannot read ("http://[::1")
        raise LaunchRefused(
            400,
            f"The openid_configuration URL {configuration_url[:200]!r} ({len(configuration_url)} characters) "
            "is not an absolute http(s) URL of at most 1000 characters, such as "
            "https://lms.example/mod/lti/openid-configuration.php.",
        ) from None


async def read_configuration(lms: LmsClient, url: str, registration_token: str) -> PlatformConfiguration:
    """The platform's OpenID configuration, checked.

    Raises
    ------
    FetchFailed
        When it cannot be fetched, is no JSON object, lacks a field, or names an issuer on another host
        than the URL's (the cause for the log).
    """
    headers = {"Accept": "application/json"}
    if registration_token:
        headers["Authorization"] = f"Bearer {registration_token}"
    body = await lms.get_json(url, headers)
    issuer = _field(body, "issuer", url)
    if _host(issuer) != _host(url):
        raise FetchFailed(
            f"the OpenID configuration at {where(url)} names the issuer {issuer[:200]!r}, which is not on "
            f"the host it came from ({_host(url)})"
        )
    platform = body.get(PLATFORM_CONFIGURATION)
    product = platform.get("product_family_code", "") if isinstance(platform, dict) else ""
    return PlatformConfiguration(
        issuer=issuer,
        auth_url=_field(body, "authorization_endpoint", url),
        token_url=_field(body, "token_endpoint", url),
        jwks_url=_field(body, "jwks_uri", url),
        registration_url=_field(body, "registration_endpoint", url),
        product=str(product)[:64],
    )


def registration_request(origin: str) -> dict[str, Any]:
    """The client registration qkv posts (OpenID Connect Dynamic Client Registration, with LTI's tool
    configuration).

    Examples
    --------
    >>> body = registration_request("https://qkv.example")
    >>> body["initiate_login_uri"], body["redirect_uris"], body["jwks_uri"]
    ('https://qkv.example/lti/login', ['https://qkv.example/lti/launch'], 'https://qkv.example/lti/jwks.json')
    >>> [m["type"] for m in body[TOOL_CONFIGURATION]["messages"]]
    ['LtiResourceLinkRequest', 'LtiDeepLinkingRequest']
    """
    launch = f"{origin}/lti/launch"
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": f"{origin}/lti/login",
        "redirect_uris": [launch],
        "client_name": TOOL_NAME,
        "jwks_uri": f"{origin}/lti/jwks.json",
        "logo_uri": f"{origin}/static/favicon.svg",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIGURATION: {
            "domain": urlsplit(origin).netloc,
            "description": "Interactive, auto-graded lessons on attention, with grades back to the LMS.",
            "target_link_uri": launch,
            "claims": list(CLAIMS),
            "messages": [
                {
                    "type": c.RESOURCE_LINK_REQUEST,
                    "target_link_uri": launch,
                    "label": "qkv: class view",
                    "placements": ["course_navigation"],  # a learner there gets the lesson list
                },
                {
                    "type": c.DEEP_LINKING_REQUEST,
                    "target_link_uri": launch,
                    "label": "qkv lessons",
                    "placements": ["assignment_selection", "link_selection", "ContentArea"],
                },
            ],
        },
    }


def canvas_configuration(origin: str) -> dict[str, Any]:
    """The JSON a Canvas developer key reads from a URL ("Enter URL"): the same tool as the dynamic
    registration, with Canvas's placements: course navigation opens the instructor's view (hidden from
    students); assignment and link selection open the lesson picker (deep linking).

    Examples
    --------
    >>> config = canvas_configuration("https://qkv.example")
    >>> for p in config["extensions"][0]["settings"]["placements"]:
    ...     print(p["placement"], p["message_type"])
    course_navigation LtiResourceLinkRequest
    assignment_selection LtiDeepLinkingRequest
    link_selection LtiDeepLinkingRequest
    """
    launch = f"{origin}/lti/launch"
    picker = {"message_type": c.DEEP_LINKING_REQUEST, "target_link_uri": launch, "text": "qkv lessons"}
    placements = [
        {
            "placement": "course_navigation",
            "message_type": c.RESOURCE_LINK_REQUEST,
            "target_link_uri": launch,
            "text": "qkv: class view",
            "visibility": "admins",
            "default": "enabled",
        },
        {"placement": "assignment_selection", **picker},
        {"placement": "link_selection", **picker},
    ]
    return {
        "title": TOOL_NAME,
        "description": "Interactive, auto-graded lessons on attention, with grades back to the LMS.",
        "oidc_initiation_url": f"{origin}/lti/login",
        "target_link_uri": launch,
        "public_jwk_url": f"{origin}/lti/jwks.json",
        "scopes": list(SCOPES),
        "extensions": [
            {
                "domain": urlsplit(origin).netloc,
                "tool_id": "qkv",
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "settings": {
                    "text": "qkv",
                    "icon_url": f"{origin}/static/favicon.svg",
                    "placements": placements,
                },
            }
        ],
        "custom_fields": {},
    }


async def post_registration(
    lms: LmsClient, config: PlatformConfiguration, body: dict[str, Any], registration_token: str
) -> tuple[str, str]:
    """Post the registration; the client id and deployment id the LMS gave.

    Raises
    ------
    FetchFailed
        When the LMS refuses, cannot be reached, or answers without a client id or deployment id.
    """
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if registration_token:
        headers["Authorization"] = f"Bearer {registration_token}"
    registered = await lms.post_json(config.registration_url, body, headers)
    tool = registered.get(TOOL_CONFIGURATION)
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    try:
        client_id = check_identifier(str(registered.get("client_id") or ""), "The client id the LMS gave")
        deployment_id = check_identifier(str(deployment or ""), "The deployment id the LMS gave")
    except ValueError as error:
        raise FetchFailed(
            f"the registration answer of {where(config.registration_url)} is incomplete ({error})"
        ) from None
    return client_id, deployment_id


def store_platform(
    platforms: LtiPlatforms, config: PlatformConfiguration, client_id: str, deployment_id: str
) -> PlatformRecord:
    """Store the platform as registered.

    Raises
    ------
    LaunchRefused
        409 when qkv has that client id already.
    """
    try:
        return platforms.add(
            config.issuer, client_id, [deployment_id], config.auth_url, config.token_url, config.jwks_url
        )
    except ValueError as error:
        raise LaunchRefused(409, str(error)) from None


def _field(body: dict[str, Any], name: str, url: str) -> str:
    value = str(body.get(name) or "")
    try:
        return check_url(value, f"The {name} of the configuration at {url}")
    except ValueError:
        raise FetchFailed(
            f"the {name} of the configuration at {where(url)} is {value[:200]!r}, not an absolute http(s) "
            "URL of at most 1000 characters"
        ) from None


def _host(url: str) -> str:
    parts = urlsplit(url)  # both URLs passed check_url already
    return f"{parts.scheme}://{(parts.netloc.rsplit('@', 1)[-1]).lower()}"


__all__ = [
    "PlatformConfiguration",
    "canvas_configuration",
    "check_link",
    "check_request",
    "post_registration",
    "read_configuration",
    "refuse_link",
    "registration_request",
    "store_platform",
]
