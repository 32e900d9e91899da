"""Checking a launch's id token fully: signature, issuer, audience, times, nonce, deployment, version, type.

Each refusal is a ``LaunchRefused`` whose sentence says what was wrong and what a teacher can change.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import jwt

from qkv.store.lti.logins import LoginState, LtiLogins, StateOutcome
from qkv.store.lti.platforms import LtiPlatforms, PlatformRecord
from qkv.web.lti import claims as c
from qkv.web.lti.platform_keys import PlatformKeys
from qkv.web.lti.refusal import LaunchRefused

LEEWAY_S = 60  # clocks of an LMS and of qkv may differ this much
MAX_TOKEN_CHARS = 64 * 1024


class IdTokenChecker:
    """Checks id tokens against the registered platforms, their keys and the logins in progress.

    Parameters
    ----------
    platforms : LtiPlatforms
        The registrations.
    logins : LtiLogins
        Login states and used nonces.
    keys : PlatformKeys
        The platforms' public keys.
    """

    def __init__(self, platforms: LtiPlatforms, logins: LtiLogins, keys: PlatformKeys) -> None:
        self.platforms = platforms
        self.logins = logins
        self.keys = keys

    def check(self, id_token: str, login: LoginState) -> c.Launch:
        """The launch an id token describes, once every check passed.

        Parameters
        ----------
        id_token : str
            The ``id_token`` form field.
        login : LoginState
            What the launch's ``state`` was issued for (already used up by the caller, who checked it).

        Raises
        ------
        LaunchRefused
            With the first check that failed.
        """
        header, unverified = _unverified(id_token)
        platform = self._platform(unverified)
        if (platform.issuer, platform.client_id) != (login.issuer, login.client_id):
            raise LaunchRefused(
                400,
                f"This launch's id token comes from {platform.issuer!r} (client id {platform.client_id!r}), "
                f"but its login was started by {login.issuer!r} (client id {login.client_id!r}); launch "
                "again from the LMS.",
            )
        key = self.keys.key_for(platform.jwks_url, header.get("kid"))
        verified = _verify(id_token, key, platform)
        _check_azp(verified, platform)
        self._check_nonce(verified, login, platform)
        deployment = _check_deployment(verified, platform)
        _check_message(verified)
        if not isinstance(verified.get("sub"), str) or not verified["sub"]:
            raise LaunchRefused(
                400,
                "The id token has no 'sub' (the LMS's id of the person launching); qkv needs it to keep "
                "their progress. Anonymous launches are not supported: launch as a signed-in LMS user.",
            )
        return c.launch_from_claims(verified, platform.issuer, platform.client_id, deployment)

    def _platform(self, unverified: dict[str, Any]) -> PlatformRecord:
        issuer = unverified.get("iss")
        if not isinstance(issuer, str) or not issuer:
            raise LaunchRefused(
                400, "The id token has no issuer ('iss'); it cannot be from an LTI 1.3 platform."
            )
        registered = self.platforms.for_issuer(issuer)
        if not registered:
            raise LaunchRefused(
                403,
                f"The LMS {issuer!r} is not registered with this qkv server; an administrator registers it "
                "with 'qkv lti add-platform --issuer ...' (see docs/lms.md).",
            )
        audience = unverified.get("aud")
        audiences = (
            [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        )
        for platform in registered:
            if platform.client_id in audiences:
                return platform
        ours = ", ".join(repr(p.client_id) for p in registered)
        raise LaunchRefused(
            403,
            f"The id token is meant for the audience {audience!r}, but qkv knows {issuer!r} with the client "
            f"id {ours}; check the client id given to 'qkv lti add-platform' against the one the LMS shows.",
        )

    def _check_nonce(self, verified: dict[str, Any], login: LoginState, platform: PlatformRecord) -> None:
        nonce = verified.get("nonce")
        if not isinstance(nonce, str) or nonce != login.nonce:
            raise LaunchRefused(
                400,
                "The id token's nonce is not the one qkv sent with this login, so the token was made for "
                "another login (replayed or mixed up); launch again from the LMS.",
            )
        expires = datetime.fromtimestamp(int(verified["exp"]) + LEEWAY_S, UTC).replace(tzinfo=None)
        if not self.logins.use_nonce(platform.issuer, nonce, expires + timedelta(seconds=LEEWAY_S)):
            raise LaunchRefused(
                400, "This id token was used already (its nonce was seen before); launch again from the LMS."
            )


def state_refusal(login: LoginState) -> LaunchRefused | None:
    """The refusal for a state that is not a fresh login of this server's, or None.

    Examples
    --------
    >>> state_refusal(LoginState(StateOutcome.USED)).status
    400
    """
    if login.outcome is StateOutcome.FRESH:
        return None
    why = {
        StateOutcome.USED: "was used already: this launch was sent twice (replayed)",
        StateOutcome.EXPIRED: "has expired: the login started more than 10 minutes ago",
        StateOutcome.UNKNOWN: "was never issued by qkv",
    }[login.outcome]
    return LaunchRefused(400, f"The launch's state {why}; launch again from the LMS.")


def _unverified(id_token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if not id_token:
        raise LaunchRefused(
            400, "The launch has no id_token; it must be a form POST from an LTI 1.3 platform."
        )
    if len(id_token) > MAX_TOKEN_CHARS:
        raise LaunchRefused(
            400, f"The id_token has {len(id_token)} characters, more than qkv accepts ({MAX_TOKEN_CHARS})."
        )
    try:
        header = jwt.get_unverified_header(id_token)
        claims = jwt.decode(id_token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise LaunchRefused(400, "The id_token is not a JSON Web Token, so it cannot be checked.") from None
    if header.get("alg") != "RS256":
        raise LaunchRefused(
            400, f"The id token is signed with {header.get('alg')!r}; LTI 1.3 platforms sign with RS256."
        )
    return header, claims


def _verify(id_token: str, key: Any, platform: PlatformRecord) -> dict[str, Any]:
    try:
        verified: dict[str, Any] = jwt.decode(
            id_token,
            key,
            algorithms=["RS256"],
            audience=platform.client_id,
            issuer=platform.issuer,
            leeway=LEEWAY_S,
            options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
        )
    except jwt.InvalidSignatureError:
        raise LaunchRefused(
            403,
            f"The id token's signature does not match the public keys of {platform.issuer!r} at "
            f"{platform.jwks_url}, so it may be forged; check the JWKS URL registered for this platform.",
        ) from None
    except jwt.ExpiredSignatureError:
        raise LaunchRefused(
            401,
            "The id token has expired (it is valid for minutes only, with a minute's leeway); launch again "
            "from the LMS, and if this repeats check that the LMS's and this server's clocks are right.",
        ) from None
    except (jwt.ImmatureSignatureError, jwt.InvalidIssuedAtError):
        raise LaunchRefused(
            401,
            "The id token says it was issued in the future; the LMS's clock and this server's differ by "
            "more than a minute: set both clocks right (NTP) and launch again.",
        ) from None
    except jwt.MissingRequiredClaimError as error:
        raise LaunchRefused(
            400, f"The id token has no {error.claim!r} claim, which LTI 1.3 requires."
        ) from None
    except jwt.PyJWTError as error:
        raise LaunchRefused(400, f"The id token was refused: {error}.") from None
    return verified


def _check_azp(verified: dict[str, Any], platform: PlatformRecord) -> None:
    audience = verified.get("aud")
    several = isinstance(audience, list) and len(audience) > 1
    azp = verified.get("azp")
    if several and azp is None:
        raise LaunchRefused(
            400, "The id token names several audiences but no authorized party ('azp'); LTI 1.3 requires it."
        )
    if azp is not None and azp != platform.client_id:
        raise LaunchRefused(
            403,
            f"The id token's authorized party ('azp') is {azp!r}, not qkv's client id "
            f"{platform.client_id!r}; the token was issued to another tool.",
        )


def _check_deployment(verified: dict[str, Any], platform: PlatformRecord) -> str:
    deployment = verified.get(c.DEPLOYMENT_ID)
    if not isinstance(deployment, str) or deployment not in platform.deployment_ids:
        known = ", ".join(repr(d) for d in platform.deployment_ids)
        raise LaunchRefused(
            403,
            f"The deployment {deployment!r} of {platform.issuer!r} is not registered with qkv (known: "
            f"{known}); add it with 'qkv lti add-platform ... --deployment-id' after removing the old "
            "registration, or check the deployment id the LMS shows.",
        )
    return deployment


def _check_message(verified: dict[str, Any]) -> None:
    version = verified.get(c.VERSION)
    if version != c.LTI_VERSION:
        raise LaunchRefused(400, f"The launch says LTI version {version!r}; qkv speaks LTI {c.LTI_VERSION}.")
    kind = verified.get(c.MESSAGE_TYPE)
    if kind not in c.MESSAGE_TYPES:
        raise LaunchRefused(
            400,
            f"The launch is a {kind!r} message; qkv takes {' and '.join(c.MESSAGE_TYPES)} messages only "
            "(add qkv to the course as an external tool link or through its activity picker).",
        )
