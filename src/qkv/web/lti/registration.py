"""LTI Dynamic Registration 1.0: the tool's side of "the administrator pastes one URL into the LMS".

``qkv lti registration-link`` makes a one-time URL, ``/lti/register/TOKEN``. The LMS opens it (in an
iframe or a window) with ``openid_configuration`` (where its OpenID configuration is) and usually a
``registration_token``. qkv then

1. refuses a token it never made, or one used or expired, before it fetches anything;
2. reads the platform's configuration, whose ``issuer`` must be on the host the configuration came from
   (so a link cannot be turned into a registration of another LMS), with the registration token as
   bearer (Moodle and Canvas require it);
3. spends the link, and posts its client registration to the platform's ``registration_endpoint``
   (``registration_request``: redirect URIs, login and JWKS URLs, the launch URL, the AGS and NRPS
   scopes, both message types, the claims it reads, its name and logo);
4. stores the platform with the client id and deployment id the LMS gave back, and answers with the page
   that posts ``{subject: "org.imsglobal.lti.close"}`` to its opener or parent, which closes the LMS's
   dialog.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from qkv.store.lti.platforms import LtiPlatforms, PlatformRecord, check_identifier, check_url
from qkv.store.lti.registrations import LinkState, RegistrationLinks
from qkv.web.lti import claims as c
from qkv.web.lti.refusal import LaunchRefused

TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_NAME = "qkv: queries, keys and values"
MAX_DOCUMENT_BYTES = 256 * 1024
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
        403 for a token qkv never made; 410 for one used already or expired.
    """
    state = links.check(token)
    if state is LinkState.UNKNOWN:
        raise LaunchRefused(
            403,
            "This registration URL was not made by this qkv server, so it registers nothing; an "
            "administrator makes one with 'qkv lti registration-link' and pastes it into the LMS.",
        )
    if state is not LinkState.FRESH:
        why = "was used already" if state is LinkState.USED else "has expired"
        raise LaunchRefused(
            410,
            f"This registration URL {why}: each works once, for a limited time. Make a new one with "
            "'qkv lti registration-link' and paste that into the LMS.",
        )


def read_configuration(client: httpx.Client, url: str, registration_token: str) -> PlatformConfiguration:
    """The platform's OpenID configuration, checked.

    Raises
    ------
    LaunchRefused
        400 for a URL that is not http(s), a document that cannot be read or lacks a field, or an issuer
        on another host than the URL; 502 when the LMS cannot be reached.
    """
    try:
        check_url(url, "The openid_configuration URL")
    except ValueError:  # also a URL urlsplit cannot read ("http://[::1")
        raise LaunchRefused(
            400,
            f"The openid_configuration URL {url[:200]!r} ({len(url)} characters) is not an absolute http(s) "
            "URL of at most 1000 characters, such as https://lms.example/mod/lti/openid-configuration.php.",
        ) from None
    headers = {"Accept": "application/json"}
    if registration_token:
        headers["Authorization"] = f"Bearer {registration_token}"
    body = _get_json(client, url, headers)
    issuer = _field(body, "issuer", url)
    if _host(issuer) != _host(url):
        raise LaunchRefused(
            400,
            f"The LMS's OpenID configuration at {url} names the issuer {issuer!r}, which is not on the "
            f"host it came from ({_host(url)}); qkv registers a platform only with its own configuration.",
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


def register(
    client: httpx.Client,
    platforms: LtiPlatforms,
    config: PlatformConfiguration,
    body: dict[str, Any],
    registration_token: str,
) -> PlatformRecord:
    """Post the registration and store the platform with the client id and deployment id it gave.

    Raises
    ------
    LaunchRefused
        502 when the LMS refuses or cannot be reached; 409 when qkv has that client id already.
    """
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if registration_token:
        headers["Authorization"] = f"Bearer {registration_token}"
    try:
        answer = client.post(config.registration_url, json=body, headers=headers, timeout=20.0)
    except httpx.HTTPError as error:
        raise LaunchRefused(
            502,
            f"The LMS's registration endpoint {config.registration_url} could not be reached "
            f"({type(error).__name__}); make a new link and try again.",
        ) from None
    if not 200 <= answer.status_code < 300:
        raise LaunchRefused(
            502,
            f"The LMS refused qkv's registration ({answer.status_code}: {answer.text[:200]!r}); make a new "
            "link with 'qkv lti registration-link' once the cause is fixed.",
        )
    registered = _json_of(answer, config.registration_url)
    client_id, deployment_id = _granted(registered, config.registration_url)
    try:
        return platforms.add(
            config.issuer, client_id, [deployment_id], config.auth_url, config.token_url, config.jwks_url
        )
    except ValueError as error:
        raise LaunchRefused(409, str(error)) from None


def _granted(registered: dict[str, Any], url: str) -> tuple[str, str]:
    tool = registered.get(TOOL_CONFIGURATION)
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    try:
        client_id = check_identifier(str(registered.get("client_id") or ""), "The client id the LMS gave")
        deployment_id = check_identifier(str(deployment or ""), "The deployment id the LMS gave")
    except ValueError as error:
        raise LaunchRefused(
            502,
            f"The LMS's registration answer at {url} is incomplete ({error}); register qkv by hand with "
            "'qkv lti add-platform' (docs/lms.md).",
        ) from None
    return client_id, deployment_id


def _get_json(client: httpx.Client, url: str, headers: dict[str, str]) -> dict[str, Any]:
    try:
        response = client.get(url, headers=headers, timeout=15.0)
    except httpx.HTTPError as error:
        raise LaunchRefused(
            502, f"The LMS's OpenID configuration at {url} could not be reached ({type(error).__name__})."
        ) from None
    if response.status_code != 200:
        raise LaunchRefused(
            400, f"The LMS's OpenID configuration at {url} answered {response.status_code}, not 200."
        )
    return _json_of(response, url)


def _json_of(response: httpx.Response, url: str) -> dict[str, Any]:
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise LaunchRefused(400, f"The LMS's answer at {url} is over {MAX_DOCUMENT_BYTES:,} bytes.")
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise LaunchRefused(400, f"The LMS's answer at {url} is not a JSON object.")
    return body


def _field(body: dict[str, Any], name: str, url: str) -> str:
    value = str(body.get(name) or "")
    try:
        return check_url(value, f"The {name} of the configuration at {url}")
    except ValueError:
        raise LaunchRefused(
            400,
            f"The {name} of the LMS's configuration at {url} is {value[:200]!r}, not an absolute http(s) URL "
            "of at most 1000 characters; qkv needs it to register.",
        ) from None


def _host(url: str) -> str:
    parts = urlsplit(url)  # both URLs passed check_url already
    return f"{parts.scheme}://{(parts.netloc.rsplit('@', 1)[-1]).lower()}"


__all__ = [
    "PlatformConfiguration",
    "canvas_configuration",
    "check_link",
    "read_configuration",
    "register",
    "registration_request",
]
