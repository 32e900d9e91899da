"""Access tokens for an LMS's services (AGS, NRPS): the OAuth 2 client-credentials grant with a JWT
assertion signed by the tool's key, cached until shortly before they expire."""

from __future__ import annotations

import threading
import time

import httpx

from qkv.store.lti.platforms import PlatformRecord
from qkv.web.lti.tool_keys import ToolKey

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
EARLY_RENEWAL_S = 60.0


class ServiceUnavailable(Exception):
    """An LMS service could not be used now; the sentence says why (sent to the log and the outbox)."""


class ServiceTokens:
    """Gets and caches tokens per platform and scope set.

    Parameters
    ----------
    client : httpx.Client
        How the token endpoint is reached.
    key : ToolKey
        Signs the client assertions.
    """

    def __init__(self, client: httpx.Client, key: ToolKey) -> None:
        self._client = client
        self._key = key
        self._tokens: dict[tuple[str, str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    def token(self, platform: PlatformRecord, scopes: tuple[str, ...]) -> str:
        """A bearer token for ``scopes`` at ``platform``.

        Parameters
        ----------
        platform : PlatformRecord
            Whose token endpoint to ask, as which client.
        scopes : tuple of str
            The service scopes the token is for.

        Returns
        -------
        str
            The access token (cached until a minute before it expires).

        Raises
        ------
        ServiceUnavailable
            When the token endpoint cannot be reached or refuses.
        """
        cache_key = (platform.issuer, platform.client_id, " ".join(sorted(scopes)))
        with self._lock:
            cached = self._tokens.get(cache_key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": self._key.client_assertion(platform.client_id, platform.token_url),
            "scope": " ".join(scopes),
        }
        try:
            response = self._client.post(platform.token_url, data=form, timeout=15.0)
        except httpx.HTTPError as error:
            raise ServiceUnavailable(
                f"The token endpoint {platform.token_url} could not be reached ({type(error).__name__})."
            ) from None
        if response.status_code != 200:
            raise ServiceUnavailable(
                f"The token endpoint {platform.token_url} answered {response.status_code}: "
                f"{response.text[:200]!r}."
            )
        try:
            body = response.json()
            token = str(body["access_token"])
            lifetime = float(body.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError):
            raise ServiceUnavailable(
                f"The token endpoint {platform.token_url} answered without an access_token."
            ) from None
        with self._lock:
            self._tokens[cache_key] = (time.monotonic() + max(lifetime - EARLY_RENEWAL_S, 0.0), token)
        return token

    def forget(self, platform: PlatformRecord) -> None:
        """Drop the platform's cached tokens (after a 401: the LMS no longer takes them)."""
        with self._lock:
            for key in [k for k in self._tokens if k[:2] == (platform.issuer, platform.client_id)]:
                del self._tokens[key]
