"""The similarity report: per code exercise of a lesson, the learners whose programs are the same program.

Each learner's newest kept program for the exercise is reduced to its canonical text
(``qkv.grading.same_program``: names of the functions' own, layout, comments and docstrings set aside);
learners whose texts agree form a group, shown with their programs side by side. A group that is the
exercise's reference solution says so (one learner is enough for that group), since such a solve counts as
one after the solution was shown. Only the instructor's course's learners are read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from qkv.grading.same_program import canonical_program
from qkv.store.instructor.instructors import CodeEvent
from qkv.web.http.course_access import CourseAccess, InCourse
from qkv.web.instructor.rendering import auth_of, render_page
from qkv.web.services import AppServices, Services

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class SameProgramGroup:
    """Learners whose newest programs for one exercise are the same program."""

    programs: tuple[CodeEvent, ...]  # one per learner, in the order they were sent
    is_solution: bool  # the group's program is the exercise's reference solution


def same_program_groups(programs: Sequence[CodeEvent], solution: str | None = None) -> list[SameProgramGroup]:
    """Group ``programs`` (one per learner) by canonical text: groups of two learners or more, and the
    group of the reference ``solution`` whatever its size; the largest first.

    Examples
    --------
    >>> from datetime import datetime
    >>> def event(n, who, text):
    ...     return CodeEvent(n, who, "L9.1", "area", text, "pass", 1, 1, {}, datetime(2026, 1, 1))
    >>> programs = [event(1, "a", "def f(x):\\n    return x"), event(2, "b", "def f(y):  # me\\n  return y")]
    >>> programs.append(event(3, "c", "def f(x):\\n    return 2 * x"))
    >>> [[p.learner_id for p in group.programs] for group in same_program_groups(programs)]
    [['a', 'b']]
    >>> same_program_groups(programs, solution="def f(z):\\n    return 2 * z")[1].is_solution
    True
    """
    groups: dict[str, list[CodeEvent]] = defaultdict(list)
    for program in programs:
        canonical = canonical_program(program.source)
        if canonical is not None:
            groups[canonical].append(program)
    reference = canonical_program(solution) if solution is not None else None
    found = [
        SameProgramGroup(tuple(members), canonical == reference)
        for canonical, members in groups.items()
        if len(members) > 1 or canonical == reference
    ]
    return sorted(found, key=lambda group: (-len(group.programs), group.programs[0].id))


def _exercises(services: Services, lesson: Any, access: CourseAccess) -> list[dict[str, Any]]:
    """Each code exercise of the lesson with its groups, read for the course's learners only."""
    view = services.store.class_view.within(access.scope)
    found = []
    for exercise in lesson.exercises.values():
        if exercise.kind == "code":
            programs = view.latest_programs(lesson.id, exercise.id)
            groups = same_program_groups(programs, exercise.solution)
            found.append({"id": exercise.id, "learners": len(programs), "groups": groups})
    return found


@router.get(
    "/instructor/lessons/{lesson_id}/same-programs",
    response_class=HTMLResponse,
    name="instructor_same_programs",
)
def instructor_same_programs(
    lesson_id: Annotated[str, Path(max_length=32)],
    request: Request,
    services: AppServices,
    access: InCourse,
) -> Response:
    """Per code exercise, the groups of learners whose newest programs are the same program, side by side."""
    lesson = services.lesson(lesson_id)
    learners = auth_of(request).desk.within(access.scope).learners()
    context = {
        "lesson": lesson,
        "exercises": _exercises(services, lesson, access),
        "names": {record.id: record for record in learners},
    }
    return render_page(request, services, "instructor/same_programs.html", context, access)
