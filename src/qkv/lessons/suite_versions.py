"""The version of a lesson's grading: a content hash of its grading data, recorded with every verdict.

A verdict given by one version of a lesson's tests is "graded with an older version of this lesson" once
the author changes them; ``qkv regrade`` grades the stored programs again against today's. The version is
the first 16 hex digits of the SHA-256 of the lesson's ``grading.py`` (the suites' definitions), so the
same file gives the same version on every server.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from qkv.lessons.catalog import Lesson
from qkv.lessons.suites import GRADING_FILE

VERSION_DIGITS = 16
_READ: dict[int, tuple[Lesson, str]] = {}  # by the loaded lesson's identity (kept alive with it)


def grading_version(grading: bytes) -> str:
    """The version of a grading file's bytes.

    Examples
    --------
    >>> grading_version(b"SUITES = {}\\n")
    'c21e1655ffecfd91'
    >>> len(grading_version(b""))
    16
    """
    return hashlib.sha256(grading).hexdigest()[:VERSION_DIGITS]


def suite_version(lesson: Lesson) -> str:
    """The version of ``lesson``'s grading: of its file as it was when first asked for this loaded lesson
    (read once, so a file edited under a running server does not relabel the suite it still grades with).

    Examples
    --------
    >>> from qkv.lessons import load_catalog
    >>> lesson = load_catalog().lessons[0]
    >>> len(suite_version(lesson)) == VERSION_DIGITS
    True
    """
    known = _READ.get(id(lesson))
    if known is not None and known[0] is lesson:
        return known[1]
    path: Path = lesson.source.parent / GRADING_FILE
    try:
        version = grading_version(path.read_bytes())
    except OSError:  # a lesson without code exercises has no grading file
        version = grading_version(b"")
    _READ[id(lesson)] = (lesson, version)
    return version


__all__ = ["VERSION_DIGITS", "grading_version", "suite_version"]
