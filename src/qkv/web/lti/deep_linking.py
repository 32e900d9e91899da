"""LTI Deep Linking 2.0: the picker's pass, the content items for chosen lessons, and the signed response.

An instructor's ``LtiDeepLinkingRequest`` launch opens a picker of the chapter's lessons. The request is
not kept on the server: the picker's form carries it in a *pass*, a short-lived JWT the tool signs with
its own key (so every server of one database accepts it, and a page in an LMS's iframe needs no cookie),
used once. The answer is an ``LtiDeepLinkingResponse`` JWT signed with the same key, posted by the
browser to the LMS's ``deep_link_return_url``; each chosen lesson becomes an ``ltiResourceLink`` whose
``custom`` names the lesson (so later launches open it) and whose ``lineItem`` makes its gradebook column.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

import jwt

from qkv.web.lti import claims as c
from qkv.web.lti.refusal import LaunchRefused
from qkv.web.lti.tool_keys import ToolKey

PASS_AUDIENCE = "qkv-deep-linking-picker"
PASS_LIFETIME_S = 3600  # a teacher may read the list for a while before choosing
RESPONSE_LIFETIME_S = 600
LINE_ITEM_TAG = "qkv-lesson"
LTI_RESOURCE_LINK = "ltiResourceLink"


@dataclass(frozen=True)
class PickerPass:
    """A deep-linking request, as the picker's form carries it back."""

    issuer: str
    client_id: str
    deployment_id: str
    return_url: str
    accept_multiple: bool
    accept_lineitem: bool
    data: Any  # the request's data, echoed unchanged
    nonce: str
    expires_at: int
    lineitems_url: str | None = None


@dataclass(frozen=True)
class PickedLesson:
    """A lesson as the picker offers it: its id, title, and the points it counts in the gradebook."""

    id: str
    title: str
    points: int


def check_request(launch: c.Launch) -> c.DeepLinking:
    """The request's settings, once it may be answered: from someone who may add content, with a return URL
    and room for a resource link.

    Raises
    ------
    LaunchRefused
        403 for a learner or a teaching assistant; 400 without a return URL or when the LMS accepts no
        ``ltiResourceLink``.

    Examples
    --------
    >>> launch = c.launch_from_claims({"sub": "1", c.MESSAGE_TYPE: c.DEEP_LINKING_REQUEST}, "i", "c", "d")
    >>> check_request(launch)
    Traceback (most recent call last):
    ...
    qkv.web.lti.refusal.LaunchRefused: This is a request to add qkv's lessons to the course, and only an ...
    """
    if not launch.may_add_content and launch.course_role is c.CourseRole.TEACHING_ASSISTANT:
        raise LaunchRefused(
            403,
            "This is a request to add qkv's lessons to the course, and in qkv a teaching assistant does not "
            "pick them (an instructor or administrator of the course does); open a lesson from the course "
            "page instead.",
        )
    if not launch.may_add_content:
        raise LaunchRefused(
            403,
            "This is a request to add qkv's lessons to the course, and only an instructor or administrator "
            "of the course picks them; open a lesson from the course page instead.",
        )
    settings = launch.deep_linking
    if settings is None or not settings.return_url:
        raise LaunchRefused(
            400,
            "The deep-linking request has no deep_link_return_url in its deep_linking_settings claim, so "
            "qkv has nowhere to send the lessons you pick (LTI Deep Linking 2.0 requires it).",
        )
    if settings.accept_types and LTI_RESOURCE_LINK not in settings.accept_types:
        raise LaunchRefused(
            400,
            f"The LMS accepts only {', '.join(settings.accept_types)} here, and qkv's lessons are "
            f"{LTI_RESOURCE_LINK} items; add qkv from an activity or assignment picker instead.",
        )
    return settings


def issue_pass(key: ToolKey, launch: c.Launch, settings: c.DeepLinking) -> str:
    """The picker's pass for this request (signed with the tool's key, valid an hour, used once)."""
    now = int(time.time())
    body = {
        "aud": PASS_AUDIENCE,
        "iat": now,
        "exp": now + PASS_LIFETIME_S,
        "iss": launch.issuer,
        "client_id": launch.client_id,
        "deployment_id": launch.deployment_id,
        "return_url": settings.return_url,
        "accept_multiple": settings.accept_multiple,
        "accept_lineitem": settings.accept_lineitem,
        "data": settings.data,
        "lineitems_url": launch.lineitems_url,
        "nonce": secrets.token_urlsafe(18),
    }
    return key.sign(body)


def read_pass(key: ToolKey, token: str) -> PickerPass:
    """The request a picker's pass carries.

    Raises
    ------
    LaunchRefused
        400 when the pass is missing, forged or expired.
    """
    if not token or len(token) > 8192:
        raise LaunchRefused(
            400, "The form has no pass from qkv's picker; open the picker again from the LMS."
        )
    try:
        body = key.verify(token, PASS_AUDIENCE)
    except jwt.ExpiredSignatureError:
        raise LaunchRefused(
            400, "The picker was open for more than an hour; open it again from the LMS and pick again."
        ) from None
    except jwt.PyJWTError:
        raise LaunchRefused(
            400, "The picker's pass is not one qkv signed; open the picker again from the LMS."
        ) from None
    return PickerPass(
        issuer=str(body["iss"]),
        client_id=str(body["client_id"]),
        deployment_id=str(body["deployment_id"]),
        return_url=str(body["return_url"]),
        accept_multiple=bool(body["accept_multiple"]),
        accept_lineitem=bool(body["accept_lineitem"]),
        data=body.get("data"),
        nonce=str(body["nonce"]),
        expires_at=int(body["exp"]),
        lineitems_url=body.get("lineitems_url") if isinstance(body.get("lineitems_url"), str) else None,
    )


def content_item(origin: str, lesson: PickedLesson, with_line_item: bool) -> dict[str, Any]:
    """The ``ltiResourceLink`` for one lesson: its URL, the custom parameter naming it, its line item.

    Examples
    --------
    >>> item = content_item("https://qkv.example", PickedLesson("X1.1", "Queries", 11), True)
    >>> item["url"], item["custom"]["qkv_lesson"], item["lineItem"]["resourceId"]
    ('https://qkv.example/lessons/X1.1', 'X1.1', 'X1.1')
    >>> item["lineItem"]["scoreMaximum"]
    11
    >>> item["custom"]["qkv_submission_end"]  # the LMS substitutes the link's submission window's end
    '$ResourceLink.submission.endDateTime'
    >>> "lineItem" in content_item("https://qkv.example", PickedLesson("X1.1", "Queries", 11), False)
    False
    """
    item: dict[str, Any] = {
        "type": LTI_RESOURCE_LINK,
        "title": lesson.title,
        "text": f"qkv lesson {lesson.id}: {lesson.title} ({lesson.points} points).",
        "url": f"{origin}/lessons/{lesson.id}",
        # The lesson, and the link's submission window's end as the LMS substitutes it at each launch.
        "custom": {c.LESSON_PARAMETER: lesson.id, c.SUBMISSION_END_PARAMETER: c.SUBMISSION_END_VARIABLE},
        "window": {"targetName": "qkv"},
    }
    if with_line_item:
        item["lineItem"] = {
            "scoreMaximum": max(lesson.points, 1),
            "label": f"{lesson.id} {lesson.title}",
            "resourceId": lesson.id,
            "tag": LINE_ITEM_TAG,
        }
    return item


def response_claims(picked: PickerPass, items: list[dict[str, Any]], message: str) -> dict[str, Any]:
    """The claims of the ``LtiDeepLinkingResponse``: from the tool (its client id) to the platform.

    Examples
    --------
    >>> request = PickerPass("https://lms", "tool-1", "d1", "https://lms/back", True, True, "xyz", "n", 0)
    >>> body = response_claims(request, [], "Added.")
    >>> body["iss"], body["aud"], body[c.MESSAGE_TYPE], body[c.DL + "data"], body[c.DL + "content_items"]
    ('tool-1', 'https://lms', 'LtiDeepLinkingResponse', 'xyz', [])
    """
    now = int(time.time())
    body: dict[str, Any] = {
        "iss": picked.client_id,
        "aud": picked.issuer,
        "azp": picked.client_id,
        "iat": now,
        "exp": now + RESPONSE_LIFETIME_S,
        "nonce": secrets.token_urlsafe(18),
        c.MESSAGE_TYPE: c.DEEP_LINKING_RESPONSE,
        c.VERSION: c.LTI_VERSION,
        c.DEPLOYMENT_ID: picked.deployment_id,
        c.DL + "content_items": items,
        c.DL + "msg": message,
        c.DL + "log": f"qkv linked {len(items)} lesson{'' if len(items) == 1 else 's'}.",
    }
    if picked.data is not None:
        body[c.DL + "data"] = picked.data  # echoed unchanged, as the request sent it
    return body


def chosen_lessons(
    picked: PickerPass, chosen: list[str], offered: dict[str, PickedLesson]
) -> list[PickedLesson]:
    """The lessons a teacher chose, checked against what was offered and what the LMS accepts.

    Raises
    ------
    LaunchRefused
        400 for no lesson, an unknown one, or several where the LMS takes one.

    Examples
    --------
    >>> request = PickerPass("https://lms", "tool-1", "d1", "https://lms/back", False, True, None, "n", 0)
    >>> offered = {"X1.1": PickedLesson("X1.1", "Queries", 11), "X1.2": PickedLesson("X1.2", "Scores", 5)}
    >>> chosen_lessons(request, ["X1.1", "X1.2"], offered)
    Traceback (most recent call last):
    ...
    qkv.web.lti.refusal.LaunchRefused: The LMS takes one lesson at a time here, and 2 were chosen ...
    """
    unique = list(dict.fromkeys(chosen))
    if not unique:
        raise LaunchRefused(400, "No lesson was chosen; tick at least one lesson, then press Add.")
    unknown = [lesson for lesson in unique if lesson not in offered]
    if unknown:
        raise LaunchRefused(
            400,
            f"The lesson {unknown[0][:40]!r} is not one of this server's ({', '.join(sorted(offered))}).",
        )
    if len(unique) > 1 and not picked.accept_multiple:
        raise LaunchRefused(
            400,
            f"The LMS takes one lesson at a time here, and {len(unique)} were chosen "
            f"({', '.join(unique)}); choose one, or add the others one by one.",
        )
    return [offered[lesson] for lesson in unique]


__all__ = [
    "PickedLesson",
    "PickerPass",
    "check_request",
    "chosen_lessons",
    "content_item",
    "issue_pass",
    "read_pass",
    "response_claims",
]
