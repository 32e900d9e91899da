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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from qkv.store import StoreError
from qkv.store.instructor.due_dates import DatesInForce, DueDates
from qkv.store.lti.links import LineItem, LtiLinks
from qkv.store.lti.outbox import ScoreOutbox
from qkv.web.solution_credit import HelpPolicy, Solve, late_note

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
    done: int | None = None,
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
    done : int, optional
        Exercises solved, however much each earned: how far the learner is (``activityProgress``; by
        default the points): every exercise solved, late, is Completed though it earns less.

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
        "activityProgress": activity_progress(solved if done is None else done, total, attempted).value,
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

    solved: float  # the lesson's points: each solve at its help credit times its late credit
    total: int  # exercises that count
    attempted: bool  # whether any exercise was answered yet
    note: str | None  # the score's comment (solves after help, late ones), if any
    worked_at: datetime | None = None  # the time of the work the score is for (its timestamp), if known
    done: int | None = None  # exercises solved, whatever each earned (how far the learner is)


def _moment(text: object) -> datetime | None:
    """An ISO 8601 UTC time of the PROGRESS document as a naive UTC datetime (None: none, or unreadable)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.removesuffix("Z")).replace(tzinfo=None)
    except ValueError:
        return None


def progress_solves(progress: dict[str, Any]) -> list[Solve]:
    """The lesson's counted solves, from PROGRESS's ``solves`` (or, from a document without them, its counts).

    Examples
    --------
    >>> solve = {"exercise_id": "q", "helped": "hints", "solved_at": "2026-01-02T03:04:05Z"}
    >>> progress_solves({"solves": [solve]})
    [Solve(helped='hints', at=datetime.datetime(2026, 1, 2, 3, 4, 5))]
    >>> [s.helped for s in progress_solves({"done": 2, "solved_after_solution": 1})]
    ['solution', '']
    """
    listed = progress.get("solves")
    if isinstance(listed, list):
        found = [s for s in listed if isinstance(s, dict)]
        return [Solve(str(s.get("helped") or ""), _moment(s.get("solved_at"))) for s in found]
    after, hints = int(progress.get("solved_after_solution", 0)), int(progress.get("solved_after_hints", 0))
    plain = int(progress.get("done", 0)) - after - hints
    return [Solve("solution")] * after + [Solve("hints")] * hints + [Solve()] * plain


def lesson_score(
    progress: dict[str, Any], policy: HelpPolicy, dates: DatesInForce | None = None
) -> LessonScore:
    """A lesson's score from the lesson page's PROGRESS: ``HelpPolicy.credit`` of its solves, with the help
    credits of the instructor's ``policy`` and the late credits of the learner's ``dates`` in the line item's
    course (None: no due date there).

    The one place the LMS score is computed: after a learner's work, at their launch and after a regrade
    alike (with ``HelpPolicy.credit``, as the class grid and the exports). Its time (``worked_at``) is the
    latest solve's, or, with nothing solved, the latest work's: the time of the work, not of the sending.

    Examples
    --------
    >>> progress = {"done": 3, "total": 6, "solved_after_solution": 1, "exercises": {}}
    >>> score = lesson_score(progress, HelpPolicy())
    >>> score.solved, score.total, score.attempted
    (2.5, 6, False)
    >>> score.note
    '1 exercise solved after the reference solution was shown (half credit).'
    >>> due = DatesInForce("L1.1", datetime(2026, 1, 10), None, 0.5, extended=False)
    >>> solves = [{"helped": "", "solved_at": f"2026-01-{day}T10:00:00Z"} for day in (9, 11)]
    >>> late = lesson_score({"done": 2, "total": 2, "solves": solves}, HelpPolicy(), due)
    >>> late.solved, late.note, late.worked_at
    (1.5, '1 exercise solved late (counts at half).', datetime.datetime(2026, 1, 11, 10, 0))
    """
    solves = progress_solves(progress)
    helped = [s.helped for s in solves]
    standings = [s.standing(dates).value for s in solves]
    notes = [
        policy.note(after_solution=helped.count("solution"), after_hints=helped.count("hints")),
        late_note(standings.count("late"), standings.count("closed"), dates.late_credit if dates else 1.0),
    ]
    note = " ".join(n for n in notes if n) or None
    times = [s.at for s in solves if s.at is not None]
    worked_at = max(times) if times else _moment(progress.get("worked_at"))
    solved = policy.credit(solves, dates)
    done = int(progress.get("done", len(solves)))
    return LessonScore(solved, int(progress["total"]), attempted(progress), note, worked_at, done)


IN_PROGRESS_KEY = -1
"""The kept score of a line item whose learner answered or ran something but solved nothing (InProgress)."""
FINE_KEYS = 1_000_000
"""Kept scores from here up are thousandths (a late solve may earn a quarter, or a fifth)."""


def score_key(solved: float, attempted: bool) -> int:
    """What a line item keeps of its last score, to tell whether a new one differs: the exercises solved in
    halves (a solve after the reference solution may earn half), a score that is no whole number of halves
    as ``FINE_KEYS`` plus its thousandths (a late solve at a quarter), or ``IN_PROGRESS_KEY`` while nothing
    is solved but something was answered or run, so that Started, then InProgress, are each sent once.

    Examples
    --------
    >>> score_key(0, False), score_key(0, True), score_key(2.5, True), score_key(3, False)
    (0, -1, 5, 6)
    >>> score_key(2.25, True) - FINE_KEYS
    2250
    """
    if solved <= 0 and attempted:
        return IN_PROGRESS_KEY
    if float(solved * 2).is_integer():
        return round(solved * 2)
    return FINE_KEYS + round(solved * 1000)


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
        score = LessonScore(solved, total, attempted, note)
        return self.scores_changed(learner_id, lesson_id, lambda item: score)

    def scores_changed(
        self, learner_id: str, lesson_id: str, score_of: Callable[[LineItem], LessonScore]
    ) -> bool:
        """Queue ``score_of(item)`` on each of the learner's line items of the lesson where it changed (each
        line item is in its own course, whose dates the score may weigh); whether any was queued.

        A failure here is logged, not raised: the learner's own work is already saved, and the next change
        queues the score again.
        """
        try:
            queued = False
            # One line item per course the learner launched this lesson from: each gets the score. A line
            # item keeps its last score as a whole number (score_key), so Started -> InProgress is a change.
            for item in self.links.line_items(learner_id, lesson_id):
                score = score_of(item)
                key = score_key(score.solved, score.attempted)
                if item.last_score != key:
                    queued = self._queue(item, score, key) or queued
            return queued
        except StoreError as error:
            log.warning("the LMS score of %s on %s could not be queued: %s", learner_id, lesson_id, error)
            return False

    def _queue(self, item: LineItem, score: LessonScore, key: int) -> bool:
        def document(at: datetime) -> dict[str, Any]:
            return score_document(
                item.subject, score.solved, score.total, at, score.attempted, score.note, score.done
            )

        queued = self.outbox.enqueue(item, key, document, worked_at=score.worked_at)
        if queued and self.wake is not None:
            self.wake()
        return queued


def queue_lesson_score(
    hook: ScoreHook,
    dates: DueDates,
    learner_id: str,
    lesson_id: str,
    progress: dict[str, Any],
    policy: HelpPolicy,
) -> bool:
    """Queue the learner's score on the lesson for each of their line items where it changed: the score of
    ``progress`` (``lesson_score``) under the instructor's ``policy`` and the learner's dates of the lesson
    in the line item's course (an extension included); whether any was queued.

    Every caller (the lesson API after work, a launch, ``qkv regrade``) queues scores through here, so a
    late solve earns its late credit, and one after the close nothing, wherever the score is sent from.
    """

    def score_of(item: LineItem) -> LessonScore:
        in_force = dates.in_force(item.course_id, learner_id, lesson_id) if item.course_id else None
        return lesson_score(progress, policy, in_force)

    return hook.scores_changed(learner_id, lesson_id, score_of)
