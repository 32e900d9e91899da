"""Finding a lesson's line item in a course by its ``resourceId``, and making it only when it is missing.

A launch may carry the AGS line-items service (``lineitems`` and the line-item scope) but no ``lineitem``
of its own: a link added without a gradebook column, a course-navigation launch, or a lesson deep-linked a
second time (qkv then leaves ``lineItem`` out, since the column exists). qkv then asks the course's line
items for the one whose ``resourceId`` is the lesson, and creates it only if there is none, so choosing
the same lesson twice in a course makes no second column (PrairieLearn learned this the hard way). The
look-up and creation of one course and lesson are serialised within a server.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from qkv.store.lti.platforms import PlatformRecord
from qkv.web.lti.claims import LINEITEM_SCOPE
from qkv.web.lti.deep_linking import LINE_ITEM_TAG, PickedLesson
from qkv.web.lti.service_tokens import ServiceTokens, ServiceUnavailable

CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
MAX_PAGES = 20
_locks: dict[tuple[str, str], threading.Lock] = {}
_locks_guard = threading.Lock()


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


def _lock_for(lineitems_url: str, resource_id: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault((lineitems_url, resource_id), threading.Lock())


def find_or_create(
    client: httpx.Client,
    tokens: ServiceTokens,
    platform: PlatformRecord,
    lineitems_url: str,
    lesson: PickedLesson,
    resource_link_id: str | None = None,
    due_at: datetime | None = None,
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
    """
    with _lock_for(lineitems_url, lesson.id):
        token = tokens.token(platform, (LINEITEM_SCOPE,))
        found = find(client, token, lineitems_url, lesson.id)
        if found is not None:
            return found
        return create(client, token, lineitems_url, lesson, resource_link_id, due_at)


def find(client: httpx.Client, token: str, lineitems_url: str, resource_id: str) -> str | None:
    """The URL of the first line item whose resourceId is ``resource_id``, following the pages; or None."""
    url: str | None = with_query(lineitems_url, resource_id=resource_id)
    for _ in range(MAX_PAGES):
        if url is None:
            return None
        response = _call(client, "GET", url, token, accept=CONTAINER_TYPE)
        items = _json(response, url)
        for item in items if isinstance(items, list) else []:
            # The LMS may ignore the filter: check the resourceId ourselves.
            if isinstance(item, dict) and item.get("resourceId") == resource_id and item.get("id"):
                return str(item["id"])
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


__all__ = ["create", "find", "find_or_create", "with_query"]
