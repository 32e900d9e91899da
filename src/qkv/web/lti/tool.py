"""The LTI tool's long-lived parts, made once per server: registrations, logins, links, keys, the sender."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from qkv.store.lti.links import LtiLinks
from qkv.store.lti.logins import LtiLogins
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.lti.platforms import LtiPlatforms
from qkv.store.sql.database import Database
from qkv.web.lti.id_token import IdTokenChecker
from qkv.web.lti.lms_fetch import FetchPolicy, LmsFetcher
from qkv.web.lti.platform_keys import PlatformKeys
from qkv.web.lti.registration_attempts import Registrar
from qkv.web.lti.scores import ScoreHook
from qkv.web.lti.sender import ScoreSender
from qkv.web.lti.service_tokens import ServiceTokens
from qkv.web.lti.tool_keys import ToolKey


@dataclass
class LtiTool:
    """Everything the LTI routes and the score sender use."""

    platforms: LtiPlatforms
    logins: LtiLogins
    links: LtiLinks
    outbox: ScoreOutbox
    key: ToolKey
    client: httpx.Client
    checker: IdTokenChecker
    tokens: ServiceTokens
    sender: ScoreSender
    scores: ScoreHook
    registrar: Registrar

    @classmethod
    def open(cls, database: Database, poll_s: float = 2.0, fetch: FetchPolicy | None = None) -> LtiTool:
        """The tool on ``database`` (its key made and stored on first use); Dynamic Registration fetches
        under ``fetch`` (public addresses only, 10 s an attempt, by default).

        Examples
        --------
        >>> tool = LtiTool.open(Database("sqlite://"))
        >>> tool.platforms.all(), tool.outbox.waiting()
        ([], [])
        >>> tool.close()
        """
        platforms, logins = LtiPlatforms(database), LtiLogins(database)
        links, outbox = LtiLinks(database), ScoreOutbox(database)
        key = ToolKey(database)
        client = httpx.Client(follow_redirects=False, headers={"User-Agent": "qkv-lti"})
        tokens = ServiceTokens(client, key)
        sender = ScoreSender(outbox, platforms, tokens, client, poll_s=poll_s)
        return cls(
            platforms=platforms,
            logins=logins,
            links=links,
            outbox=outbox,
            key=key,
            client=client,
            checker=IdTokenChecker(platforms, logins, PlatformKeys(client)),
            tokens=tokens,
            sender=sender,
            scores=ScoreHook(links, outbox, sender.wake),
            registrar=Registrar(LmsFetcher(fetch or FetchPolicy())),
        )

    def close(self) -> None:
        """Stop the sender and close the HTTP client."""
        self.sender.stop()
        self.client.close()
