"""Reading a rendered lesson page in the content tests: its text without tags, its tags balanced, and
values as typed."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser


def text_of(fragment: str) -> str:
    """The text of an HTML fragment, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def typed(value: object) -> str:
    """A value as a learner would type it, with every digit kept."""
    if isinstance(value, list):
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    return repr(float(value))  # type: ignore[arg-type]


def assert_tags_balanced(fragment: str, where: str) -> None:
    """Every tag the fragment opens is closed, in order (void elements aside)."""
    checker = _TagBalance()
    checker.feed(fragment)
    assert checker.stack == [], f"unclosed tags in {where}: {checker.stack}"


class _TagBalance(HTMLParser):
    VOID = frozenset({"input", "br", "img", "hr", "mspace", "meta", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
