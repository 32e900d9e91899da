"""Which course an instructor's request looks at, and what their role there lets them do.

Every instructor page, API route and export depends on ``course_access``: it signs the instructor in
(``InstructorAuth.require``), then picks the course — ``?course=ID`` on the request, else the one the
session chose with the course picker, else the first of theirs — and gives the view's ``scope``, the
learners it may read. A course that is not theirs answers 404, as an unknown one does: nothing tells
another course's staff that it exists.

Who has which course:

- an administrator (``qkv instructor add NAME --all-courses``) has every course, and "every learner of
  the server" (``?course=all``), the view they open on;
- another instructor has the courses they are staff of (a launch from the LMS, or ``--course ID``): as
  its instructor or as a teaching assistant;
- on a server with no course at all, every instructor sees every learner, as before courses.

What a teaching assistant may not do (``require_instructor``): make sign-in links, open the LMS page,
pull a roster. The rights, role by role, are in docs/instructor.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from starlette.concurrency import run_in_threadpool

from qkv.store.instructor.courses import EVERYONE, CourseRecord, InstructorAccess, LearnerScope, StaffRole
from qkv.web.http.instructor_auth import InstructorAuth, SignedInInstructor
from qkv.web.services import AppServices, Services

WHOLE_SERVER = "all"  # ``?course=all``: every learner of the server (administrators only)


@dataclass(frozen=True)
class CourseAccess:
    """A signed-in instructor looking at one course (or, ``course`` None, at every learner)."""

    signed_in: SignedInInstructor
    course: CourseRecord | None
    role: StaffRole
    choices: tuple[CourseRecord, ...]  # the courses the picker offers
    whole_server: bool  # whether "every learner" is one of the choices (administrators)

    @property
    def scope(self) -> LearnerScope:
        """The learners this view reads."""
        return EVERYONE if self.course is None else LearnerScope(self.course.id)

    @property
    def course_id(self) -> str | None:
        """The course's id (None: every learner)."""
        return None if self.course is None else self.course.id

    def require_instructor(self, action: str) -> None:
        """403 for a teaching assistant: ``action`` (a phrase) is for the course's instructors only."""
        if self.role is not StaffRole.INSTRUCTOR:
            raise HTTPException(
                403, f"A teaching assistant cannot {action}; ask an instructor of the course to do it."
            )


def _access(services: Services, signed_in: SignedInInstructor, wanted: str | None) -> CourseAccess:
    courses = services.store.courses
    access: InstructorAccess = courses.access(signed_in.instructor.id)
    if access.all_courses:
        choices = tuple(courses.all())
    else:
        choices = tuple(c for c in courses.all() if c.id in access.roles)
    any_course = bool(choices) or courses.any()
    whole_server = access.all_courses or not any_course
    if wanted is None:
        wanted = services.store.instructors.session_course(signed_in.session)
        if wanted is not None and wanted != WHOLE_SERVER and all(c.id != wanted for c in choices):
            wanted = None  # the chosen course was taken away since: fall back to the first one
    if wanted is None:
        wanted = WHOLE_SERVER if whole_server else (choices[0].id if choices else None)
    if wanted is None:
        raise HTTPException(
            403,
            f"The instructor {signed_in.instructor.name!r} has no course on this server; an administrator "
            "gives one with 'qkv instructor link NAME --course ID'.",
        )
    if wanted == WHOLE_SERVER and whole_server:
        return CourseAccess(signed_in, None, StaffRole.INSTRUCTOR, choices, True)
    for course in choices:
        if course.id == wanted:
            role = access.role_in(course.id) or StaffRole.TEACHING_ASSISTANT
            return CourseAccess(signed_in, course, role, choices, whole_server)
    raise HTTPException(404, f"There is no course {wanted[:40]!r}.")


async def course_access(request: Request, services: AppServices) -> CourseAccess:
    """The signed-in instructor and the course the request looks at (401/403 signed out, 404 not theirs)."""
    auth: InstructorAuth = request.app.state.qkv_instructor
    signed_in = await run_in_threadpool(auth.require, request)
    wanted = request.query_params.get("course") or None
    if wanted is not None and len(wanted) > 40:
        raise HTTPException(404, f"There is no course {wanted[:40]!r}.")
    return await run_in_threadpool(_access, services, signed_in, wanted)


def check_choice(services: Services, signed_in: SignedInInstructor, course: str) -> CourseAccess:
    """The access a course picker's choice gives (404 when it is not one of the instructor's)."""
    if not course or len(course) > 40:
        raise HTTPException(404, f"There is no course {course[:40]!r}.")
    return _access(services, signed_in, course)


InCourse = Annotated[CourseAccess, Depends(course_access)]

__all__ = ["WHOLE_SERVER", "CourseAccess", "InCourse", "check_choice", "course_access"]
