"""An instructor's launch: the qkv instructor account of that LMS user, and a session for their browser.

An LMS instructor gets a qkv instructor named after them and their LMS ("Grace Hopper (lms.example)"),
made on their first launch; every launch opens a new instructor session, as a sign-in link would.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import Request

from qkv.store.instructors import MAX_INSTRUCTOR_NAME, InstructorDesk, clean_instructor_name
from qkv.web.instructor_auth import InstructorAuth
from qkv.web.lti.claims import Launch
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


def sign_in_instructor(request: Request, launch: Launch) -> str:
    """Open an instructor session for the launching instructor.

    Parameters
    ----------
    request : fastapi.Request
        The launch (its app holds the instructor sign-in, ``app.state.qkv_instructor``).
    launch : Launch
        The checked launch of an instructor.

    Returns
    -------
    str
        The ``Set-Cookie`` header of the new instructor session.

    Raises
    ------
    LaunchRefused
        When the instructor's name cannot be used or the session cannot be opened.
    """
    auth: InstructorAuth = request.app.state.qkv_instructor
    desk: InstructorDesk = auth.desk
    try:
        name = instructor_name(launch)
    except ValueError as error:
        raise LaunchRefused(400, f"The instructor's name from the LMS cannot be used: {error}") from None
    token = None
    if desk.find(name) is None:
        try:
            token = desk.add(name)[1]
        except ValueError:
            token = None  # made by a launch on another server at the same moment
    session = desk.redeem(token or desk.new_sign_in_token(name))
    if session is None:
        raise LaunchRefused(409, "The instructor session could not be opened; launch again from the LMS.")
    return auth.cookie_header(session)
