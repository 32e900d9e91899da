"""The background sender: posts the outbox's scores to each line item's ``/scores`` endpoint.

One runs in every server; the outbox's claims make each score go out once, and in order per learner and
line item. A post that fails for a while (the LMS is down or busy, refuses the token, answers a 5xx) puts
the score back with a later attempt time (5 s, doubling, at most an hour), so it arrives when the LMS is
back. A score the LMS refuses for what it is (any other 4xx: Moodle's 409 for a timestamp not newer, a
400 or 422 for a person who is no learner of the course, a 404 for a deleted line item) would be refused
again: it is parked with the LMS's sentence for the instructor's LTI page, and the learner's later scores
go on without it.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

import httpx

from qkv.store import StoreError
from qkv.store.lti.outbox import OutboxEntry, ScoreOutbox
from qkv.store.lti.platforms import LtiPlatforms
from qkv.web.lti.claims import SCORE_SCOPE
from qkv.web.lti.service_tokens import ServiceTokens, ServiceUnavailable

log = logging.getLogger("qkv.web.lti")
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
# 4xx answers that say "not now" rather than "never": the token (fetched again), a timeout, too many requests.
_RETRIED_4XX = frozenset({401, 408, 425, 429})


class ScoreRefused(Exception):
    """The LMS refused a score for good (a 4xx); the sentence says what it answered."""


def lms_sentence(response: httpx.Response) -> str:
    """What an LMS said in an error answer: its JSON message when it sent one, else the start of its text.

    Examples
    --------
    >>> lms_sentence(httpx.Response(409, json={"message": "The timestamp is not newer."}))
    'The timestamp is not newer.'
    >>> lms_sentence(httpx.Response(422, json={"errors": [{"message": "User not found in course"}]}))
    'User not found in course'
    >>> lms_sentence(httpx.Response(400, text="bad score"))
    'bad score'
    """
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        for key in ("message", "error_description", "detail", "reason", "error"):
            if isinstance(body.get(key), str) and body[key].strip():
                return str(body[key]).strip()[:300]
        errors = body.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            return str(errors[0].get("message", errors[0]))[:300]
    return response.text.strip()[:300] or f"(no text; HTTP {response.status_code})"


def scores_url(lineitem_url: str) -> str:
    """The line item's scores endpoint: ``/scores`` added to its path, its query kept.

    Examples
    --------
    >>> scores_url("https://lms.example/li/7?type_id=1")
    'https://lms.example/li/7/scores?type_id=1'
    """
    parts = urlsplit(lineitem_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))


class ScoreSender:
    """Delivers waiting scores, in a thread or one round at a time (``run_once``).

    Parameters
    ----------
    outbox : ScoreOutbox
        The scores to send.
    platforms : LtiPlatforms
        Where each score's token endpoint is.
    tokens : ServiceTokens
        Service tokens.
    client : httpx.Client
        How scores are posted.
    poll_s : float
        How often the thread looks for due scores when nobody wakes it.
    """

    def __init__(
        self,
        outbox: ScoreOutbox,
        platforms: LtiPlatforms,
        tokens: ServiceTokens,
        client: httpx.Client,
        poll_s: float = 2.0,
    ) -> None:
        self.outbox = outbox
        self.platforms = platforms
        self.tokens = tokens
        self.client = client
        self.poll_s = poll_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wake(self) -> None:
        """Look for due scores now (a score was just queued)."""
        self._wake.set()

    def start(self) -> None:
        """Start the background thread."""
        self._thread = threading.Thread(target=self._loop, name="qkv-lti-scores", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the thread after the post in progress; waiting scores stay in the outbox."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def run_once(self, now: datetime | None = None) -> int:
        """Send every score due at ``now`` (default: the present); how many were delivered."""
        delivered = 0
        for entry in self.outbox.claim(now):
            if self._send(entry, now):
                delivered += 1
        return delivered

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                while self.run_once():  # a delivered score may free the next one of its line item
                    pass
            except StoreError as error:
                log.warning("the LMS score outbox could not be read: %s", error)
            except Exception:  # a thread that died here would send no later score until a restart
                log.exception("sending the LMS scores failed; the sender tries again in %g s", self.poll_s)
            self._wake.wait(self.poll_s)
            self._wake.clear()

    def _send(self, entry: OutboxEntry, now: datetime | None) -> bool:
        try:
            self._post(entry)
        except ServiceUnavailable as error:
            at = self.outbox.failed(entry.id, str(error), now)
            log.warning("LMS score %d not delivered, next try at %s UTC: %s", entry.id, at, error)
            return False
        except ScoreRefused as refused:
            self.outbox.park(entry.id, str(refused))
            log.warning("LMS score %d refused by the LMS, parked: %s", entry.id, refused)
            return False
        self.outbox.delivered(entry.id)
        return True

    def _post(self, entry: OutboxEntry) -> None:
        platform = self.platforms.find(entry.issuer, entry.client_id)
        if platform is None:
            raise ServiceUnavailable(
                f"The platform {entry.issuer!r} (client id {entry.client_id!r}) is no longer registered; "
                "register it again with 'qkv lti add-platform' and the score will be sent."
            )
        token = self.tokens.token(platform, (SCORE_SCOPE,))
        url = scores_url(entry.lineitem_url)
        try:
            response = self.client.post(
                url,
                content=json.dumps(entry.document),
                headers={"Authorization": f"Bearer {token}", "Content-Type": SCORE_TYPE},
                timeout=15.0,
            )
        except httpx.HTTPError as error:
            raise ServiceUnavailable(
                f"The LMS at {url} could not be reached ({type(error).__name__})."
            ) from None
        if response.status_code == 401:
            self.tokens.forget(platform)
        status = response.status_code
        if 400 <= status < 500 and status not in _RETRIED_4XX:
            raise ScoreRefused(f"The LMS refused the score ({status}): {lms_sentence(response)}")
        if not 200 <= status < 300:
            raise ServiceUnavailable(
                f"The LMS at {url} answered {response.status_code}: {response.text[:200]!r}."
            )
