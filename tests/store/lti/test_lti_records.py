"""The LTI tables on SQLite and PostgreSQL: registrations, the shared tool key, login states used once,
nonces used once, line items (a refused one parks its scores; one course's line item of a lesson is made
by one server at a time), and the score outbox's order, retries and claims."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import text

from qkv.store.lti.keys import StoredKey, tool_key
from qkv.store.lti.links import LtiLinks
from qkv.store.lti.logins import LtiLogins, StateOutcome
from qkv.store.lti.outbox import ScoreOutbox
from qkv.store.lti.platforms import LtiPlatforms
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from tests.time_scale import scaled

LEARNER = "a" * 36
LINE = "https://lms.example/lineitems/1"


@pytest.fixture
def database(database_url: str) -> Database:
    opened = Database(database_url)
    yield opened  # type: ignore[misc]
    opened.close()


def test_a_platform_is_registered_once_and_found_by_issuer(database: Database) -> None:
    platforms = LtiPlatforms(database)
    platforms.add("https://lms.example", "c1", ["d1", "d1", "d2"], "https://a", "https://t", "https://j")
    platforms.add("https://lms.example", "c2", ["d3"], "https://a", "https://t", "https://j")
    assert platforms.find("https://lms.example", "c1").deployment_ids == ("d1", "d2")  # type: ignore[union-attr]
    assert [p.client_id for p in platforms.for_issuer("https://lms.example")] == ["c1", "c2"]
    with pytest.raises(ValueError, match="is registered already"):
        platforms.add("https://lms.example", "c1", ["d1"], "https://a", "https://t", "https://j")
    assert platforms.remove("https://lms.example", "c2") == 1
    assert [p.client_id for p in platforms.all()] == ["c1"]


def test_every_server_gets_the_first_stored_tool_key(database_url: str) -> None:
    first, second = Database(database_url), Database(database_url)
    try:
        made = tool_key(first, lambda: StoredKey("k1", "pem-1"))
        assert tool_key(second, lambda: StoredKey("k2", "pem-2")) == made
    finally:
        first.close(), second.close()


def test_a_login_state_is_used_once_and_expires(database: Database) -> None:
    logins = LtiLogins(database)
    state, nonce = logins.begin("https://lms.example", "c", "https://qkv.example/lessons/L4.1")
    used = logins.consume(state)
    assert (used.outcome, used.nonce, used.client_id) == (StateOutcome.FRESH, nonce, "c")
    assert logins.consume(state).outcome is StateOutcome.USED
    old, _ = logins.begin("https://lms.example", "c", "x", lifetime=timedelta(seconds=-1))
    assert logins.consume(old).outcome is StateOutcome.EXPIRED
    assert logins.consume("never-issued").outcome is StateOutcome.UNKNOWN


def test_a_nonce_is_accepted_once(database: Database) -> None:
    logins = LtiLogins(database)
    later = utc_now() + timedelta(minutes=5)
    assert logins.use_nonce("https://lms.example", "n", later)
    assert not logins.use_nonce("https://lms.example", "n", later)
    assert logins.use_nonce("https://other.example", "n", later)  # nonces are per issuer


def _queued(database: Database, *scores: int) -> ScoreOutbox:
    links, outbox = LtiLinks(database), ScoreOutbox(database)
    links.remember_line_item(LEARNER, "L4.1", "https://lms.example", "c", "sub-1", LINE)
    for score in scores:
        outbox.enqueue(links.line_item(LEARNER, "L4.1"), score, {"scoreGiven": score})  # type: ignore[arg-type]
    return outbox


def test_only_a_change_of_score_is_queued(database: Database) -> None:
    outbox = _queued(database, 1, 1, 2, 2, 1)
    assert [entry.document["scoreGiven"] for entry in outbox.waiting()] == [1, 2, 1]


def test_scores_are_claimed_in_order_one_at_a_time_per_line_item(database: Database) -> None:
    outbox = _queued(database, 1, 2)
    first = outbox.claim()
    assert [entry.document["scoreGiven"] for entry in first] == [1]
    assert outbox.claim() == []  # held by its claim, and the second waits behind it
    outbox.delivered(first[0].id)
    assert [entry.document["scoreGiven"] for entry in outbox.claim()] == [2]


def test_a_failed_score_waits_with_back_off_and_is_never_lost(database: Database) -> None:
    outbox = _queued(database, 1, 2)
    (entry,) = outbox.claim()
    now = utc_now()
    retry_at = outbox.failed(entry.id, "The LMS answered 503.", now)
    assert retry_at == now + timedelta(seconds=5)
    assert outbox.claim(now + timedelta(seconds=4)) == []  # not yet, and the second may not overtake it
    again = outbox.claim(now + timedelta(seconds=6))
    assert [e.document["scoreGiven"] for e in again] == [1]
    assert outbox.failed(again[0].id, "down", now) == now + timedelta(seconds=10)
    assert [e.last_error for e in outbox.waiting()] == ["down", None]


def test_an_abandoned_claim_is_taken_over_after_its_lease(database: Database) -> None:
    outbox = _queued(database, 1, 2)
    assert len(outbox.claim(lease=timedelta(seconds=-1))) == 1  # a lease already over: its sender died
    (again,) = outbox.claim(lease=timedelta(minutes=5))
    assert again.document["scoreGiven"] == 1  # taken over, and the second still waits behind it
    assert outbox.claim(utc_now() + timedelta(hours=2)) == []  # a held lease is real time, whatever is due


def test_a_new_line_item_starts_unscored(database: Database) -> None:
    links = LtiLinks(database)
    outbox = _queued(database, 3)
    links.remember_line_item(LEARNER, "L4.1", "https://lms.example", "c", "sub-1", LINE + "-new")
    assert outbox.enqueue(links.line_item(LEARNER, "L4.1"), 3, {"scoreGiven": 3})  # type: ignore[arg-type]


def test_timestamps_are_whole_seconds_and_strictly_newer_per_line_item(database: Database) -> None:
    links, outbox = LtiLinks(database), ScoreOutbox(database)
    links.remember_line_item(LEARNER, "L4.1", "https://lms.example", "c", "sub-1", LINE)
    for score in (1, 2, 3):  # queued within one second or two: each still a second after the last
        outbox.enqueue(links.line_item(LEARNER, "L4.1"), score, lambda at: {"at": at.isoformat()})  # type: ignore[arg-type]
    stamps = [entry.document["at"] for entry in outbox.waiting()]
    assert all("." not in stamp for stamp in stamps)  # whole seconds
    assert stamps == sorted(set(stamps))  # strictly increasing


def test_a_parked_score_holds_nothing_back_and_is_never_claimed_again(database: Database) -> None:
    outbox = _queued(database, 1, 2)
    (first,) = outbox.claim()
    outbox.park(first.id, "The LMS refused the score (409): not newer.")
    assert [e.document["scoreGiven"] for e in outbox.waiting()] == [2]
    (second,) = outbox.claim()
    assert second.document["scoreGiven"] == 2
    outbox.delivered(second.id)
    assert outbox.claim(utc_now() + timedelta(hours=2)) == []
    (parked,) = outbox.parked()
    assert parked.parked_at is not None and "409" in (parked.last_error or "")


@pytest.mark.parametrize("stored", ["{broken", "[1, 2]", "null"])
def test_a_score_whose_stored_document_cannot_be_read_is_parked_and_holds_nothing_back(
    database: Database, stored: str
) -> None:
    outbox = _queued(database, 1, 2)
    first_id = outbox.waiting()[0].id
    with database.write() as conn:  # damaged outside qkv: no JSON object
        conn.execute(
            text("UPDATE lti_score_outbox SET score_json = :s WHERE id = :i"), {"s": stored, "i": first_id}
        )
    assert [e.document for e in outbox.waiting()] == [{}, {"scoreGiven": 2}]  # listed, not a failure
    (second,) = outbox.claim()  # the damaged score is parked, the next one claimed in the same round
    assert second.document == {"scoreGiven": 2}
    (parked,) = outbox.parked()
    assert parked.id == first_id and parked.document == {}
    assert "is not a JSON object" in (parked.last_error or "") and repr(stored[:60]) in (
        parked.last_error or ""
    )


def test_a_line_item_with_a_refusal_parks_every_score_and_loses_it_when_moved(database: Database) -> None:
    links, outbox = LtiLinks(database), ScoreOutbox(database)
    why = "Not sent: the launch of X1.2 gave lesson X1.1's column."
    links.remember_line_item(LEARNER, "X1.2", "i", "c", "s", LINE, "course-1", why)
    item = links.line_item(LEARNER, "X1.2", "course-1")
    assert item is not None and item.refusal == why
    assert outbox.enqueue(item, 0, {"scoreGiven": 0}) and outbox.enqueue(item, 2, {"scoreGiven": 1})
    assert outbox.claim() == [] and outbox.waiting() == []  # never sent
    assert [(e.document["scoreGiven"], e.last_error) for e in outbox.parked()] == [
        (1, why),
        (0, why),
    ]  # newest first
    links.remember_line_item(LEARNER, "X1.2", "i", "c", "s", LINE + "-own", "course-1")  # its own column
    moved = links.line_item(LEARNER, "X1.2", "course-1")
    assert moved is not None and moved.refusal is None
    assert outbox.enqueue(moved, 2, {"scoreGiven": 1}) and len(outbox.claim()) == 1


def test_an_exclusive_key_is_held_by_one_at_a_time(database: Database) -> None:
    """The lock of a course's line item for a lesson: a second holder waits until the first lets go — on
    PostgreSQL another server's store on the same database, on SQLite (one server) another thread."""
    first = LtiLinks(database)
    second = LtiLinks(database) if database.engine.dialect.name == "postgresql" else first
    order: list[str] = []
    inside = threading.Event()

    def other() -> None:
        inside.wait(scaled(30))
        with second.exclusive("lms/c/1/lineitems X1.1"):
            order.append("second")

    waiter = threading.Thread(target=other)
    waiter.start()
    with first.exclusive("lms/c/1/lineitems X1.1"):
        inside.set()
        with second.exclusive("lms/c/1/lineitems X1.2"):  # another lesson's key is free
            order.append("other key")
        assert not _finished(waiter, 0.5)  # still waiting: a lock that let it in fails here
        order.append("first")
    waiter.join(scaled(30))
    assert order == ["other key", "first", "second"]


def _finished(thread: threading.Thread, seconds: float) -> bool:
    thread.join(seconds)
    return not thread.is_alive()


def test_a_registration_link_is_used_once_and_expires(database: Database) -> None:
    from qkv.store.lti.registrations import LinkState, RegistrationLinks

    links = RegistrationLinks(database)
    token, old = links.issue(timedelta(hours=1)), links.issue(timedelta(seconds=-1))
    assert (links.check(token), links.check(old), links.check("x" * 300)) == (
        LinkState.FRESH,
        LinkState.EXPIRED,
        LinkState.UNKNOWN,
    )
    assert not links.use(old, "https://lms.example")
    assert links.use(token, "https://lms.example") and not links.use(token, "https://lms.example")
    assert links.check(token) is LinkState.USED


def test_a_parked_latest_score_is_sent_again_at_the_next_change_or_launch(database: Database) -> None:
    links = LtiLinks(database)
    outbox = _queued(database, 1)
    (entry,) = outbox.claim()
    outbox.park(entry.id, "The LMS refused the score (409): not newer.")
    item = links.line_item(LEARNER, "L4.1")
    assert item is not None and item.last_score is None  # the LMS does not have it
    assert outbox.enqueue(item, 1, {"scoreGiven": 1})  # the same score queues again
    assert [e.document["scoreGiven"] for e in outbox.waiting()] == [1]
