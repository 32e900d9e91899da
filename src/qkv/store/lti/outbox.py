"""The outbox of scores for LMS line items (LTI AGS): never lost, sent in order, retried with back-off.

A change of a launched learner's score on a lesson is queued here in the same transaction that records
it as the line item's last score; senders (one per server) claim the oldest waiting score of each learner
and line item with a lease, post it, and mark it delivered or put it back with a later attempt time. A
score is only claimed when every older score of its learner and line item has been delivered (or parked:
refused by the LMS with a 4xx, which sending again would not change), so scores reach the LMS in the order
they were earned, and one refused score does not hold back the later ones.

    >>> from qkv.store.sql.database import Database
    >>> from qkv.store.lti.links import LtiLinks
    >>> database = Database("sqlite://")
    >>> links, outbox = LtiLinks(database), ScoreOutbox(database)
    >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms.example/li/1")
    >>> item = links.line_item("a" * 36, "X1.1")
    >>> outbox.enqueue(item, 1, {"scoreGiven": 1}), outbox.enqueue(links.line_item("a" * 36, "X1.1"), 1, {})
    (True, False)
    >>> [entry.document for entry in outbox.claim()]
    [{'scoreGiven': 1}]
    >>> database.close()
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, case, func, insert, or_, select, update

from qkv.store.lti.links import LineItem
from qkv.store.sql.clock import utc_now
from qkv.store.sql.database import Database
from qkv.store.sql.tables import LtiLineItem, LtiScoreOutbox

_OUTBOX: Table = LtiScoreOutbox.__table__  # type: ignore[assignment]
_LINE_ITEMS: Table = LtiLineItem.__table__  # type: ignore[assignment]
FIRST_RETRY = timedelta(seconds=5)
LONGEST_WAIT = timedelta(hours=1)
CLAIM_LEASE = timedelta(minutes=2)  # a sender that dies mid-post frees its scores after this
CLAIM_SCAN = 500


@dataclass(frozen=True)
class OutboxEntry:
    """One score for one line item."""

    id: int
    learner_id: str
    lesson_id: str
    issuer: str
    client_id: str
    lineitem_url: str
    document: dict[str, Any]
    created_at: datetime
    attempts: int
    next_attempt_at: datetime
    last_error: str | None
    course_id: str | None = None  # the line item's course (None: a launch that named none)
    parked_at: datetime | None = None


def retry_delay(attempts: int) -> timedelta:
    """How long to wait after ``attempts`` failed posts: 5 s, doubling, at most an hour.

    Examples
    --------
    >>> [int(retry_delay(n).total_seconds()) for n in (1, 2, 3, 12)]
    [5, 10, 20, 3600]
    """
    seconds = FIRST_RETRY.total_seconds() * 2 ** min(max(attempts - 1, 0), 20)
    return min(timedelta(seconds=seconds), LONGEST_WAIT)


ScoreDocument = dict[str, Any] | Callable[[datetime], dict[str, Any]]


def score_timestamp(now: datetime, previous: datetime | None) -> datetime:
    """A score's timestamp: ``now`` to the whole second, at least a second after ``previous``.

    Examples
    --------
    >>> from datetime import datetime
    >>> score_timestamp(datetime(2026, 1, 1, 9, 0, 0, 700000), None)
    datetime.datetime(2026, 1, 1, 9, 0)
    >>> score_timestamp(datetime(2026, 1, 1, 9, 0, 0, 700000), datetime(2026, 1, 1, 9, 0, 0))
    datetime.datetime(2026, 1, 1, 9, 0, 1)
    """
    at = now.replace(microsecond=0)
    if previous is not None and at <= previous:
        at = previous.replace(microsecond=0) + timedelta(seconds=1)
    return at


def _line_item_is(item: LineItem) -> tuple[Any, ...]:
    return (
        _LINE_ITEMS.c.learner_id == item.learner_id,
        _LINE_ITEMS.c.lesson_id == item.lesson_id,
        _LINE_ITEMS.c.course_id == item.course_id,
        _LINE_ITEMS.c.lineitem_url == item.lineitem_url,
    )


def _new_row(item: LineItem, document: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "learner_id": item.learner_id,
        "lesson_id": item.lesson_id,
        "issuer": item.issuer,
        "client_id": item.client_id,
        "lineitem_url": item.lineitem_url,
        "course_id": item.course_id or None,
        "score_json": json.dumps(document, default=str),
        "created_at": now,
        "attempts": 0,
        "next_attempt_at": now,
    }


def _document(text: str) -> dict[str, Any] | None:
    """A row's score document, or None where its text is not a JSON object (a row damaged outside qkv:
    it is parked on its next claim rather than failing every claim)."""
    try:
        document = json.loads(text)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _unreadable(row: Any) -> str:
    return (
        f"The score document stored for this score is not a JSON object ({row.score_json[:60]!r}), so it "
        "was set aside unsent; the learner's next change or launch sends their score again."
    )


def _entry(row: Any, document: dict[str, Any] | None = None) -> OutboxEntry:
    """The row as an entry, with its document (read from the row unless given); a document that cannot
    be read shows as {} (``claim`` parks such rows)."""
    return OutboxEntry(
        id=int(row.id),
        learner_id=row.learner_id,
        lesson_id=row.lesson_id,
        issuer=row.issuer,
        client_id=row.client_id,
        lineitem_url=row.lineitem_url,
        document=document if document is not None else _document(row.score_json) or {},
        created_at=row.created_at,
        attempts=int(row.attempts),
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        course_id=row.course_id,
        parked_at=row.parked_at,
    )


class ScoreOutbox:
    """Scores waiting for their LMS, and the delivered ones.

    Parameters
    ----------
    database : Database
        The database the servers share.
    """

    def __init__(self, database: Database) -> None:
        self.database = database

    def enqueue(
        self, item: LineItem, solved: int, document: ScoreDocument, *, worked_at: datetime | None = None
    ) -> bool:
        """Queue a score unless ``solved`` is already the line item's last queued score; a line item with a
        refusal (another lesson's column) gets the score parked at once, with that sentence.

        The line item's last score, its timestamp and the queued row are written in one transaction, so
        of two servers recording the same change only one queues it. The score's timestamp is the time of
        the work it is for (``worked_at``; now when not given), in whole seconds, so an LMS's own late rules
        judge the work, not its sending; but always at least a second after the line item's previous one:
        an LMS that keeps timestamps to the second (Moodle) refuses a score that is not newer than the last
        it stored (a regrade's score for old work is stamped so, and its comment says whether it was late).

        Parameters
        ----------
        item : LineItem
            The learner's line item for the lesson, as read before (its URL must still be the current one).
        solved : int
            The score as the line item keeps it: exercises solved, in halves (a solve after the reference
            solution may earn half its credit), so a change of credit is a change of score; the caller may
            give a negative number to a state with nothing solved (the web's ``InProgress``).
        document : dict or callable
            The AGS score document to post, or ``timestamp -> document`` to make it with the timestamp
            chosen here (UTC, naive, whole seconds).
        worked_at : datetime, optional
            When the work the score is for was done (UTC, naive): the timestamp, if newer than the last.

        Returns
        -------
        bool
            Whether a score was queued.

        Examples
        --------
        >>> from qkv.store.lti.links import LtiLinks
        >>> database = Database("sqlite://")
        >>> links, outbox = LtiLinks(database), ScoreOutbox(database)
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms.example/li/1")
        >>> [outbox.enqueue(links.line_item("a" * 36, "X1.1"), n, lambda at: {"at": at}) for n in (0, 0, 1)]
        [True, False, True]
        >>> first, second = (entry.document["at"] for entry in outbox.waiting())
        >>> first < second  # strictly newer, to the second, even when both are queued in one second
        True
        >>> database.close()
        """
        now = utc_now()
        for _ in range(3):  # another server may stamp the same line item between our read and write
            with self.database.write() as conn:
                previous = conn.execute(
                    select(_LINE_ITEMS.c.last_score_at).where(*_line_item_is(item))
                ).scalar_one_or_none()
                at = score_timestamp(worked_at or now, previous)
                changed = conn.execute(
                    update(_LINE_ITEMS)
                    .where(
                        *_line_item_is(item),
                        or_(_LINE_ITEMS.c.last_score.is_(None), _LINE_ITEMS.c.last_score != solved),
                        or_(_LINE_ITEMS.c.last_score_at.is_(None), _LINE_ITEMS.c.last_score_at < at),
                    )
                    .values(last_score=solved, last_score_at=at)
                )
                if changed.rowcount == 1:
                    body = document(at) if callable(document) else document
                    row = _new_row(item, body, now)
                    if item.refusal:  # never sent: kept, with why, for the instructor's LMS page
                        row |= {"parked_at": now, "last_error": item.refusal[:2000]}
                    conn.execute(insert(_OUTBOX).values(**row))
                    return True
            if not self._stamped_meanwhile(item, solved, at):
                return False
        return False

    def _stamped_meanwhile(self, item: LineItem, solved: int, at: datetime) -> bool:
        """Whether a refused update was only beaten on the timestamp (so trying again may queue it)."""
        with self.database.read() as conn:
            row = conn.execute(
                select(_LINE_ITEMS.c.last_score, _LINE_ITEMS.c.last_score_at).where(*_line_item_is(item))
            ).first()
        return row is not None and row.last_score != solved and row.last_score_at is not None

    def claim(self, due_by: datetime | None = None, lease: timedelta = CLAIM_LEASE) -> list[OutboxEntry]:
        """Claim the scores due by ``due_by`` (default now): for each learner and line item, its oldest
        waiting score, when due.

        A claimed score is held for ``lease`` of real time (whatever ``due_by`` says); if its sender neither
        delivers it nor puts it back by then, another sender may claim it.

        Parameters
        ----------
        due_by : datetime, optional
            Claim the scores whose next attempt is due by then (UTC, naive); now by default.
        lease : timedelta
            How long the claim holds.

        Returns
        -------
        list of OutboxEntry
            The claimed scores, at most one per learner and line item. A score whose stored document
            cannot be read is parked with a sentence saying so instead, and the next one of its line
            item can be claimed.

        Examples
        --------
        >>> ScoreOutbox(Database("sqlite://")).claim()
        []
        """
        now = utc_now()
        due_by = due_by or now
        with self.database.read() as conn:
            rows = conn.execute(
                select(_OUTBOX)
                .where(_OUTBOX.c.sent_at.is_(None), _OUTBOX.c.parked_at.is_(None))
                .order_by(_OUTBOX.c.id)
                .limit(CLAIM_SCAN)
            ).all()
        queues: dict[tuple[str, str], list[Any]] = {}
        for row in rows:
            queues.setdefault((row.learner_id, row.lineitem_url), []).append(row)
        claimed = []
        for queue in queues.values():
            for row in queue:  # the oldest, or the next behind a damaged one just parked
                free = row.claimed_until is None or row.claimed_until <= now
                if row.next_attempt_at > due_by or not free or not self._take(row.id, now + lease, now):
                    break
                if (document := _document(row.score_json)) is not None:
                    claimed.append(_entry(row, document))
                    break
                self.park(row.id, _unreadable(row))
        return claimed

    def _take(self, entry_id: int, until: datetime, now: datetime) -> bool:
        """Claim one waiting score until ``until``, unless another sender holds it."""
        with self.database.write() as conn:
            taken = conn.execute(
                update(_OUTBOX)
                .where(
                    _OUTBOX.c.id == entry_id,
                    _OUTBOX.c.sent_at.is_(None),
                    _OUTBOX.c.parked_at.is_(None),
                    or_(_OUTBOX.c.claimed_until.is_(None), _OUTBOX.c.claimed_until <= now),
                )
                .values(claimed_until=until)
            )
        return bool(taken.rowcount == 1)

    def delivered(self, entry_id: int) -> None:
        """Mark a score delivered: it is never sent again."""
        with self.database.write() as conn:
            conn.execute(
                update(_OUTBOX).where(_OUTBOX.c.id == entry_id).values(sent_at=utc_now(), claimed_until=None)
            )

    def failed(self, entry_id: int, error: str, now: datetime | None = None) -> datetime:
        """Put a score back after a failed post.

        Parameters
        ----------
        entry_id : int
            The score's id.
        error : str
            Why the post failed (the instructor's page shows it).
        now : datetime, optional
            When it failed; now by default.

        Returns
        -------
        datetime
            When the score will be tried next (``retry_delay`` after ``now``).
        """
        now = now or utc_now()
        with self.database.write() as conn:
            attempts = (
                conn.execute(select(_OUTBOX.c.attempts).where(_OUTBOX.c.id == entry_id)).scalar_one() + 1
            )
            at = now + retry_delay(attempts)
            conn.execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == entry_id)
                .values(attempts=attempts, next_attempt_at=at, claimed_until=None, last_error=error[:2000])
            )
        return at

    def park(self, entry_id: int, error: str) -> None:
        """Set a score aside for good: the LMS refused it (a 4xx), so sending it again would be refused
        again. It is never claimed again, and no longer holds back the later scores of its learner and
        line item; the instructor's LTI page shows it with the LMS's sentence. When it was the line item's
        latest score, the line item forgets it as its last one, so the learner's next launch or change
        sends their score again (with a newer timestamp) instead of taking the LMS to have it.

        Examples
        --------
        >>> from qkv.store.lti.links import LtiLinks
        >>> database = Database("sqlite://")
        >>> links, outbox = LtiLinks(database), ScoreOutbox(database)
        >>> links.remember_line_item("a" * 36, "X1.1", "i", "c", "s", "https://lms.example/li/1")
        >>> for n in (0, 1):
        ...     _ = outbox.enqueue(links.line_item("a" * 36, "X1.1"), n, {"scoreGiven": n})
        >>> first = outbox.claim()[0]
        >>> outbox.park(first.id, "The LMS answered 409: the score is not newer.")
        >>> [entry.document for entry in outbox.claim()]  # the next score is no longer held back
        [{'scoreGiven': 1}]
        >>> [entry.last_error for entry in outbox.parked()]
        ['The LMS answered 409: the score is not newer.']
        >>> database.close()
        """
        with self.database.write() as conn:
            row = conn.execute(select(_OUTBOX).where(_OUTBOX.c.id == entry_id)).first()
            if row is None:
                return
            conn.execute(
                update(_OUTBOX)
                .where(_OUTBOX.c.id == entry_id)
                .values(parked_at=utc_now(), claimed_until=None, last_error=error[:2000])
            )
            newer = conn.execute(
                select(func.count())
                .select_from(_OUTBOX)
                .where(
                    _OUTBOX.c.learner_id == row.learner_id,
                    _OUTBOX.c.lineitem_url == row.lineitem_url,
                    _OUTBOX.c.id > entry_id,
                )
            ).scalar_one()
            if newer == 0:  # the LMS lacks the learner's latest score: the next launch or change sends it
                conn.execute(
                    update(_LINE_ITEMS)
                    .where(
                        _LINE_ITEMS.c.learner_id == row.learner_id,
                        _LINE_ITEMS.c.lesson_id == row.lesson_id,
                        _LINE_ITEMS.c.course_id == (row.course_id or ""),
                        _LINE_ITEMS.c.lineitem_url == row.lineitem_url,
                    )
                    .values(last_score=None)
                )

    def parked(self, limit: int = 200, course_id: str | None = None) -> list[OutboxEntry]:
        """The scores the LMS refused, newest first (at most ``limit``; of one course's line items, if
        ``course_id`` is given: the limit counts that course's only).

        Examples
        --------
        >>> outbox = ScoreOutbox(Database("sqlite://"))
        >>> outbox.parked(), outbox.parked(course_id="c1")
        ([], [])
        """
        query = select(_OUTBOX).where(_OUTBOX.c.parked_at.is_not(None))
        if course_id is not None:
            query = query.where(_OUTBOX.c.course_id == course_id)
        with self.database.read() as conn:
            rows = conn.execute(query.order_by(_OUTBOX.c.id.desc()).limit(limit))
            return [_entry(row) for row in rows]

    def waiting(self) -> list[OutboxEntry]:
        """Every score not yet delivered nor parked, oldest first.

        Examples
        --------
        >>> ScoreOutbox(Database("sqlite://")).waiting()
        []
        """
        with self.database.read() as conn:
            rows = conn.execute(
                select(_OUTBOX)
                .where(_OUTBOX.c.sent_at.is_(None), _OUTBOX.c.parked_at.is_(None))
                .order_by(_OUTBOX.c.id)
            )
            return [_entry(row) for row in rows]

    def delivered_count(self, course_id: str | None = None) -> int:
        """How many scores reached their LMS (of one course's line items, if given).

        Examples
        --------
        >>> outbox = ScoreOutbox(Database("sqlite://"))
        >>> outbox.delivered_count(), outbox.delivered_count("c1")
        (0, 0)
        """
        query = select(func.count()).select_from(_OUTBOX).where(_OUTBOX.c.sent_at.is_not(None))
        if course_id is not None:
            query = query.where(_OUTBOX.c.course_id == course_id)
        with self.database.read() as conn:
            count = conn.execute(query)
            return int(count.scalar_one())

    def figures(self, now: datetime | None = None) -> OutboxFigures:
        """The outbox at a glance, for the metrics: scores waiting, sent and given up, and the oldest wait.

        Examples
        --------
        >>> ScoreOutbox(Database("sqlite://")).figures()
        OutboxFigures(pending=0, sent=0, failed=0, oldest_pending_age_s=None)
        """
        now = now or utc_now()
        sent, parked = _OUTBOX.c.sent_at.is_not(None), _OUTBOX.c.parked_at.is_not(None)
        state = case((sent, "sent"), (parked, "failed"), else_="pending")
        with self.database.read() as conn:
            counts: dict[str, int] = dict(conn.execute(select(state, func.count()).group_by(state)).all())
            oldest: datetime | None = conn.execute(
                select(func.min(_OUTBOX.c.created_at)).where(~sent, ~parked)
            ).scalar()
        age = None if oldest is None else max(0.0, (now - oldest).total_seconds())
        return OutboxFigures(counts.get("pending", 0), counts.get("sent", 0), counts.get("failed", 0), age)


@dataclass(frozen=True)
class OutboxFigures:
    """Scores waiting for their LMS (``pending``, retried ones included), ``sent``, and given up on
    (``failed``: parked for an instructor), with the age of the oldest waiting one in seconds."""

    pending: int
    sent: int
    failed: int
    oldest_pending_age_s: float | None


__all__ = ["OutboxEntry", "OutboxFigures", "ScoreDocument", "ScoreOutbox", "retry_delay", "score_timestamp"]
