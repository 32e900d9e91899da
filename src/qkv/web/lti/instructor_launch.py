"""An instructor's launch: the qkv instructor account of that LMS user, and a session for their browser.

An LMS instructor (or teaching assistant) gets a qkv instructor named after them and their LMS ("Grace
Hopper (lms.example)"), made on their first launch and found again by the LMS's id for them; each launch
gives them their role in the launch's course only, and opens a new instructor session on that course.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Request

from qkv.store.instructor.courses import CourseRecord, Courses, StaffRole
from qkv.store.instructor.instructors import MAX_INSTRUCTOR_NAME, InstructorDesk, clean_instructor_name
from qkv.web.http.instructor_auth import InstructorAuth
from qkv.web.lti.claims import CourseRole, Launch
from qkv.web.lti.refusal import LaunchRefused


def instructor_name(launch: Launch) -> str:
    """The qkv instructor name of an LMS instructor.

    Examples
    --------
    >>> from qkv.web.lti.claims import launch_from_claims
    >>> grace = {"sub": "7", "name": "Grace Hopper"}
    >>> instructor_name(launch_from_claims(grace, "https://lms.example", "c", "d"))
    'Grace Hopper (lms.example)'
    >>> instructor_name(launch_from_claims({"sub": "7"}, "https://lms.example", "c", "d"))
    'Instructor 7 (lms.example)'
    """
    host = urlsplit(launch.issuer).netloc or launch.issuer
    suffix = f" ({host})"
    person = " ".join((launch.name or f"Instructor {launch.subject}").split())
    return clean_instructor_name(
        person[: max(MAX_INSTRUCTOR_NAME - len(suffix), 1)] + suffix[:MAX_INSTRUCTOR_NAME]
    )


def sign_in_instructor(request: Request, launch: Launch, course: CourseRecord) -> str:
    """Open an instructor session for the launching instructor or teaching assistant, on their course.

    The LMS person's instructor account is found by the LMS's identity (``iss`` and ``sub``), never by
    name; the launch gives them their context role in the launch's course only (Instructor or
    Administrator: instructor; TeachingAssistant: teaching assistant), and the session opens on it.

    Parameters
    ----------
    request : fastapi.Request
        The launch (its app holds the instructor sign-in, ``app.state.qkv_instructor``).
    launch : Launch
        The checked launch of course staff.
    course : CourseRecord
        The launch's course.

    Returns
    -------
    str
        The ``Set-Cookie`` header of the new instructor session.

    Raises
    ------
    LaunchRefused
        When the instructor's name cannot be used.
    """
    auth: InstructorAuth = request.app.state.qkv_instructor
    desk: InstructorDesk = auth.desk
    courses = Courses(desk.database)
    try:
        instructor = desk.for_lms_person(launch.issuer, launch.subject, instructor_name(launch))
    except ValueError as error:
        raise LaunchRefused(400, f"The instructor's name from the LMS cannot be used: {error}") from None
    role = (
        StaffRole.INSTRUCTOR if launch.course_role is CourseRole.INSTRUCTOR else StaffRole.TEACHING_ASSISTANT
    )
    courses.set_staff(course.id, instructor.id, role)
    session = desk.open_session(instructor.id)
    desk.choose_course(session, course.id)
    return auth.cookie_header(session)
