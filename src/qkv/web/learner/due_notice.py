"""What a learner's pages say of a lesson's dates: due when, how long is left, late, or closed.

The chapter index and each lesson page ask ``due_notice(request, lesson_id)`` (a template global installed
here): the dates in force for the learner in their course (an extension included), and where the moment
stands now. The page writes each time as ``<time datetime="...Z">`` in UTC; ``static/js/due-dates.js``
(imported by the pages' scripts) shows it in the learner's own time zone, with the time left ("due in 2
days"). After the close the page says, before
the learner starts, that work is still saved and graded for practice but earns nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fastapi import FastAPI, Request

from qkv.store.instructor.due_dates import DatesInForce, Standing
from qkv.store.sql.clock import utc_now
from qkv.web.http.security import COOKIE_NAME
from qkv.web.services import Services
from qkv.web.solution_credit import credit_words


@dataclass(frozen=True)
class DueNotice:
    """A lesson's dates for one learner, as a page shows them."""

    due: str  # ISO 8601 UTC, for <time datetime>
    close: str | None
    standing: str  # a Standing value: "on time", "late", "closed"
    late_work: str  # what late work earns, in words: "counts in full", "counts at half", "earns nothing"
    extended: bool


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def notice(dates: DatesInForce, now: datetime) -> DueNotice:
    """The notice of ``dates`` at ``now`` (naive UTC).

    Examples
    --------
    >>> dates = DatesInForce("L4.1", datetime(2026, 1, 10), None, 0.5, extended=False)
    >>> notice(dates, datetime(2026, 1, 11)).standing, notice(dates, datetime(2026, 1, 11)).late_work
    ('late', 'counts at half')
    """
    close = None if dates.close_at is None else _iso(dates.close_at)
    standing = dates.standing_at(now)
    return DueNotice(
        _iso(dates.due_at), close, standing.value, credit_words(dates.late_credit), dates.extended
    )


def due_notice_for(services: Services, learner_id: str, lesson_id: str, now: datetime) -> DueNotice | None:
    """The notice of the lesson for the learner: of the course (of theirs) whose dates for it end soonest
    (None: no course of theirs gives the lesson a due date)."""
    found = []
    for course_id in services.store.courses.courses_of(learner_id):
        dates = services.store.due_dates.in_force(course_id, learner_id, lesson_id)
        if dates is not None:
            found.append(dates)
    if not found:
        return None
    return notice(min(found, key=lambda d: d.due_at), now)


def install(app: FastAPI, services: Services) -> None:
    """Add ``due_notice(request, lesson_id)`` to the templates."""

    def due_notice(request: Request, lesson_id: str) -> DueNotice | None:
        # Read without making a learner: a first visit (no genuine cookie) belongs to no course yet.
        identity = services.identity
        learner_id = identity.signed_in_learner(request) or identity.unsign(request.cookies.get(COOKIE_NAME))
        if learner_id is None:
            return None
        return due_notice_for(services, learner_id, lesson_id, utc_now())

    services.templates.env.globals["due_notice"] = due_notice
    assert Standing.CLOSED.value == "closed"  # the templates compare with the values


__all__ = ["DueNotice", "credit_words", "due_notice_for", "install", "notice"]
