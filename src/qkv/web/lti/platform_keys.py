"""Each platform's public keys, fetched from its JWKS URL and cached; an unknown key id fetches again.

A platform rotates its keys by publishing a new one and signing with it: a token whose ``kid`` the cached
set does not have makes the cache fetch the set once more before the token is refused. Such a fetch is
made at most once per ``refetch_every_s`` (a minute) per platform: anyone can send a launch with a made-up
``kid``, and each must not become a request to the LMS. A rotation is seen within that minute.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import jwt

from qkv.web.lti.refusal import LaunchRefused

MAX_AGE_S = 600.0
REFETCH_EVERY_S = 60.0


class PlatformKeys:
    """A cache of JWKS documents by URL.

    Parameters
    ----------
    client : httpx.Client
        How the documents are fetched.
    max_age_s : float
        How long a fetched set is used before it is fetched again.
    refetch_every_s : float
        The least time between two fetches of one set for a key id it does not have.
    clock : callable
        ``time.monotonic`` unless a test gives another.
    """

    def __init__(
        self,
        client: httpx.Client,
        max_age_s: float = MAX_AGE_S,
        *,
        refetch_every_s: float = REFETCH_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._max_age_s = max_age_s
        self._refetch_every_s = refetch_every_s
        self._clock = clock
        self._sets: dict[str, tuple[float, jwt.PyJWKSet]] = {}
        self._refetched: dict[str, float] = {}  # url -> when it was last fetched for an unknown key id
        self._lock = threading.Lock()
        self.fetches = 0  # how many times a set was fetched (read by the tests and benchmarks)

    def key_for(self, jwks_url: str, kid: str | None) -> Any:
        """The public key that signed a token with this ``kid`` (the only key, when the token names none).

        Parameters
        ----------
        jwks_url : str
            The platform's key set.
        kid : str or None
            The key id in the token's header.

        Returns
        -------
        object
            The key, as PyJWT takes it for ``jwt.decode``.

        Raises
        ------
        LaunchRefused
            502 when the JWKS URL cannot be read; 403 when no key matches.
        """
        with self._lock:
            cached = self._sets.get(jwks_url)
        fresh = cached is not None and self._clock() - cached[0] < self._max_age_s
        keys = cached[1] if cached is not None and fresh else self._fetch(jwks_url)
        found = _pick(keys, kid)
        if found is None and fresh and self._may_refetch(jwks_url):
            found = _pick(self._fetch(jwks_url), kid)  # rotated: the set we had is out of date
        if found is None:
            named = f"the key id {kid!r}" if kid else "no key id, and the set has more than one key"
            raise LaunchRefused(
                403,
                f"The id token was signed with {named}, which the platform's key set at {jwks_url} does not "
                "have; check the JWKS URL registered with 'qkv lti add-platform' for this platform.",
            )
        return found.key

    def _may_refetch(self, jwks_url: str) -> bool:
        """Whether a set fetched for an unknown key id may be fetched again now; if so, the time is taken
        (under the lock, so that of many launches at once only one fetches)."""
        with self._lock:
            now = self._clock()
            # Only refetches count: a rotation right after the regular fetch is still seen at once.
            if now - self._refetched.get(jwks_url, -math.inf) < self._refetch_every_s:
                return False
            self._refetched[jwks_url] = now  # taken even if the fetch fails: the next waits a minute
            return True

    def _fetch(self, jwks_url: str) -> jwt.PyJWKSet:
        self.fetches += 1
        try:
            response = self._client.get(jwks_url, timeout=10.0)
            response.raise_for_status()
            keys = jwt.PyJWKSet.from_dict(response.json())
        except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as error:
            raise LaunchRefused(
                502,
                f"qkv could not read the platform's public keys at {jwks_url} ({type(error).__name__}: "
                f"{str(error)[:200]}); check that the JWKS URL registered for this platform is right and "
                "that the LMS answers, then launch again.",
            ) from None
        with self._lock:
            self._sets[jwks_url] = (self._clock(), keys)
        return keys


def _pick(keys: jwt.PyJWKSet, kid: str | None) -> jwt.PyJWK | None:
    if kid is None:
        return keys.keys[0] if len(keys.keys) == 1 else None
    return next((key for key in keys.keys if key.key_id == kid), None)
