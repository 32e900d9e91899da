"""What the routes share: the store, the lesson catalog, the learner identity and the grading queue (or the
remote graders' job queue).

One ``Services`` object lives on ``app.state.qkv``; routes take it as an ``AppServices`` parameter, other
code through ``get_services(request)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.templating import Jinja2Templates

from qkv.grading import Grader
from qkv.lessons import Catalog, Exercise, Lesson, RenderedSection
from qkv.store import Store
from qkv.web.http.security import LearnerIdentity
from qkv.web.runs.backend import RemoteGrading
from qkv.web.runs.local_queue import GradingQueue
from qkv.web.settings import Settings


@dataclass
class Services:
    """The app's long-lived parts."""

    settings: Settings
    store: Store
    catalog: Catalog
    identity: LearnerIdentity
    templates: Jinja2Templates
    queue: GradingQueue | None = None
    grader: Grader | None = None
    remote: RemoteGrading | None = None  # qkv serve --grading remote: graders on other machines
    sandbox: str = "grading is off"
    grading_off_reason: str | None = "The grader has not started yet; try again in a moment."
    _render_cache: dict[tuple[str, int | None], list[RenderedSection]] = field(default_factory=dict)

    def lesson(self, lesson_id: str) -> Lesson:
        """The lesson with this id, or a 404 whose sentence comes from the lesson engine."""
        from qkv.lessons import LessonError

        try:
            return self.catalog.lesson(lesson_id)
        except LessonError as error:
            raise HTTPException(404, str(error)) from None

    def exercise(self, lesson: Lesson, exercise_id: str) -> Exercise:
        """The lesson's exercise with this id, or a 422 that lists the ones that exist."""
        exercise = lesson.exercises.get(exercise_id)
        if exercise is None:
            known = ", ".join(lesson.exercises)
            raise HTTPException(
                422, f"The lesson {lesson.id} has no exercise {exercise_id!r}; its exercises are {known}."
            )
        return exercise

    def sections(self, lesson: Lesson, seed: int | None) -> list[RenderedSection]:
        """``lesson.render(seed)``, cached: a page is rendered once per variant, not once per request."""
        key = (lesson.id, seed)
        cached = self._render_cache.get(key)
        if cached is None:
            cached = list(lesson.render(seed))
            if len(self._render_cache) > 256:
                self._render_cache.clear()
            self._render_cache[key] = cached
        return cached


def get_services(request: Request) -> Services:
    """The app's ``Services``, from a request (a route takes an ``AppServices`` parameter instead)."""
    found: Services = request.app.state.qkv
    return found


async def _services_dependency(request: Request) -> Services:
    # async: FastAPI runs a plain ``def`` dependency on a worker thread, a hop per request for a lookup.
    return get_services(request)


AppServices = Annotated[Services, Depends(_services_dependency)]
"""A route's parameter of this type receives the app's ``Services``."""
