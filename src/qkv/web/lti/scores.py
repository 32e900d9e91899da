"""A launched learner's score on a lesson, as the LTI AGS score document, and the hook that queues it.

The score is the exercises solved over the exercises of the lesson (those that count toward done, as the
lesson page counts them): ``activityProgress`` is Completed when all are solved, InProgress when some
are and Started before that; ``gradingProgress`` is FullyGraded when all are solved, else Pending.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from qkv.store import StoreError
from qkv.store.lti_links import LineItem, LtiLinks
from qkv.store.lti_outbox import ScoreOutbox

log = logging.getLogger("qkv.web.lti")


def score_document(
    subject: str, solved: float, total: int, at: datetime, comment: str | None = None
) -> dict[str, Any]:
    """The AGS score a line item receives (``comment``: what the LMS shows beside it, if anything).

    Examples
    --------
    >>> from datetime import datetime
    >>> document = score_document("s1", 3, 11, datetime(2026, 1, 2, 3, 4, 5))
    >>> [document[key] for key in ("scoreGiven", "activityProgress", "gradingProgress", "timestamp")]
    [3, 'InProgress', 'Pending', '2026-01-02T03:04:05.000000+00:00']
    >>> score_document("s1", 11, 11, datetime(2026, 1, 2))["gradingProgress"]
    'FullyGraded'
    """
    complete = total > 0 and solved >= total
    activity = "Completed" if complete else "InProgress" if solved > 0 else "Started"
    document: dict[str, Any] = {
        "userId": subject,
        "scoreGiven": solved,
        "scoreMaximum": max(total, 1),
        "activityProgress": activity,
        "gradingProgress": "FullyGraded" if complete else "Pending",
        "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00",
    }
    if comment:
        document["comment"] = comment
    return document


class ScoreHook:
    """Queues a score for the LMS when a launched learner's score on a lesson changes.

    Parameters
    ----------
    links : LtiLinks
        Where each learner's scores go.
    outbox : ScoreOutbox
        The scores waiting to be sent.
    wake : callable
        Tells the sender that a score is waiting.
    """

    def __init__(self, links: LtiLinks, outbox: ScoreOutbox, wake: Any = None) -> None:
        self.links = links
        self.outbox = outbox
        self.wake = wake

    def lesson_changed(
        self, learner_id: str, lesson_id: str, solved: float, total: int, note: str | None = None
    ) -> bool:
        """Queue the learner's score on each of their line items of the lesson (one per course they launched
        it from) where it changed; whether any was queued.

        A failure here is logged, not raised: the learner's own work is already saved, and the next change
        queues the score again.

        Parameters
        ----------
        learner_id, lesson_id : str
            Whose score, on which lesson.
        solved : float
            Exercises solved, a solve after the reference solution counted at the instructor's credit
            (half with the default credit).
        total : int
            Exercises that count, in the lesson.
        note : str, optional
            The score's comment for the LMS (solves after the reference solution, say).

        Returns
        -------
        bool
            Whether a score was queued.

        Examples
        --------
        >>> from qkv.store.database import Database
        >>> database = Database("sqlite://")
        >>> hook = ScoreHook(LtiLinks(database), ScoreOutbox(database))
        >>> hook.lesson_changed("a" * 36, "X1.1", 1, 11)  # never launched with a line item: nothing to send
        False
        >>> hook.links.remember_line_item("a" * 36, "X1.1", "i", "c", "sub-1", "https://lms.example/li/1")
        >>> hook.lesson_changed("a" * 36, "X1.1", 1, 11), hook.lesson_changed("a" * 36, "X1.1", 1, 11)
        (True, False)
        >>> database.close()
        """
        try:
            queued = False
            # One line item per course the learner launched this lesson from: each gets the score. A line
            # item keeps the last score in half exercises, a whole number either way.
            key = round(solved * 2)
            for item in self.links.line_items(learner_id, lesson_id):
                if item.last_score != key:
                    queued = self._queue(item, solved, key, total, note) or queued
            return queued
        except StoreError as error:
            log.warning("the LMS score of %s on %s could not be queued: %s", learner_id, lesson_id, error)
            return False

    def _queue(self, item: LineItem, solved: float, key: int, total: int, note: str | None) -> bool:
        from qkv.store.clock import utc_now

        document = score_document(item.subject, solved, total, utc_now(), note)
        queued = self.outbox.enqueue(item, key, document)
        if queued and self.wake is not None:
            self.wake()
        return queued
