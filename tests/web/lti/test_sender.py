"""The background score sender keeps running whatever one round of it meets."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import httpx
from sqlalchemy import text

from qkv.store.lti.links import LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.lti.platforms import LtiPlatforms
from qkv.store.sql.database import Database
from qkv.web.lti.sender import ScoreSender
from qkv.web.lti.service_tokens import ServiceTokens
from qkv.web.lti.tool_keys import ToolKey
from tests.time_scale import scaled

LEARNER = "a" * 36


class _Seen(logging.Handler):
    """Sets ``event`` when the sender logs a failed round."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if record.exc_info:
            self.event.set()


def test_a_round_that_fails_unexpectedly_leaves_the_sender_running(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'scores.sqlite3'}")
    links, outbox = LtiLinks(database), ScoreOutbox(database)
    links.remember_line_item(
        LEARNER, "L4.1", "https://lms.example", "client", "1", "https://lms.example/li/1"
    )
    assert outbox.enqueue(links.line_item(LEARNER, "L4.1"), 2, {"scoreGiven": 2})
    with database.write() as conn:  # a row the store cannot turn into an entry: its time is no time
        conn.execute(text("UPDATE lti_score_outbox SET created_at = 'no time'"))
    seen = _Seen()
    logger = logging.getLogger("qkv.web.lti")
    logger.addHandler(seen)
    with httpx.Client() as client:
        platforms = LtiPlatforms(database)
        tokens = ServiceTokens(client, ToolKey(database))
        sender = ScoreSender(outbox, platforms, tokens, client, poll_s=0.05)
        try:
            sender.start()
            assert seen.event.wait(scaled(30)), "the sender never reported the failed round"
            assert sender._thread is not None and sender._thread.is_alive()
            assert any("tries again" in message for message in seen.messages)
        finally:
            sender.stop()
            logger.removeHandler(seen)
            database.close()
    assert not sender._thread.is_alive()
