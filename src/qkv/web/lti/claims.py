"""The LTI 1.3 claims qkv reads from a launch's id token, by their URIs, and the launch they describe."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
MESSAGE_TYPE = LTI + "message_type"
VERSION = LTI + "version"
DEPLOYMENT_ID = LTI + "deployment_id"
TARGET_LINK_URI = LTI + "target_link_uri"
ROLES = LTI + "roles"
CONTEXT = LTI + "context"
RESOURCE_LINK = LTI + "resource_link"
CUSTOM = LTI + "custom"
AGS_ENDPOINT = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
DEEP_LINKING_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"

RESOURCE_LINK_REQUEST = "LtiResourceLinkRequest"
DEEP_LINKING_REQUEST = "LtiDeepLinkingRequest"
DEEP_LINKING_RESPONSE = "LtiDeepLinkingResponse"
MESSAGE_TYPES = (RESOURCE_LINK_REQUEST, DEEP_LINKING_REQUEST)
LTI_VERSION = "1.3.0"
INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
TEACHING_ASSISTANT_ROLE = MEMBERSHIP + "/Instructor#TeachingAssistant"
ADMINISTRATOR_ROLE = MEMBERSHIP + "#Administrator"
LEARNER_ROLE = MEMBERSHIP + "#Learner"


class CourseRole(enum.Enum):
    """What a person is in the launch's course, read from the LTI context roles.

    ``INSTRUCTOR``: the context role Instructor or Administrator (rights on that course only).
    ``TEACHING_ASSISTANT``: the sub-role Instructor#TeachingAssistant (the narrower role wins when both
    are sent). ``LEARNER``: Learner, or no role at all (scores go to the LMS). ``OTHER``: any other role
    (Mentor, ContentDeveloper, an institution's administrator without a context role, ...): the lessons
    open, but no score is ever sent and no rights are given.
    """

    INSTRUCTOR = "instructor"
    TEACHING_ASSISTANT = "teaching_assistant"
    LEARNER = "learner"
    OTHER = "other"


def course_role(roles: tuple[str, ...]) -> CourseRole:
    """The course role of a launch's (or a roster member's) LTI roles.

    Simple names ("Instructor", "Learner"), which some LMSs still send, count as the membership roles.

    Examples
    --------
    >>> course_role((INSTRUCTOR_ROLE,)).value, course_role((INSTRUCTOR_ROLE, TEACHING_ASSISTANT_ROLE)).value
    ('instructor', 'teaching_assistant')
    >>> course_role(()).value, course_role(("Learner",)).value, course_role((MEMBERSHIP + "#Mentor",)).value
    ('learner', 'learner', 'other')
    >>> course_role((ADMINISTRATOR_ROLE,)).value
    'instructor'
    """
    names = {_membership_name(role) for role in roles}
    if "Instructor#TeachingAssistant" in names or "TeachingAssistant" in names:
        return CourseRole.TEACHING_ASSISTANT
    if names & {"Instructor", "Administrator"}:
        return CourseRole.INSTRUCTOR
    if "Learner" in names or not roles:
        return CourseRole.LEARNER
    return CourseRole.OTHER


def _membership_name(role: str) -> str:
    """``Instructor`` of the membership role URI (``Instructor#TeachingAssistant`` of its sub-role); a
    simple name as it is; '' for a role of another vocabulary (institution or system)."""
    if role.startswith(MEMBERSHIP + "#"):
        return role[len(MEMBERSHIP) + 1 :]
    if role.startswith(MEMBERSHIP + "/"):
        return role[len(MEMBERSHIP) + 1 :]
    return role if "/" not in role and ":" not in role else ""


# Who may add qkv's lessons to a course (deep linking): the course's instructors and administrators, and
# the LMS's own administrators (institution or system role); never a teaching assistant (see
# ``Launch.may_add_content``), as a TA has no instructor's rights on the course in qkv either.
CONTENT_ROLES = frozenset(
    {
        INSTRUCTOR_ROLE,
        ADMINISTRATOR_ROLE,
        "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator",
        "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator",
        "http://purl.imsglobal.org/vocab/lis/v2/system/person#SysAdmin",
    }
)
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
LINEITEM_READ_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
RESULT_READ_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
LESSON_PARAMETER = "qkv_lesson"  # the custom parameter naming a deep-linked lesson
# The custom parameter in which the LMS substitutes a deep-linked link's submission window's end (LTI 1.3
# core's substitution variable ``ResourceLink.submission.endDateTime``, asked for by qkv's content items).
SUBMISSION_END_PARAMETER = "qkv_submission_end"
SUBMISSION_END_VARIABLE = "$ResourceLink.submission.endDateTime"
MEMBERSHIP_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"


@dataclass(frozen=True)
class DeepLinking:
    """What a deep-linking request asks for (its ``deep_linking_settings`` claim)."""

    return_url: str | None
    accept_types: tuple[str, ...]
    accept_multiple: bool
    accept_lineitem: bool
    data: Any  # opaque to qkv: echoed unchanged (a string in the spec; some platforms send an object)


@dataclass(frozen=True)
class Launch:
    """A checked launch: who, from which platform, to where, and the services it offers."""

    issuer: str
    client_id: str
    deployment_id: str
    subject: str
    name: str | None
    email: str | None
    roles: tuple[str, ...]
    target_link_uri: str
    context_id: str | None
    context_title: str | None
    lineitem_url: str | None
    memberships_url: str | None
    message_type: str = RESOURCE_LINK_REQUEST
    custom: tuple[tuple[str, str], ...] = ()
    lineitems_url: str | None = None  # where line items are found and made (with the line-item scope)
    resource_link_id: str | None = None
    deep_linking: DeepLinking | None = None
    # The scope with which the launch's own line item may be read (checked before any score goes there).
    read_scope: str | None = None

    @property
    def may_add_content(self) -> bool:
        """Whether the person may pick lessons for the course (deep linking): an instructor or an
        administrator, never a teaching assistant (even one also sent the role Instructor).

        Examples
        --------
        >>> launch_from_claims({"sub": "1", ROLES: [INSTRUCTOR_ROLE]}, "i", "c", "d").may_add_content
        True
        >>> ta = [INSTRUCTOR_ROLE, TEACHING_ASSISTANT_ROLE]
        >>> launch_from_claims({"sub": "1", ROLES: ta}, "i", "c", "d").may_add_content
        False
        """
        if self.course_role is CourseRole.TEACHING_ASSISTANT:
            return False
        return any(role in CONTENT_ROLES for role in self.roles)

    @property
    def custom_lesson(self) -> str | None:
        """The lesson the custom claim names (set by qkv's deep-linking response), or None.

        Examples
        --------
        >>> launch_from_claims({"sub": "1", CUSTOM: {"qkv_lesson": "X1.1"}}, "i", "c", "d").custom_lesson
        'X1.1'
        """
        return dict(self.custom).get(LESSON_PARAMETER) or None

    @property
    def submission_ends_at(self) -> datetime | None:
        """The end of the launched link's submission window, naive UTC, when the LMS substituted it in the
        custom parameter qkv's deep linking asked for; None when it did not (the variable comes back as
        sent) or sent no time with its offset.

        Examples
        --------
        >>> claims = {"sub": "1", CUSTOM: {"qkv_submission_end": "2027-01-15T17:00:00+01:00"}}
        >>> launch_from_claims(claims, "i", "c", "d").submission_ends_at
        datetime.datetime(2027, 1, 15, 16, 0)
        >>> claims = {"sub": "1", CUSTOM: {"qkv_submission_end": SUBMISSION_END_VARIABLE}}
        >>> launch_from_claims(claims, "i", "c", "d").submission_ends_at is None
        True
        """
        return lms_time(dict(self.custom).get(SUBMISSION_END_PARAMETER))

    @property
    def course_role(self) -> CourseRole:
        """What the person is in the launch's course (see ``CourseRole``)."""
        return course_role(self.roles)

    @property
    def is_instructor(self) -> bool:
        """Whether the launch is course staff's (Instructor, Administrator or TeachingAssistant).

        Examples
        --------
        >>> launch_from_claims({"sub": "1", ROLES: [INSTRUCTOR_ROLE]}, "i", "c", "d").is_instructor
        True
        >>> launch_from_claims({"sub": "1", ROLES: [TEACHING_ASSISTANT_ROLE]}, "i", "c", "d").is_instructor
        True
        """
        return self.course_role in {CourseRole.INSTRUCTOR, CourseRole.TEACHING_ASSISTANT}


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def launch_from_claims(claims: dict[str, Any], issuer: str, client_id: str, deployment_id: str) -> Launch:
    """The launch that verified ``claims`` describe (optional claims of the wrong shape are ignored).

    Examples
    --------
    >>> ags = {"lineitem": "https://lms/li/1", "scope": [SCORE_SCOPE]}
    >>> claims = {"sub": "s1", "name": "Ada", AGS_ENDPOINT: ags}
    >>> launch = launch_from_claims(claims, "https://lms", "c", "d")
    >>> launch.name, launch.lineitem_url, launch.is_instructor
    ('Ada', 'https://lms/li/1', False)
    """
    context, ags, nrps = _mapping(claims, CONTEXT), _mapping(claims, AGS_ENDPOINT), _mapping(claims, NRPS)
    roles, scopes = _items(claims, ROLES), _items(ags, "scope")
    lineitem = _text(ags.get("lineitem")) if SCORE_SCOPE in scopes else None
    may_find_items = SCORE_SCOPE in scopes and LINEITEM_SCOPE in scopes
    return Launch(
        issuer=issuer,
        client_id=client_id,
        deployment_id=deployment_id,
        subject=str(claims.get("sub", "")),
        name=_text(claims.get("name")) or _joined_name(claims),
        email=_text(claims.get("email")),
        roles=tuple(role for role in roles if isinstance(role, str)),
        target_link_uri=str(claims.get(TARGET_LINK_URI, "")),
        context_id=_text(context.get("id")),
        context_title=_text(context.get("title")) or _text(context.get("label")),
        lineitem_url=lineitem,
        memberships_url=_text(nrps.get("context_memberships_url")),
        message_type=str(claims.get(MESSAGE_TYPE, "")),
        custom=_custom(claims),
        lineitems_url=_text(ags.get("lineitems")) if may_find_items else None,
        resource_link_id=_text(_mapping(claims, RESOURCE_LINK).get("id")),
        deep_linking=_deep_linking(claims),
        read_scope=next((scope for scope in (LINEITEM_READ_SCOPE, LINEITEM_SCOPE) if scope in scopes), None),
    )


def lms_time(text: object) -> datetime | None:
    """An LMS's ISO 8601 time as naive UTC (None: none, or not a time with its offset).

    Examples
    --------
    >>> lms_time("2026-12-24T17:00:00+01:00"), lms_time("2026-12-24T16:00:00Z")
    (datetime.datetime(2026, 12, 24, 16, 0), datetime.datetime(2026, 12, 24, 16, 0))
    >>> lms_time("soon"), lms_time("2026-12-24T16:00"), lms_time(None)
    (None, None, None)
    """
    if not isinstance(text, str) or len(text) > 64:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:  # a time without its zone cannot be placed: the specs ask for one
        return None
    return moment.astimezone(UTC).replace(tzinfo=None)


def _custom(claims: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The custom claim's string values (an LMS sends its substitution variables there as strings)."""
    custom = _mapping(claims, CUSTOM)
    return tuple((str(k), v) for k, v in custom.items() if isinstance(v, str) and len(v) <= 255)[:50]


def _deep_linking(claims: dict[str, Any]) -> DeepLinking | None:
    if claims.get(MESSAGE_TYPE) != DEEP_LINKING_REQUEST:
        return None
    settings = _mapping(claims, DEEP_LINKING_SETTINGS)
    return DeepLinking(
        return_url=_text(settings.get("deep_link_return_url")),
        accept_types=tuple(t for t in _items(settings, "accept_types") if isinstance(t, str)),
        accept_multiple=settings.get("accept_multiple") is True,
        accept_lineitem=settings.get("accept_lineitem") is not False,
        data=settings.get("data"),
    )


def _mapping(claims: dict[str, Any], key: str) -> dict[str, Any]:
    value = claims.get(key)
    return value if isinstance(value, dict) else {}


def _items(claims: dict[str, Any], key: str) -> list[Any]:
    value = claims.get(key)
    return value if isinstance(value, list) else []


def _joined_name(claims: dict[str, Any]) -> str | None:
    parts = [_text(claims.get(key)) for key in ("given_name", "family_name")]
    return " ".join(part for part in parts if part) or None
