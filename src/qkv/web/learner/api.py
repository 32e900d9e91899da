"""The JSON API of lessons: answers, code, variants, progress, and the learner's display name.

Routes only translate HTTP to calls: answers go to ``lesson.check``, code to the grading queue,
and every write to the store. The numbers behind widgets are served by ``qkv.web.learner.widget_api``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from qkv.grading import Suite
from qkv.grading.verdict import ran_its_tests
from qkv.lessons import Exercise, Lesson
from qkv.lessons.render import hint_html
from qkv.lessons.suite_versions import suite_version
from qkv.store import JobState, JobView, clean_display_name
from qkv.store.learner.learners import name_taken_sentence
from qkv.store.sql.clock import utc_now
from qkv.web import lesson_hooks, metrics
from qkv.web.http.clients import request_client_key, seconds_to_next_day
from qkv.web.http.jsonsafe import SafeJSONResponse
from qkv.web.http.request_bodies import StrictBody
from qkv.web.http.security import RequestLearner
from qkv.web.learner.instructor_notes import progress_with_notes, with_notes
from qkv.web.learner.widget_api import (
    STEP_VECTORS,
    AttentionIn,
    ProjectIn,
    attention_steps,
    project_inputs,
    projection,
)
from qkv.web.lesson_progress import build_progress
from qkv.web.runs.backend import RemoteProgram, final_reply, pending_reply, place_in_line
from qkv.web.runs.local_queue import GradingBusy, GradingClosed
from qkv.web.services import AppServices, Services

router = APIRouter(prefix="/api", tags=["lesson API"])

VARIANT_SEED_LIMIT = 2**31 - 1
LessonId = Annotated[
    str, Path(max_length=32, examples=["L9.1"], description="A lesson id, as `qkv lessons list` shows them.")
]


class AnswerIn(StrictBody):
    """An answer to a numeric, letter or multiple-choice exercise."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["area"])
    answer: str = Field(max_length=1000, examples=["3, 2"])


class CodeIn(StrictBody):
    """A program for a code exercise."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["code"])
    code: str = Field(examples=["def area(w, h):\n    return w * h\n"])


class DraftIn(StrictBody):
    """The editor's text of a code exercise, saved as the learner types (not graded)."""

    exercise_id: str = Field(min_length=1, max_length=64, examples=["code"])
    code: str = Field(examples=["def area(w, h):\n    return w *"])


class VariantIn(StrictBody):
    """No fields: the server picks the new seed."""


class CancelIn(StrictBody):
    """No fields: the learner's own waiting program is the one taken out of line."""


class LearnerIn(StrictBody):
    """The learner's optional display name ("" clears it)."""

    display_name: str = Field(max_length=200, examples=["Ada"])


def _writer(request: Request, services: AppServices) -> RequestLearner:
    return services.identity.require_csrf(request)


def _reader(request: Request, services: AppServices) -> RequestLearner:
    return services.identity.learner(request)


Writer = Annotated[RequestLearner, Depends(_writer)]
Reader = Annotated[RequestLearner, Depends(_reader)]


def _progress(services: Services, lesson: Lesson, learner_id: str) -> dict[str, Any]:
    progress = build_progress(lesson, services.store.progress.lesson_activity(learner_id, lesson.id))
    return progress_with_notes(services.store, learner_id, lesson.id, progress)


@router.get("/lessons/{lesson_id}/progress", summary="The learner's progress on a lesson")
def get_progress(lesson_id: LessonId, services: AppServices, learner: Reader) -> dict[str, Any]:
    """Everything the learner has saved on this lesson (the PROGRESS document)."""
    lesson = services.lesson(lesson_id)
    return _progress(services, lesson, learner.id)


@router.post("/lessons/{lesson_id}/answers", summary="Check and save an answer")
def post_answer(
    lesson_id: LessonId, body: AnswerIn, request: Request, services: AppServices, learner: Writer
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
    seed = services.store.progress.variant_seed(learner.id, lesson.id)
    feedback = lesson.check(exercise.id, body.answer, variant_seed=seed)
    services.store.progress.record_answer(
        learner.id,
        lesson.id,
        exercise.id,
        body.answer,
        correct=feedback.correct,
        message=feedback.message,
        counted_as_attempt=feedback.counted_as_attempt,
        variant_seed=seed,
        mistake=feedback.mistake,
        client=request_client_key(request),
    )
    progress = _progress(services, lesson, learner.id)
    lesson_hooks.lesson_changed(request.app.state, learner.id, lesson.id, progress)  # e.g. the LMS score
    return {"feedback": feedback.to_dict(), "progress": progress}


@router.post(
    "/lessons/{lesson_id}/code",
    summary="Grade and save a program",
    responses={
        413: {"description": "The code is over 64 KiB."},
        429: {"description": "This learner's previous program is still being graded."},
        503: {"description": "The grader is busy."},
    },
)
async def post_code(
    lesson_id: LessonId, body: CodeIn, request: Request, services: AppServices, learner: Writer
) -> Any:
    """Run the program in the sandboxed grader (through the fair wait list), save it, return the results."""
    lesson = services.lesson(lesson_id)
    exercise = services.exercise(lesson, body.exercise_id)
    if exercise.kind != "code":
        raise HTTPException(
            422,
            f"The exercise {exercise.id!r} takes an answer, not code; send it to "
            f"/api/lessons/{lesson.id}/answers instead.",
        )
    _check_size(services, body.code)
    # The starter code run as it is is not the learner's try (it does not bring the solution nearer).
    own_work = body.code.strip() != (exercise.starter_code or "").strip()
    if services.remote is not None:  # qkv serve --grading remote: a grader on another machine
        program = RemoteProgram(
            learner.id,
            lesson.id,
            exercise.id,
            body.code,
            client=_line_client(request, learner),
            storage_client=request_client_key(request),
            own_work=own_work,
        )
        return await _remote_run(services, program, request.app.state)
    started, sent_at = time.monotonic(), utc_now()  # a due date judges the program by when it was sent
    document = await _local_run(services, body.code, exercise.suite, request, learner)
    if isinstance(document, SafeJSONResponse):
        return document
    metrics.graded(lesson.id, document.get("status"), time.monotonic() - started)
    kept = await run_in_threadpool(
        _keep_run,
        services,
        request.app.state,
        learner_id=learner.id,
        lesson=lesson,
        exercise=exercise,
        code=body.code,
        document=document,
        own_work=own_work,
        client=request_client_key(request),
        sent_at=sent_at,
    )
    # Returned as a response, FastAPI does not walk the whole document first to make it JSON-able.
    return SafeJSONResponse(kept)


def _keep_run(
    services: Services,
    app_state: Any,
    *,
    learner_id: str,
    lesson: Lesson,
    exercise: Exercise,
    code: str,
    document: dict[str, Any],
    own_work: bool,
    client: str,
    sent_at: datetime,
) -> dict[str, Any]:
    """Save a graded program and answer with its result and the learner's progress: one hop off the event
    loop for all of it (each hop costs the server a wake-up, and a class's runs come by the hundred)."""
    kept = services.store.code.record(
        learner_id,
        lesson.id,
        exercise.id,
        code,
        {**document, "suite_version": suite_version(lesson)},  # stored with the verdict, for regrading
        own_work=own_work and ran_its_tests(document),  # junk that defines nothing is no try
        client=client,
        # The reference solution sent as it is (names and layout aside) is a solve after it was shown,
        # whoever opened it (another browser, a classmate).
        copies_solution=exercise.solved_with_solution(code, document),
        submitted_at=sent_at,
    )
    document = with_notes(services.store, learner_id, lesson.id, exercise.id, document)
    progress = _progress(services, lesson, learner_id)
    lesson_hooks.lesson_changed(app_state, learner_id, lesson.id, progress)
    # "all", or past this address's storage budget for the day "best and last" or "nothing" (still counted).
    return {"result": document, "progress": progress, "kept": kept.value}


async def _local_run(
    services: Services, code: str, suite: Suite | None, request: Request, learner: RequestLearner
) -> dict[str, Any] | SafeJSONResponse:
    """The program's result, graded in this server's own grader through the fair line; or the answer
    that says why it was not (429 or 503: the line is full; 409: the learner cancelled it)."""
    if services.queue is None:
        raise HTTPException(503, services.grading_off_reason or "Grading is turned off on this server.")
    # No seed is passed: the grader draws fresh inputs for every run, as `qkv check` does, so expected
    # values shown by one run are no use in the next and a lookup table of them passes nothing. A failure
    # is repeated from its call, which writes out every argument; the result's seed repeats the whole run.
    try:
        future = services.queue.submit(code, suite, owner=learner.id, client=_line_client(request, learner))
    except GradingBusy as busy:  # 429: this learner's or this address's programs; 503: the line is full
        return SafeJSONResponse(
            {"detail": str(busy)}, status_code=busy.status, headers={"Retry-After": str(busy.retry_after_s)}
        )
    except GradingClosed as closed:
        return SafeJSONResponse({"detail": str(closed)}, status_code=503, headers={"Retry-After": "5"})
    try:
        result = await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        if not future.cancelled():
            raise  # the client went away: nothing to answer
        return SafeJSONResponse({"detail": "You cancelled this run before it was graded."}, status_code=409)
    document: dict[str, Any] = result.to_dict()
    return document


def _view_with_notes(services: Services, view: JobView) -> JobView:
    """A remote grader's verdict with the instructors' notes it gets now (read from the database)."""
    if view.result is None or view.result.get("status") != "fail":
        return view
    noted = with_notes(services.store, view.learner_id, view.lesson_id, view.exercise_id, view.result)
    return dataclasses.replace(view, result=noted)


def _line_client(request: Request, learner: RequestLearner) -> str:
    """Whose turn a program takes in the fair line, and whose per-client bound it counts against.

    A signed-in learner (an account, an LMS launch, ``--require-sign-in``) is a person nobody can mint, so
    they are their own client: a class behind one NAT is then as many clients as people, and a classmate's
    flood from the same address takes none of their turns. An anonymous learner counts by their address's
    bound key (an IPv6 address by its prefix), since one client can mint any number of cookies.
    """
    if learner.signed_in:
        return f"learner:{learner.id}"
    return request_client_key(request)


async def _remote_run(services: Services, program: RemoteProgram, app_state: Any) -> Any:
    """Hand the program to the remote graders and answer with its verdict, or 202 while it has none yet."""
    assert services.remote is not None
    try:
        job_id = await services.remote.submit(program)
    except GradingBusy as busy:  # 429: this learner's or this address's programs; 503: the line is full
        return SafeJSONResponse(
            {"detail": str(busy)}, status_code=busy.status, headers={"Retry-After": str(busy.retry_after_s)}
        )
    return await _job_answer(services, job_id, program.lesson_id, app_state)


async def _job_answer(services: Services, job_id: str, lesson_id: str, app_state: Any) -> Any:
    """The job's verdict once written (waiting up to ``remote_wait_s``), else 202 and where to ask again;
    a verdict's progress goes to the LMS's score too, if the learner was launched (as a local run's does)."""
    assert services.remote is not None
    view = await services.remote.wait(job_id, services.settings.remote_wait_s)
    if view is None:
        view = await services.remote.view(job_id)
    if view is None:
        raise HTTPException(404, f"There is no grading job {job_id!r}; run your program again.")
    if not view.final:
        reply = pending_reply(job_id, view.state, lesson_id)
    else:
        progress = None
        if view.state is JobState.DONE:
            lesson = services.lesson(view.lesson_id)
            progress = await run_in_threadpool(_progress, services, lesson, view.learner_id)
            await run_in_threadpool(
                lesson_hooks.lesson_changed, app_state, view.learner_id, lesson.id, progress
            )
            view = await run_in_threadpool(_view_with_notes, services, view)
        reply = final_reply(view, progress)
    return SafeJSONResponse(reply.body, status_code=reply.status, headers=reply.headers)


@router.get(
    "/lessons/{lesson_id}/code/jobs/{job_id}",
    summary="The verdict of a program sent to remote graders",
    responses={
        202: {"description": "Not graded yet: ask again."},
        404: {"description": "No such job of this learner."},
        409: {"description": "The learner cancelled it."},
        503: {"description": "It could not be graded; run it again."},
    },
)
async def get_code_job(
    lesson_id: LessonId,
    job_id: Annotated[str, Path(max_length=36)],
    request: Request,
    services: AppServices,
    learner: Reader,
) -> Any:
    """With ``qkv serve --grading remote``: the same answer as ``POST .../code`` once the verdict is written
    (from any server on the database), waiting up to a few seconds for it; 202 while it has none."""
    services.lesson(lesson_id)
    if services.remote is None:
        raise HTTPException(
            404, "This server grades programs itself: a program's result comes with the answer to its POST."
        )
    view = await services.remote.view(job_id)
    if view is None or view.learner_id != learner.id:
        raise HTTPException(404, f"You have no grading job {job_id!r}; run your program again.")
    return await _job_answer(services, job_id, lesson_id, request.app.state)


@router.get("/lessons/{lesson_id}/code/queue", summary="Where the learner's program is in the grading line")
async def get_code_queue(lesson_id: LessonId, services: AppServices, learner: Reader) -> dict[str, Any]:
    """``{"position": n, "place": p, "estimate_s": s, "state": st}``. ``position``: programs graded before the
    learner's waiting one; ``place``: its place in line, one more (1: it is next); both null when nothing of
    theirs waits. ``estimate_s``: seconds until it is done, estimated as its place over the line's measured
    rate (runs finished per second, exponentially weighted; with remote graders, the cluster's verdicts of
    the last minute), null while nothing waits or before any run has finished. ``state``: ``waiting``,
    ``running``, ``taking_longer`` (it outgrew its first slice and finishes behind the others' first runs)
    or null; with remote graders ``waiting`` or null. The lesson page asks at most once a second."""
    services.lesson(lesson_id)
    if services.remote is not None:
        waiting = await services.remote.position(learner.id)
        rate = await services.remote.finish_rate() if waiting is not None else None
        return place_in_line(waiting, "waiting" if waiting is not None else None, rate)
    queue = services.queue
    if queue is None:
        return place_in_line(None, None, None)
    state = queue.state(learner.id)
    return place_in_line(
        queue.position(learner.id), state.value if state is not None else None, queue.finish_rate
    )


@router.post("/lessons/{lesson_id}/code/cancel", summary="Take the learner's waiting program out of line")
async def post_code_cancel(
    lesson_id: LessonId, body: CancelIn, services: AppServices, learner: Writer
) -> dict[str, Any]:
    """``{"cancelled": true}`` when a waiting program was taken out of line; one being graded runs on."""
    services.lesson(lesson_id)
    if services.remote is not None:
        return {"cancelled": await services.remote.cancel(learner.id)}
    cancelled = services.queue.cancel(learner.id) if services.queue is not None else False
    return {"cancelled": cancelled}


def _code_exercise(services: Services, lesson: Lesson, exercise_id: str) -> Exercise:
    exercise = services.exercise(lesson, exercise_id)
    if exercise.kind != "code":
        raise HTTPException(422, f"The exercise {exercise.id!r} takes an answer, not code.")
    return exercise


def _check_size(services: Services, code: str) -> None:
    size = len(code.encode("utf-8"))
    limit = services.settings.max_code_bytes
    if size > limit:
        raise HTTPException(
            413,
            f"The code is {size:,} bytes; the grader accepts at most {limit:,} bytes ({limit // 1024} KiB).",
        )


@router.put(
    "/lessons/{lesson_id}/draft",
    summary="Save the editor's text without grading it",
    responses={
        413: {"description": "The code is over 64 KiB."},
        429: {"description": "This address stored its share for today; a longer draft is not kept."},
    },
)
def put_draft(
    lesson_id: LessonId, body: DraftIn, request: Request, services: AppServices, learner: Writer
) -> Any:
    """Keep the learner's latest text of a code exercise (the page sends it a moment after each edit).

    The page restores it from PROGRESS (``code[exercise_id].draft``) on the learner's next visit.
    """
    lesson = services.lesson(lesson_id)
    exercise = _code_exercise(services, lesson, body.exercise_id)
    _check_size(services, body.code)
    if not services.store.code.save_draft(
        learner.id, lesson.id, exercise.id, body.code, client=request_client_key(request)
    ):
        return SafeJSONResponse(
            {
                "detail": "Your address has stored its share of drafts and programs for today, so a longer "
                "draft is not kept until midnight UTC; Run still grades your code and shows every result."
            },
            status_code=429,
            headers={"Retry-After": str(seconds_to_next_day())},
        )
    return {"saved": True, "exercise_id": exercise.id}


@router.get(
    "/lessons/{lesson_id}/hints/{exercise_id}/{number}",
    summary="One hint of a code exercise, once earned",
    responses={
        403: {"description": "Not earned yet: the answer says what opens it."},
        404: {"description": "The exercise has no such hint."},
    },
)
def get_hint(
    lesson_id: LessonId,
    exercise_id: Annotated[str, Path(max_length=64)],
    number: Annotated[int, Path(ge=1, le=99)],
    services: AppServices,
    learner: Reader,
) -> dict[str, Any]:
    """The hint's HTML, once the learner earned it (the first after a counted failed run, each next after
    one more, every one once solved); the page holds none of them. Each hint shown is kept for the learner,
    and a later first solve is marked as one after hints (in the gradebook and the LMS score's comment)."""
    lesson = services.lesson(lesson_id)
    exercise = _code_exercise(services, lesson, exercise_id)
    try:
        text = hint_html(exercise, number)
    except ValueError as error:
        raise HTTPException(404, str(error)) from None
    hints = _progress(services, lesson, learner.id)["code"][exercise.id]["hints"]
    if number > hints["open"]:
        raise HTTPException(403, f"You have not earned hint {number} yet. {hints['next']}")
    services.store.code.help_shown(learner.id, lesson.id, exercise.id, number)
    if number in exercise.solution_hints:  # it shows the solution's code: a later solve is marked so
        services.store.code.solution_shown(learner.id, lesson.id, exercise.id)
    return {
        "exercise_id": exercise.id,
        "number": number,
        "total": len(exercise.hints),
        "html": text,
        "next": hints["next"],
    }


@router.get(
    "/lessons/{lesson_id}/solution/{exercise_id}",
    summary="The reference solution of a code exercise, once earned",
    responses={
        403: {"description": "Not earned yet: solve the exercise, or run it enough times."},
        404: {"description": "The exercise has no reference solution."},
    },
)
def get_solution(
    lesson_id: LessonId,
    exercise_id: Annotated[str, Path(max_length=64)],
    services: AppServices,
    learner: Reader,
) -> dict[str, Any]:
    """The lesson's reference solution, for a learner who solved the exercise or failed it often enough."""
    lesson = services.lesson(lesson_id)
    exercise = _code_exercise(services, lesson, exercise_id)
    if exercise.solution is None:
        raise HTTPException(404, f"The exercise {exercise.id!r} has no reference solution.")
    state = _progress(services, lesson, learner.id)["code"][exercise.id]
    if not state["solution"]["open"]:
        runs, needed = state["failed_runs"], state["solution"]["after_failed_runs"]
        raise HTTPException(
            403,
            f"The reference solution opens once you have solved this exercise, or after {needed} runs of "
            f"your own code that did not pass all the tests; you have had {runs} so far (the starter code, "
            "a program that does not define the functions or run their tests, or one you ran before, does "
            "not count).",
        )
    # A later first solve is marked in the gradebook, the exports and the LMS score (solution_credit).
    services.store.code.solution_shown(learner.id, lesson.id, exercise.id)
    return {"exercise_id": exercise.id, "solution": exercise.solution.strip("\n") + "\n"}


@router.post("/lessons/{lesson_id}/variant", summary="Switch to a new variant of the numbers")
def post_variant(
    lesson_id: LessonId, body: VariantIn, services: AppServices, learner: Writer
) -> dict[str, Any]:
    """Pick a new random variant, save it, and return it with every section that changes with it.

    ``sections`` maps the id of each section of a part that changes with the variant to its HTML
    for the new numbers (empty when the lesson has no such part).
    """
    lesson = services.lesson(lesson_id)
    seed = secrets.randbelow(VARIANT_SEED_LIMIT) + 1
    services.store.progress.set_variant_seed(learner.id, lesson.id, seed)
    changing = set(lesson.variant_section_ids())
    sections = {
        section.id: section.html for section in services.sections(lesson, seed) if section.id in changing
    }
    return {
        "variant": lesson.variant(seed),
        "sections": sections,
        "progress": _progress(services, lesson, learner.id),
    }


@router.post(
    "/lessons/{lesson_id}/attention",
    summary="Every step of attention for one query, unless it gives away an answer of the lesson",
)
def post_lesson_attention(
    lesson_id: LessonId, body: AttentionIn, services: AppServices, learner: Reader
) -> dict[str, Any]:
    """What ``POST /api/attention`` answers, for a widget on a lesson's page: when the steps would show
    an answer of the lesson that the learner has not typed correctly yet (for the variant they see), the
    reply holds no numbers, only ``withheld`` (those exercises' ids) and ``detail`` (a sentence saying so).
    Saves nothing.
    """
    lesson = services.lesson(lesson_id)
    steps = attention_steps(body)
    seed, earned = _earned_answers(services, lesson, learner.id)
    given = lesson.answers_given_away(
        [steps[name] for name in STEP_VECTORS],
        variant_seed=seed,
        earned=earned,
        inputs=[body.q, body.K, body.V],
    )
    if not given:
        return {**steps, "withheld": []}
    return {"withheld": [exercise.id for exercise in given], "detail": _withheld_sentence(lesson, given)}


@router.post(
    "/lessons/{lesson_id}/project",
    summary="q, k, v for one hidden vector, each unless it gives away an answer of the lesson",
)
def post_lesson_project(
    lesson_id: LessonId, body: ProjectIn, services: AppServices, learner: Reader
) -> dict[str, Any]:
    """What ``POST /api/project`` answers, for a widget on a lesson's page: a projection that would show
    an answer of the lesson the learner has not typed correctly yet (for the variant they see; with the
    lesson's own x and matrices, whole numbers too) comes back as null, its exercise's id in ``withheld``
    and ``detail`` a sentence saying so. Saves nothing.
    """
    lesson = services.lesson(lesson_id)
    result = projection(body)
    seed, earned = _earned_answers(services, lesson, learner.id)
    given: dict[str, Exercise] = {}
    for name in ("q", "k", "v"):
        found = lesson.answers_given_away(
            [result[name]], variant_seed=seed, earned=earned, inputs=project_inputs(body)
        )
        if found:
            result[name] = None
            given.update((exercise.id, exercise) for exercise in found)
    if not given:
        return {**result, "withheld": []}
    return {**result, "withheld": list(given), "detail": _withheld_sentence(lesson, list(given.values()))}


def _earned_answers(services: Services, lesson: Lesson, learner_id: str) -> tuple[int | None, set[str]]:
    """The variant the learner works on, and the exercises they answered correctly for it."""
    progress = _progress(services, lesson, learner_id)
    earned = {
        exercise_id
        for exercise_id, entry in progress["exercises"].items()
        if entry["feedback"] is not None and entry["feedback"]["correct"]
    }
    return progress["variant_seed"], earned


def _withheld_sentence(lesson: Lesson, given: list[Exercise]) -> str:
    """Names the questions held back, grouped by the part of the page they are in."""
    titles = {part.id: part.title for part in lesson.parts}
    by_part: dict[str, list[str]] = {}
    for exercise in given:
        by_part.setdefault(exercise.part, []).append(f"'{exercise.id}'")
    listed = _and([f"{_and(ids)} ({titles.get(part, part)})" for part, ids in by_part.items()])
    which = "that question" if len(given) == 1 else "those questions"
    return (
        f"These numbers would show the answer to {listed} on this page before you have typed it. "
        f"Answer {which} first and every step appears here for these numbers; other numbers work now."
    )


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


@router.post(
    "/learner",
    summary="Set the learner's display name",
    responses={
        403: {"description": "A signed-in learner's name comes from the class list or the LMS."},
        409: {"description": "Another learner with an account has this name."},
    },
)
def post_learner(body: LearnerIn, services: AppServices, learner: Writer) -> dict[str, Any]:
    """Save the optional display name shown in the gradebook.

    A signed-in learner's name comes from their class list or their LMS (403); nobody may take the name
    of another learner with an account (409), so no two learners of a class show the same name.
    """
    if learner.signed_in:
        raise HTTPException(
            403,
            "Your name comes from your class list or your LMS, so it cannot be changed here; ask your "
            "instructor if it is wrong.",
        )
    try:
        cleaned = clean_display_name(body.display_name)
    except ValueError as error:
        raise HTTPException(422, str(error)) from None
    if cleaned is not None and services.store.learners.name_taken(learner.id, cleaned):
        raise HTTPException(409, name_taken_sentence(cleaned))
    try:
        return {"display_name": services.store.learners.set_display_name(learner.id, cleaned)}
    except ValueError as error:  # taken in the instant between the check and the write
        raise HTTPException(409, str(error)) from None
