"""Stand-ins for the few functions of ``lti_consumer.plugin.compat`` that call into edx-platform itself:
the course's members, loading a block, studio access, the PII check, the event tracker, external ids and
the gradebook. Everything else of the consumer runs as published."""

import threading
from types import SimpleNamespace

from django.contrib.auth import get_user_model

BLOCKS: dict[str, SimpleNamespace] = {}  # usage key -> the block's settings, as its XBlock fields hold them
COURSE_ROLES: dict[str, str] = {}  # username -> the Open edX course role
_grades: list[dict[str, object]] = []
_lock = threading.Lock()


def external_id(user) -> str:
    """The anonymous id Open edX sends tools for a user."""
    return f"ext-{user.username}"


def published() -> list[dict[str, object]]:
    with _lock:
        return list(_grades)


class StandInBlock:
    """What the consumer reads of an LTI block (its fields) and the grade it publishes to the gradebook."""

    def __init__(self, location, fields: SimpleNamespace) -> None:
        self.location = location
        self.scope_ids = SimpleNamespace(usage_id=location)
        self.has_score = True
        self.accept_grades_past_due = True
        self.lti_1p3_passport_id = None
        self.context_id = str(location.course_key)
        self.__dict__.update(vars(fields))

    def is_past_due(self) -> bool:
        return False

    def max_score(self) -> float:
        return float(self.weight)

    def set_user_module_score(self, user, score, max_score, comment="") -> None:
        with _lock:
            _grades.append({"block": str(self.location), "user": user.username, "score": score * max_score})


def load_enough_xblock(location):
    return StandInBlock(location, BLOCKS[str(location)])


def get_user_from_external_user_id(external):
    return get_user_model().objects.get(username=external.removeprefix("ext-"))


def get_course_members(course_key):
    users = get_user_model().objects.filter(username__in=COURSE_ROLES).order_by("id")
    return {
        user.id: {
            "id": user.id,
            "username": user.username,
            "email": user.email,
            "name": user.profile.name,
            "roles": [COURSE_ROLES[user.username]],
        }
        for user in users
    }


def batch_get_or_create_externalids(users):
    return {user.id: SimpleNamespace(external_user_id=external_id(user)) for user in users}


def studio_write_access(user, course_key) -> bool:
    """Course staff may change the course's content (Studio's check, for the deep-linking answer)."""
    return user.is_authenticated and COURSE_ROLES.get(user.username) in {"staff", "instructor"}


def install() -> None:
    """Put the stand-ins in place of edx-platform's functions."""
    from lti_consumer.plugin import compat

    compat.load_enough_xblock = load_enough_xblock
    compat.load_block_as_user = load_enough_xblock
    compat.get_user_from_external_user_id = get_user_from_external_user_id
    compat.get_course_members = get_course_members
    compat.merge_course_forum_roles = lambda course_id, members: members
    compat.batch_get_or_create_externalids = batch_get_or_create_externalids
    compat.user_has_studio_write_access = studio_write_access
    compat.nrps_pii_disallowed = lambda: False
    compat.get_event_tracker = lambda: None
