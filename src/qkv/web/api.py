"""The JSON API: answers, code, variants, progress, the projection and attention helpers, the learner.

Routes only translate HTTP to calls: answers go to ``lesson.check``, code to the grading queue,
numbers to ``qkv.project_qkv`` / ``qkv.attention``, and every write to the store.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Depends, HTTPException, Path, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from qkv import attention, attention_scores, project_qkv
from qkv.store import clean_display_name
from qkv.web.grading_queue import GradingBusy, GradingClosed
from qkv.web.jsonsafe import SafeJSONResponse, finite_or_none
from qkv.web.progress import build_progress
from qkv.web.security import Learner
from qkv.web.services import Services, get_services

router = APIRouter(prefix="/api", tags=["lesson API"])

Number = Annotated[float, Field(allow_inf_nan=False)]
Vector = Annotated[list[Number], Field(min_length=1, max_length=64)]
Matrix = Annotated[list[Vector], Field(min_length=1, max_length=64)]
VARIANT_SEED_LIMIT = 2**31 - 1
LessonId = Annotated[str, Path(max_length=32, examples=["L4.1"], description="A lesson id such as L4.1.")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnswerIn(_Body):
    """An answer to a numeric, letter or multiple-choice exercise."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["q"])
    answer: str = Field(max_length=1000, examples=["3, 2"])


class CodeIn(_Body):
    """A program for a code exercise."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["code"])
    code: str = Field(examples=["def project_qkv(X, Wq, Wk, Wv):\n    ..."])


class VariantIn(_Body):
    """No fields: the server picks the new seed."""


class ProjectIn(_Body):
    """One hidden vector and the three weight matrices, as rows."""

    x: Vector = Field(examples=[[1, 2]])
    Wq: Matrix = Field(examples=[[[1, 0], [1, 1]]])
    Wk: Matrix = Field(examples=[[[0, 1], [1, 0]]])
    Wv: Matrix = Field(examples=[[[2, 0], [0, 2]]])


class AttentionIn(_Body):
    """One query against a few keys and values, optionally with the causal mask at the query's position."""

    q: Vector = Field(examples=[[1, 0]])
    K: Matrix = Field(examples=[[[1, 0], [0, 1]]])
    V: Matrix = Field(examples=[[[2, 0], [0, 2]]])
    causal: bool = False
    causal_index: int = Field(default=0, ge=0, le=63)


class LearnerIn(_Body):
    """The learner's optional display name ("" clears it)."""

    display_name: str = Field(max_length=200, examples=["Ada"])


def _writer(request: Request, services: Annotated[Services, Depends(get_services)]) -> Learner:
    return services.identity.require_csrf(request)


def _reader(request: Request, services: Annotated[Services, Depends(get_services)]) -> Learner:
    return services.identity.learner(request)


AppServices = Annotated[Services, Depends(get_services)]
Writer = Annotated[Learner, Depends(_writer)]
Reader = Annotated[Learner, Depends(_reader)]


def _progress(services: Services, lesson: Any, learner_id: str) -> dict[str, Any]:
    return build_progress(lesson, services.store.lesson_activity(learner_id, lesson.id))


@router.get("/lessons/{lesson_id}/progress", summary="The learner's progress on a lesson")
def get_progress(lesson_id: LessonId, services: AppServices, learner: Reader) -> dict[str, Any]:
    """Everything the learner has saved on this lesson (the PROGRESS document)."""
    lesson = services.lesson(lesson_id)
    return _progress(services, lesson, learner.id)


@router.post("/lessons/{lesson_id}/answers", summary="Check and save an answer")
def post_answer(
    lesson_id: LessonId, body: AnswerIn, services: AppServices, learner: Writer
) -> dict[str, Any]:
    """Check an answer with the lesson's own checker, save the attempt, return feedback and progress."""
    lesson = services.lesson(lesson_id)
    exercise = services.exercise(lesson, body.exercise_id)
    if exercise.kind == "code":
        raise HTTPException(
            422,
            f"The exercise {exercise.id!r} is a code exercise; "
            f"send it to /api/lessons/{lesson.id}/code instead.",
        )
    seed = services.store.variant_seed(learner.id, lesson.id)
    feedback = lesson.check(exercise.id, body.answer, variant_seed=seed)
    services.store.record_answer(
        learner.id,
        lesson.id,
        exercise.id,
        body.answer,
        correct=feedback.correct,
        message=feedback.message,
        counted_as_attempt=feedback.counted_as_attempt,
        variant_seed=seed,
    )
    return {"feedback": feedback.to_dict(), "progress": _progress(services, lesson, learner.id)}


@router.post(
    "/lessons/{lesson_id}/code",
    summary="Grade and save a program",
    responses={
        413: {"description": "The code is over 64 KiB."},
        429: {"description": "This learner's previous program is still being graded."},
        503: {"description": "The grader is busy."},
    },
)
async def post_code(lesson_id: LessonId, body: CodeIn, services: AppServices, learner: Writer) -> Any:
    """Run the program in the sandboxed grader (through the bounded queue), save it, return the results."""
    lesson = services.lesson(lesson_id)
    exercise = services.exercise(lesson, body.exercise_id)
    if exercise.kind != "code":
        raise HTTPException(
            422,
            f"The exercise {exercise.id!r} takes an answer, not code; send it to "
            f"/api/lessons/{lesson.id}/answers instead.",
        )
    size = len(body.code.encode("utf-8"))
    limit = services.settings.max_code_bytes
    if size > limit:
        raise HTTPException(
            413,
            f"The code is {size:,} bytes; the grader accepts at most {limit:,} bytes ({limit // 1024} KiB).",
        )
    if services.queue is None:
        raise HTTPException(503, services.grading_off_reason or "Grading is turned off on this server.")
    try:
        future = services.queue.submit(body.code, exercise.suite, owner=learner.id)
    except GradingBusy as busy:  # 429: this learner's previous program; 503: the grader is full
        return SafeJSONResponse(
            {"detail": str(busy)}, status_code=busy.status, headers={"Retry-After": str(busy.retry_after_s)}
        )
    except GradingClosed as closed:
        return SafeJSONResponse({"detail": str(closed)}, status_code=503, headers={"Retry-After": "5"})
    result = await asyncio.wrap_future(future)
    document = result.to_dict()
    await run_in_threadpool(
        services.store.record_code, learner.id, lesson.id, exercise.id, body.code, document
    )
    progress = await run_in_threadpool(_progress, services, lesson, learner.id)
    return {"result": document, "progress": progress}


@router.post("/lessons/{lesson_id}/variant", summary="Switch to a new variant of the numbers")
def post_variant(
    lesson_id: LessonId, body: VariantIn, services: AppServices, learner: Writer
) -> dict[str, Any]:
    """Pick a new random variant, save it, and return it with Part 1 re-rendered for it."""
    lesson = services.lesson(lesson_id)
    seed = secrets.randbelow(VARIANT_SEED_LIMIT) + 1
    services.store.set_variant_seed(learner.id, lesson.id, seed)
    part1 = [section.html for section in services.sections(lesson, seed) if section.id == "part1"]
    return {
        "variant": lesson.variant(seed),
        "sections": {"part1": part1[0] if part1 else ""},
        "progress": _progress(services, lesson, learner.id),
    }


@router.post("/project", summary="q, k, v for one hidden vector (for the sliders)")
def post_project(body: ProjectIn) -> dict[str, Any]:
    """``qkv.project_qkv`` on one row; shape problems come back as 422 with the library's sentence."""
    try:
        with np.errstate(all="ignore"):  # overflow to inf is reported as null, not as a warning
            Q, K, V = project_qkv([body.x], body.Wq, body.Wk, body.Wv)
    except (ValueError, TypeError) as error:
        raise HTTPException(422, str(error)) from None
    result: dict[str, Any] = finite_or_none({"q": Q[0], "k": K[0], "v": V[0]})
    return result


@router.post("/attention", summary="Every step of attention for one query (for the explorer)")
def post_attention(body: AttentionIn) -> dict[str, Any]:
    """Scores, scaled scores, the masked row, softmax weights and the output for one query."""
    n_k = len(body.K)
    if body.causal and body.causal_index >= n_k:
        raise HTTPException(
            422,
            f"causal_index is {body.causal_index}, but with {n_k} keys the query's position must be "
            f"between 0 and {n_k - 1}.",
        )
    try:
        with np.errstate(all="ignore"):
            scores = attention_scores([body.q], body.K, scale=1.0)[0]  # (n_k,)
            scaled = attention_scores([body.q], body.K)[0]  # (n_k,)
            allowed = np.arange(n_k) <= body.causal_index if body.causal else np.ones(n_k, dtype=bool)
            output, weights = attention([body.q], body.K, body.V, mask=allowed[None, :], return_weights=True)
    except (ValueError, TypeError) as error:
        raise HTTPException(422, str(error)) from None
    masked = np.where(allowed, scaled, -np.inf)  # -inf becomes null in the response
    steps = {"scores": scores, "scaled": scaled, "masked": masked, "weights": weights[0], "output": output[0]}
    result: dict[str, Any] = finite_or_none(steps)
    return {**result, "d_k": len(body.q), "allowed": allowed.tolist()}


@router.post("/learner", summary="Set the learner's display name")
def post_learner(body: LearnerIn, services: AppServices, learner: Writer) -> dict[str, Any]:
    """Save the optional display name shown in the gradebook."""
    try:
        cleaned = clean_display_name(body.display_name)
    except ValueError as error:
        raise HTTPException(422, str(error)) from None
    return {"display_name": services.store.set_display_name(learner.id, cleaned)}
