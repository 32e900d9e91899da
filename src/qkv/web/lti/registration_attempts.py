"""How Dynamic Registration attempts are bounded, since each one fetches from wherever its request says.

- One attempt at a time per link, across servers: the store holds the link for the attempt
  (``RegistrationLinks.begin``, until ``finish`` or the deadline and a margin); a second answers 429.
- A few at a time per client address (its bound key, as every per-address bound counts), in this server's
  memory: ``per_address`` attempts in progress; more answer 429.
- Every attempt that does not register counts against its link, which is spent after a few
  (``qkv.store.lti.registrations.MAX_FAILURES``); an unused link is no reusable tool.
- Every failed fetch, whatever went wrong (no connection, a port that speaks no HTTP, a page, bad JSON, a
  missing field, an issuer on another host, a private address, the deadline), answers 502 with the one
  sentence ``FAILED``, so the answer tells nothing about what is at an address; the log keeps the cause.

The fetches themselves run on the event loop under one deadline (``lms_fetch``); the store's calls, each
short, run on the thread pool.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from starlette.concurrency import run_in_threadpool

from qkv.store.lti.platforms import LtiPlatforms, PlatformRecord
from qkv.store.lti.registrations import RegistrationLinks
from qkv.web.lti import registration as dr
from qkv.web.lti.lms_fetch import FetchFailed, LmsClient, LmsFetcher, where
from qkv.web.lti.refusal import LaunchRefused

log = logging.getLogger("qkv.web.lti")

PER_ADDRESS = 3
HOLD_MARGIN_S = 20.0  # a link stays held this long past the deadline should its server stop meanwhile
FAILED = (
    "qkv could not register with this LMS: its OpenID configuration or its registration endpoint could not "
    "be fetched in time from an address qkv may reach, or did not answer as LTI Dynamic Registration asks. "
    "The qkv server's log says why. This registration URL may be tried again a few times; after that, make "
    "a new one with 'qkv lti registration-link'."
)


@dataclass(frozen=True)
class Opening:
    """What the LMS opened the link with, and where qkv is."""

    configuration_url: str
    registration_token: str
    origin: str


class AttemptsPerAddress:
    """At most ``limit`` registration attempts in progress per client address (used on the event loop).

    Examples
    --------
    >>> attempts = AttemptsPerAddress(limit=1)
    >>> with attempts.slot("192.0.2.1"):
    ...     try:
    ...         with attempts.slot("192.0.2.1"):
    ...             pass
    ...     except LaunchRefused as refused:
    ...         print(refused.status, str(refused)[:52])
    ...     with attempts.slot("198.51.100.7"):  # another address
    ...         pass
    429 This address has 1 LTI registration in progress alre
    >>> with attempts.slot("192.0.2.1"):  # the first one ended
    ...     pass
    """

    def __init__(self, limit: int = PER_ADDRESS) -> None:
        self.limit = limit
        self._counts: Counter[str] = Counter()

    @contextmanager
    def slot(self, address: str) -> Iterator[None]:
        """Hold one of ``address``'s attempts while the block runs; 429 when it has ``limit`` already."""
        if self._counts[address] >= self.limit:
            plural = "" if self.limit == 1 else "s"
            raise LaunchRefused(
                429,
                f"This address has {self.limit} LTI registration{plural} in progress already; wait a few "
                "seconds for one to end, then try again.",
            )
        self._counts[address] += 1
        try:
            yield
        finally:
            self._counts[address] -= 1
            if self._counts[address] <= 0:
                del self._counts[address]


class Registrar:
    """Registration attempts: bounded per link and per address, fetched by ``fetcher``.

    Parameters
    ----------
    fetcher : LmsFetcher
        Fetches from the LMS (its policy: addresses, deadline, sizes).
    per_address : int
        Attempts one client address may have in progress at once.
    """

    def __init__(self, fetcher: LmsFetcher, per_address: int = PER_ADDRESS) -> None:
        self.fetcher = fetcher
        self.attempts = AttemptsPerAddress(per_address)

    async def register(
        self,
        links: RegistrationLinks,
        platforms: LtiPlatforms,
        token: str,
        address: str,
        opening: Opening,
    ) -> PlatformRecord:
        """Register the LMS that opened the link ``token`` (``opening``) from the client ``address``.

        Raises
        ------
        LaunchRefused
            429 while the link or the address has attempts in progress; 403 or 410 for a link that may not
            be used; 502 with ``FAILED`` for any failed fetch; 409 when qkv has that client id already.
        """
        with self.attempts.slot(address):
            hold = timedelta(seconds=self.fetcher.policy.deadline_s + HOLD_MARGIN_S)
            dr.refuse_link(await run_in_threadpool(links.begin, token, hold), links.max_failures)
            failed = True
            try:
                record = await self.fetcher.run(lambda lms: _exchange(lms, links, platforms, token, opening))
                failed = False
                return record
            except FetchFailed as error:
                log.warning("LTI registration with %s failed: %s", where(opening.configuration_url), error)
                raise LaunchRefused(502, FAILED) from None
            finally:
                await run_in_threadpool(links.finish, token, failed=failed)


async def _exchange(
    lms: LmsClient,
    links: RegistrationLinks,
    platforms: LtiPlatforms,
    token: str,
    opening: Opening,
) -> PlatformRecord:
    config = await dr.read_configuration(lms, opening.configuration_url, opening.registration_token)
    if not await run_in_threadpool(links.use, token, config.issuer):
        raise LaunchRefused(
            410, "This registration URL was used meanwhile by another request; make a new one."
        )
    body = dr.registration_request(opening.origin)
    client_id, deployment_id = await dr.post_registration(lms, config, body, opening.registration_token)
    return await run_in_threadpool(dr.store_platform, platforms, config, client_id, deployment_id)


__all__ = ["FAILED", "PER_ADDRESS", "AttemptsPerAddress", "Opening", "Registrar"]
