"""Finding a lesson's line item in a course by its ``resourceId``, and making it only when it is missing.

A launch may carry the AGS line-items service (``lineitems`` and the line-item scope) but no ``lineitem``
of its own: a link added without a gradebook column, a course-navigation launch, or a lesson deep-linked a
second time (qkv then leaves ``lineItem`` out, since the column exists). qkv then asks the course's line
items for the one whose ``resourceId`` is the lesson, and creates it only if there is none, so choosing
the same lesson twice in a course makes no second column (PrairieLearn learned this the hard way). The
look-up and creation of one course and lesson are serialised within a server and, on PostgreSQL, across
every server of the database (a transaction-scoped advisory lock), so racing first launches make one column.

A launch that does carry a ``lineitem`` is checked before any score goes there, when the launch lets qkv
read it: a line item that is another lesson's column (its ``resourceId`` names another lesson, or qkv's own
line item has another ``scoreMaximum``) is never written. Open edX, for one, keeps every lesson deep-linked
into one block under that block's single line item. qkv then finds or makes the lesson's own line item in
the course's container when the launch offers one, and otherwise keeps the learner's scores back, parked
with a sentence for the instructor that names the platform's limit.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from qkv.store.lti.links import LtiLinks
from qkv.store.lti.platforms import PlatformRecord
from qkv.web.lti.claims import LINEITEM_SCOPE, Launch, lms_time
from qkv.web.lti.deep_linking import LINE_ITEM_TAG, PickedLesson
from qkv.web.lti.service_tokens import ServiceTokens, ServiceUnavailable

log = logging.getLogger("qkv.web.lti")
CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
MAX_PAGES = 20


def with_query(url: str, **params: str) -> str:
    """``url`` with ``params`` added to its query (the LMS's own query kept).

    Examples
    --------
    >>> with_query("https://lms.example/li?type_id=3", resource_id="X1.1")
    'https://lms.example/li?type_id=3&resource_id=X1.1'
    """
    parts = urlsplit(url)
    extra = str(httpx.QueryParams(params))
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit(parts._replace(query=query))


def find_or_create(
    client: httpx.Client,
    tokens: ServiceTokens,
    platform: PlatformRecord,
    lineitems_url: str,
    lesson: PickedLesson,
    resource_link_id: str | None = None,
    due_at: datetime | None = None,
    *,
    links: LtiLinks,
) -> str:
    """The URL of the course's line item for ``lesson`` (found by resourceId, else created).

    Parameters
    ----------
    client : httpx.Client
        How the LMS is asked.
    tokens : ServiceTokens
        Access tokens with the line-item scope.
    platform : PlatformRecord
        The LMS.
    lineitems_url : str
        The course's line items (the launch's AGS ``lineitems``).
    lesson : PickedLesson
        The lesson: its id is the resourceId, its points the scoreMaximum.
    resource_link_id : str, optional
        The link launched, recorded on a line item qkv makes.
    links : LtiLinks
        The database's lock: one server at a time looks up and makes this course's line item for the
        lesson.
    due_at : datetime, optional
        The lesson's due date in the course (naive UTC): a line item qkv makes ends then (``endDateTime``);
        one the LMS has already keeps the dates the instructor gave it there.

    Returns
    -------
    str
        The line item's URL (its ``id``).

    Raises
    ------
    ServiceUnavailable
        When the LMS cannot be asked, or answers without a usable line item.
    StoreError
        When the database cannot hold the lock.
    """
    return found_or_made(
        client, tokens, platform, lineitems_url, lesson, resource_link_id, due_at, links=links
    ).url


def found_or_made(
    client: httpx.Client,
    tokens: ServiceTokens,
    platform: PlatformRecord,
    lineitems_url: str,
    lesson: PickedLesson,
    resource_link_id: str | None = None,
    due_at: datetime | None = None,
    *,
    links: LtiLinks,
) -> Column:
    """``find_or_create``'s line item as a ``Column``: a line item found carries its ``endDateTime`` (the
    date the LMS gives the lesson's column), one made carries none (qkv gave it the course's due date).

    Raises
    ------
    ServiceUnavailable
        When the LMS cannot be asked, or answers without a usable line item.
    StoreError
        When the database cannot hold the lock.
    """
    with links.exclusive(f"{lineitems_url} {lesson.id}"):
        token = tokens.token(platform, (LINEITEM_SCOPE,))
        found = find_item(client, token, lineitems_url, lesson.id)
        if found is not None:
            return Column(str(found["id"]), ends_at=end_of(found))
        return Column(create(client, token, lineitems_url, lesson, resource_link_id, due_at))


def find(client: httpx.Client, token: str, lineitems_url: str, resource_id: str) -> str | None:
    """The URL of the first line item whose resourceId is ``resource_id``, following the pages; or None."""
    item = find_item(client, token, lineitems_url, resource_id)
    return None if item is None else str(item["id"])


def find_item(
    client: httpx.Client, token: str, lineitems_url: str, resource_id: str
) -> dict[str, Any] | None:
    """The first line item (its JSON, with an ``id``) whose resourceId is ``resource_id``, following the
    pages; or None."""
    url: str | None = with_query(lineitems_url, resource_id=resource_id)
    for _ in range(MAX_PAGES):
        if url is None:
            return None
        response = _call(client, "GET", url, token, accept=CONTAINER_TYPE)
        items = _json(response, url)
        for item in items if isinstance(items, list) else []:
            # The LMS may ignore the filter: check the resourceId ourselves.
            if isinstance(item, dict) and item.get("resourceId") == resource_id and item.get("id"):
                return item
        next_link = response.links.get("next", {}).get("url")
        url = str(next_link) if next_link else None
    return None


def create(
    client: httpx.Client,
    token: str,
    lineitems_url: str,
    lesson: PickedLesson,
    resource_link_id: str | None,
    due_at: datetime | None = None,
) -> str:
    """Make the lesson's line item in the course (ending at ``due_at``, naive UTC, if given); its URL."""
    body: dict[str, Any] = {
        "scoreMaximum": max(lesson.points, 1),
        "label": f"{lesson.id} {lesson.title}",
        "resourceId": lesson.id,
        "tag": LINE_ITEM_TAG,
    }
    if resource_link_id:
        body["resourceLinkId"] = resource_link_id
    if due_at is not None:
        body["endDateTime"] = due_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    response = _call(client, "POST", lineitems_url, token, accept=LINE_ITEM_TYPE, body=body)
    made = _json(response, lineitems_url)
    if not isinstance(made, dict) or not isinstance(made.get("id"), str):
        raise ServiceUnavailable(f"The LMS at {lineitems_url} made a line item but sent back no 'id'.")
    return str(made["id"])


def _call(
    client: httpx.Client, method: str, url: str, token: str, *, accept: str, body: Any = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Accept": accept}
    if body is not None:
        headers["Content-Type"] = LINE_ITEM_TYPE
    try:
        response = client.request(method, url, json=body, headers=headers, timeout=15.0)
    except httpx.HTTPError as error:
        raise ServiceUnavailable(f"The LMS at {url} could not be reached ({type(error).__name__}).") from None
    if not 200 <= response.status_code < 300:
        raise ServiceUnavailable(
            f"The LMS's line items at {url} answered {response.status_code}: {response.text[:200]!r}."
        )
    return response


def _json(response: httpx.Response, url: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ServiceUnavailable(f"The LMS's line items at {url} answered with no JSON.") from None


@dataclass(frozen=True)
class Column:
    """Where a launched learner's scores on a lesson go: a line item, and the refusal that keeps every
    score back when it is another lesson's column (``None``: it is the lesson's, or may be)."""

    url: str
    refusal: str | None = None
    ends_at: datetime | None = None  # the line item's endDateTime in the LMS (naive UTC), when read


def end_of(item: dict[str, Any]) -> datetime | None:
    """A line item's ``endDateTime`` as naive UTC (None: none, or not a time with its offset).

    Examples
    --------
    >>> end_of({"endDateTime": "2026-12-24T17:00:00+01:00"}), end_of({"endDateTime": "2026-12-24T16:00:00Z"})
    (datetime.datetime(2026, 12, 24, 16, 0), datetime.datetime(2026, 12, 24, 16, 0))
    >>> end_of({"endDateTime": "soon"}), end_of({"endDateTime": "2026-12-24T16:00"}), end_of({})
    (None, None, None)
    """
    return lms_time(item.get("endDateTime"))


def not_the_lessons(
    item: dict[str, Any], lesson: PickedLesson, lesson_ids: Collection[str], linked: bool = False
) -> str | None:
    """Why the line item ``item`` (its JSON) is not ``lesson``'s column; None when it is, or may be.

    A ``resourceId`` naming another lesson (or any other resource on a line item qkv made, by its tag)
    is another lesson's column. So is one with another ``scoreMaximum`` that does not name this lesson,
    when qkv made it or asked for it (``linked``: the launch is of a link qkv's deep linking made, which
    asked for a column of the lesson's points). One whose ``resourceId`` is the lesson is the lesson's
    whatever its maximum (an instructor may rescale the column), and the LMS's own column of a link made
    in the LMS (no lesson named, not qkv's) may be used.

    Examples
    --------
    >>> lesson, ids = PickedLesson("X1.2", "Scores", 8), ("X1.1", "X1.2")
    >>> not_the_lessons({"resourceId": "X1.2", "scoreMaximum": 20}, lesson, ids) is None
    True
    >>> not_the_lessons({"label": "Week 3", "scoreMaximum": 100}, lesson, ids) is None
    True
    >>> not_the_lessons({"label": "Week 3", "scoreMaximum": 100}, lesson, ids, linked=True)
    "the line item 'Week 3' counts 100 points where X1.2 counts 8: it is not the lesson's column"
    >>> not_the_lessons({"resourceId": "X1.1", "scoreMaximum": 11, "label": "X1.1 Keys"}, lesson, ids)
    "the line item 'X1.1 Keys' is lesson X1.1's column (its resourceId), not X1.2's"
    >>> not_the_lessons({"scoreMaximum": 11, "tag": "qkv-lesson", "label": "Keys"}, lesson, ids)
    "the line item 'Keys' counts 11 points where X1.2 counts 8: it is not the lesson's column"
    """
    label = str(item.get("label") or item.get("id") or "")[:120]
    resource, ours = item.get("resourceId"), item.get("tag") == LINE_ITEM_TAG
    if isinstance(resource, str) and resource:
        if resource == lesson.id:
            return None
        if resource in lesson_ids or ours:
            column = f"lesson {resource[:40]}'s column (its resourceId)"
            return f"the line item {label!r} is {column}, not {lesson.id}'s"
    maximum = item.get("scoreMaximum")
    if (ours or linked) and maximum != max(lesson.points, 1):
        return (
            f"the line item {label!r} counts {maximum} points where {lesson.id} counts "
            f"{max(lesson.points, 1)}: it is not the lesson's column"
        )
    return None


def read(client: httpx.Client, token: str, lineitem_url: str) -> dict[str, Any]:
    """The line item at ``lineitem_url``, as the LMS describes it (its JSON)."""
    item = _json(_call(client, "GET", lineitem_url, token, accept=LINE_ITEM_TYPE), lineitem_url)
    if not isinstance(item, dict):
        raise ServiceUnavailable(f"The LMS's line item at {lineitem_url} is not a JSON object.")
    return item


def kept_back(platform: PlatformRecord, lesson: PickedLesson, reason: str) -> str:
    """The instructor's sentence for scores kept back from another lesson's column.

    Examples
    --------
    >>> from datetime import datetime
    >>> platform = PlatformRecord("https://lms.example", "c", ("d",), "a", "t", "j", datetime(2026, 1, 1))
    >>> sentence = kept_back(platform, PickedLesson("X1.2", "Scores", 8), "X1.1's line item")
    >>> sentence.startswith("Not sent: the launch of X1.2 from https://lms.example gave X1.1's line item,")
    True
    """
    return (
        f"Not sent: the launch of {lesson.id} from {platform.issuer} gave {reason}, and this LMS offers "
        f"no line-items service with which qkv could find or make {lesson.id}'s own, so the score could "
        f"overwrite another lesson's grade. This LMS keeps one gradebook column per link (Open edX "
        f"does, for every lesson deep-linked into one block): give {lesson.id} a link of its own."
    )


def lessons_column(
    client: httpx.Client,
    tokens: ServiceTokens,
    platform: PlatformRecord,
    launch: Launch,
    lesson: PickedLesson,
    lesson_ids: Collection[str],
    links: LtiLinks,
    due_at: datetime | None = None,
) -> Column | None:
    """Where the launched learner's scores on ``lesson`` go: the launch's own line item when it is the
    lesson's (or cannot be read: the spec lets a tool post to the launch's line item), else the lesson's
    own line item found or made in the course's container, else the launch's line item with a refusal;
    None without any. A line item qkv makes ends at ``due_at`` (the lesson's due date in the course).

    Raises
    ------
    ServiceUnavailable
        When the LMS cannot be asked for its container's line items.
    StoreError
        When the database cannot hold the find-or-create's lock.
    """
    claimed, container = launch.lineitem_url, launch.lineitems_url
    if claimed is None:
        if container is None:
            return None
        args = (client, tokens, platform, container, lesson, launch.resource_link_id, due_at)
        return found_or_made(*args, links=links)
    if launch.read_scope is None:
        return Column(claimed)
    try:
        item = read(client, tokens.token(platform, (launch.read_scope,)), claimed)
    except ServiceUnavailable as error:  # unreadable is not another lesson's: the spec lets a tool post
        log.info("the launch's line item %s could not be read, used as sent: %s", claimed, error)
        return Column(claimed)
    reason = not_the_lessons(item, lesson, lesson_ids, linked=launch.custom_lesson is not None)
    if reason is None:
        return Column(claimed, ends_at=end_of(item))
    if container is not None:
        # The link's own column is another lesson's: the lesson's is made bound to no link, so an LMS
        # that gives each link one grade (Open edX's block) does not take this score as that link's grade.
        return found_or_made(client, tokens, platform, container, lesson, None, due_at, links=links)
    return Column(claimed, kept_back(platform, lesson, reason))


__all__ = [
    "Column",
    "create",
    "end_of",
    "find",
    "find_item",
    "find_or_create",
    "found_or_made",
    "kept_back",
    "lessons_column",
    "not_the_lessons",
    "read",
    "with_query",
]
