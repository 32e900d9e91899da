"""A launched learner's score on a lesson, as the LTI AGS score document, and the hook that queues it.

The score is the lesson's points: the exercises solved over the exercises of the lesson (those that count
toward done, as the lesson page counts them), as ``scoreGiven`` over ``scoreMaximum``. Every score is
final as sent (``gradingProgress`` FullyGraded): Moodle and Canvas store no grade at all for any other
grading progress, so a partial score would never show in the gradebook. ``activityProgress`` says how far
the learner is (see ``activity_progress``), and the timestamp, in whole seconds, is always newer than the
line item's previous score (the outbox chooses it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from qkv.store import StoreError
from qkv.store.lti.links import LineItem, LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.web.learner.solution_credit import HelpPolicy

log = logging.getLogger("qkv.web.lti")


class ActivityProgress(StrEnum):
    """The AGS ``activityProgress`` values qkv sends."""

    STARTED = "Started"
    IN_PROGRESS = "InProgress"
    SUBMITTED = "Submitted"
    COMPLETED = "Completed"


def activity_progress(solved: float, total: int, attempted: bool) -> ActivityProgress:
    """How far the learner is: Completed when every exercise is solved; Submitted once some work counts
    (the learner may still hand in more); InProgress when they answered but solved nothing yet; Started
    when they only opened the lesson.

    Examples
    --------
    >>> [activity_progress(*case).value for case in ((0, 4, False), (0, 4, True), (1, 4, True), (4, 4, True))]
    ['Started', 'InProgress', 'Submitted', 'Completed']
    """
    if total > 0 and solved >= total:
        return ActivityProgress.COMPLETED
    if solved > 0:
        return ActivityProgress.SUBMITTED
    return ActivityProgress.IN_PROGRESS if attempted else ActivityProgress.STARTED


def score_document(
    subject: str,
    solved: float,
    total: int,
    at: datetime,
    attempted: bool = False,
    comment: str | None = None,
) -> dict[str, Any]:
    """The AGS score a line item receives.

    Parameters
    ----------
    subject : str
        The LMS's id of the learner (``userId``).
    solved : float
        The lesson's points: exercises solved (a solve after the reference solution at the instructor's
        credit, half by default).
    total : int
        Exercises that count.
    at : datetime
        The score's timestamp (UTC, naive); sent to the whole second.
    attempted : bool
        Whether the learner answered anything yet (Started or InProgress while nothing is solved).
    comment : str, optional
        What the LMS shows beside the score (solves after the reference solution, say).

    Returns
    -------
    dict
        The ``application/vnd.ims.lis.v1.score+json`` document.

    Examples
    --------
    >>> from datetime import datetime
    >>> document = score_document("s1", 3, 11, datetime(2026, 1, 2, 3, 4, 5, 678))
    >>> [document[key] for key in ("scoreGiven", "scoreMaximum", "activityProgress", "gradingProgress")]
    [3, 11, 'Submitted', 'FullyGraded']
    >>> document["timestamp"]
    '2026-01-02T03:04:05+00:00'
    """
    document: dict[str, Any] = {
        "userId": subject,
        "scoreGiven": solved,
        "scoreMaximum": max(total, 1),
        "activityProgress": activity_progress(solved, total, attempted).value,
        "gradingProgress": "FullyGraded",
        "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S") + "+00:00",
    }
    if comment:
        document["comment"] = comment
    return document


def attempted(progress: dict[str, Any]) -> bool:
    """Whether a lesson's PROGRESS shows any exercise answered (right or wrong).

    Examples
    --------
    >>> attempted({"exercises": {"a": {"status": "untouched"}, "b": {"status": "attempted"}}})
    True
    """
    exercises = progress.get("exercises")
    if not isinstance(exercises, dict):
        return False
    return any(isinstance(e, dict) and e.get("status") != "untouched" for e in exercises.values())


@dataclass(frozen=True)
class LessonScore:
    """What a learner's LMS score on a lesson is made of (see ``lesson_score``)."""

    solved: float  # exercises solved, those after the reference solution at the instructor's credit
    total: int  # exercises that count
    attempted: bool  # whether any exercise was answered yet
    note: str | None  # the score's comment (solves after the reference solution), if any


def lesson_score(progress: dict[str, Any], policy: HelpPolicy) -> LessonScore:
    """A lesson's score from the lesson page's PROGRESS, solves after help at the instructor's ``policy``.

    The one place the LMS score is computed: after a learner's work and at their launch alike (with
    ``HelpPolicy.score``, as the class grid and the LMS gradebook file).

    Examples
    --------
    >>> progress = {"done": 3, "total": 6, "solved_after_solution": 1, "exercises": {}}
    >>> score = lesson_score(progress, HelpPolicy())
    >>> score.solved, score.total, score.attempted
    (2.5, 6, False)
    >>> score.note
    '1 exercise solved after the reference solution was shown (half credit).'
    """
    after = int(progress.get("solved_after_solution", 0))
    hints = int(progress.get("solved_after_hints", 0))
    note = policy.note(after_solution=after, after_hints=hints)
    solved = policy.score(int(progress["done"]), after_solution=after, after_hints=hints)
    return LessonScore(solved, int(progress["total"]), attempted(progress), note)


IN_PROGRESS_KEY = -1
"""The kept score of a line item whose learner answered or ran something but solved nothing (InProgress)."""


def score_key(solved: float, attempted: bool) -> int:
    """What a line item keeps of its last score, to tell whether a new one differs: the exercises solved in
    halves (a solve after the reference solution may earn half), or ``IN_PROGRESS_KEY`` while nothing is
    solved but something was answered or run, so that Started, then InProgress, are each sent once.

    Examples
    --------
    >>> score_key(0, False), score_key(0, True), score_key(2.5, True), score_key(3, False)
    (0, -1, 5, 6)
    """
    if solved <= 0 and attempted:
        return IN_PROGRESS_KEY
    return round(solved * 2)


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
        self,
        learner_id: str,
        lesson_id: str,
        solved: float,
        total: int,
        *,
        attempted: bool = False,
        note: str | None = None,
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
        attempted : bool
            Whether the learner answered any exercise of the lesson yet.
        note : str, optional
            The score's comment for the LMS (solves after the reference solution, say).

        Returns
        -------
        bool
            Whether a score was queued.

        Examples
        --------
        >>> from qkv.store.sql.database import Database
        >>> database = Database("sqlite://")
        >>> hook = ScoreHook(LtiLinks(database), ScoreOutbox(database))
        >>> hook.lesson_changed("a" * 36, "X1.1", 1, 11)  # never launched with a line item: nothing to send
        False
        >>> hook.links.remember_line_item("a" * 36, "X1.1", "i", "c", "sub-1", "https://lms.example/li/1")
        >>> hook.lesson_changed("a" * 36, "X1.1", 1, 11), hook.lesson_changed("a" * 36, "X1.1", 1, 11)
        (True, False)
        >>> hook.links.remember_line_item("a" * 36, "X1.2", "i", "c", "sub-1", "https://lms.example/li/2")
        >>> [hook.lesson_changed("a" * 36, "X1.2", 0, 11, attempted=a) for a in (False, False, True, True)]
        [True, False, True, False]
        >>> database.close()
        """
        try:
            queued = False
            # One line item per course the learner launched this lesson from: each gets the score. A line
            # item keeps its last score as a whole number (score_key), so Started -> InProgress is a change.
            key = score_key(solved, attempted)
            for item in self.links.line_items(learner_id, lesson_id):
                if item.last_score != key:
                    queued = self._queue(item, solved, key, total, attempted, note) or queued
            return queued
        except StoreError as error:
            log.warning("the LMS score of %s on %s could not be queued: %s", learner_id, lesson_id, error)
            return False

    def _queue(
        self, item: LineItem, solved: float, key: int, total: int, attempted: bool, note: str | None
    ) -> bool:
        def document(at: datetime) -> dict[str, Any]:
            return score_document(item.subject, solved, total, at, attempted, note)

        queued = self.outbox.enqueue(item, key, document)
        if queued and self.wake is not None:
            self.wake()
        return queued
