"""Which of this server's pages a launch may open: a lesson (``/lessons/ID``) or the lesson list (``/``, or
``/lti/launch``: the tool's own launch URL, as dynamic registration and deep linking name it, where the
lesson comes from the launch's custom claim)."""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit

from qkv.web.lti.refusal import LaunchRefused

LESSONS_PATH = "/lessons/"
TOOL_PATHS = frozenset({"", "/lti/launch"})  # no lesson in the URL: the list, or the custom claim's


def lesson_target(target_link_uri: str, origin: str, lesson_ids: Collection[str]) -> str | None:
    """The lesson id a launch's target names (None for the lesson list), or a refusal.

    Parameters
    ----------
    target_link_uri : str
        The URL the LMS was told to open.
    origin : str
        This server's ``scheme://host[:port]``.
    lesson_ids : collection of str
        The lessons this server has.

    Raises
    ------
    LaunchRefused
        400 with a sentence, when the URL is not on this server or names no lesson of it.

    Examples
    --------
    >>> lesson_target("https://qkv.example/lessons/X1.1", "https://qkv.example", {"X1.1"})
    'X1.1'
    >>> lesson_target("https://qkv.example/", "https://qkv.example", {"X1.1"}) is None
    True
    >>> lesson_target("https://qkv.example/lti/launch", "https://qkv.example", {"X1.1"}) is None
    True
    >>> lesson_target("https://evil.example/lessons/X1.1", "https://qkv.example", {"X1.1"})
    Traceback (most recent call last):
    ...
    qkv.web.lti.refusal.LaunchRefused: The launch asks for 'https://evil.example/lessons/X1.1', which is ...
    """
    example = f"{origin}/lessons/{next(iter(sorted(lesson_ids)), 'LESSON')}"
    parts = urlsplit(target_link_uri)
    if f"{parts.scheme}://{parts.netloc}".lower() != origin.lower() or parts.username or parts.password:
        raise LaunchRefused(
            400,
            f"The launch asks for {target_link_uri!r}, which is not on this qkv server ({origin}); set the "
            f"tool's target link URI in the LMS to a lesson's URL here, such as {example}.",
        )
    path = parts.path.rstrip("/")
    if path in TOOL_PATHS:
        return None
    lesson_id = path.removeprefix(LESSONS_PATH.rstrip("/")).strip("/")
    if path.startswith(LESSONS_PATH) and lesson_id in lesson_ids:
        return lesson_id
    raise LaunchRefused(
        400,
        f"The launch asks for {target_link_uri!r}, which is not a lesson of this server; use a lesson's "
        f"URL such as {example} (the lessons are {', '.join(sorted(lesson_ids))}).",
    )
