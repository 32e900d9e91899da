"""Reading a rendered lesson page in the content tests: its text without tags, and values as typed."""

from __future__ import annotations

import html
import re


def text_of(fragment: str) -> str:
    """The text of an HTML fragment, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def typed(value: object) -> str:
    """A value as a learner would type it, with every digit kept."""
    if isinstance(value, list):
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    return repr(float(value))  # type: ignore[arg-type]
