""" "Did this help?": a learner's yes or no, and an optional line, on one message of a result.

One mark per learner and message (the first is kept), under every failed test's message and every wrong
hand-answer's message. The page sends the exercise and the message, not the program: the store keeps the
mark with the learner's latest program of the exercise that did not pass (a hand answer's, with their
latest wrong answer), the result the page shows its messages under. The instructor's page "Mistakes of this
class" counts, per kind of message, how often learners marked it unhelpful, raises a group whose message
often was, and shows the lines learners wrote.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import Field

from qkv.store.instructor.mistake_groups import FEEDBACK_KINDS, MAX_LINE
from qkv.store.work.mistake_signatures import group_key
from qkv.web.http.request_bodies import StrictBody
from qkv.web.learner.api import LessonId, Writer
from qkv.web.services import AppServices

__all__ = ["MessageFeedbackIn", "router"]

router = APIRouter(prefix="/api", tags=["lesson API"])
MAX_MESSAGE = 4096
_DIGEST = re.compile(r"[0-9a-f]{32}")


class MessageFeedbackIn(StrictBody):
    """A learner's mark on one message: did it help, and optionally what would have."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["area"])
    message: str = Field(min_length=1, max_length=MAX_MESSAGE, examples=["Expected 6, got 5."])
    kind: str = Field(max_length=16, examples=["lesson"])
    helpful: bool
    line: str = Field(default="", max_length=MAX_LINE, examples=["I did not see which size."])
    function: str = Field(default="", max_length=64, examples=["area"])
    signature: str | None = Field(default=None, max_length=32)


@router.post("/lessons/{lesson_id}/message-feedback", summary="Say whether a message helped")
def post_message_feedback(
    lesson_id: LessonId, body: MessageFeedbackIn, services: AppServices, learner: Writer
) -> dict[str, Any]:
    """Save the learner's mark on one message of the lesson (once: ``saved`` is false for a second mark)."""
    lesson = services.lesson(lesson_id)
    exercise = services.exercise(lesson, body.exercise_id)
    if body.kind not in FEEDBACK_KINDS:
        raise HTTPException(
            422, f"{body.kind[:16]!r} is not a kind of message; the kinds are {', '.join(FEEDBACK_KINDS)}."
        )
    group = None
    if body.signature and _DIGEST.fullmatch(body.signature) and body.function in exercise.functions:
        group = group_key(lesson.id, exercise.id, body.function, body.signature)
    try:
        saved = services.store.mistakes.mark(
            learner.id,
            lesson.id,
            exercise.id,
            body.message,
            kind=body.kind,
            helpful=body.helpful,
            line=body.line,
            group=group,
        )
    except ValueError as error:
        raise HTTPException(429, str(error)) from None
    return {"saved": saved}
