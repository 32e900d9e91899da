"""Reading a rendered lesson page in the content tests: its text without tags, its tags balanced, its
widgets' configurations, values as typed, the ways a page could write an answer, and a typed exercise's
named mistakes told apart from its answer."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from typing import Any

import numpy as np

from qkv.lessons.answers import format_value


def text_of(fragment: str) -> str:
    """The text of an HTML fragment, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def widget_configs(fragment: str, name: str) -> list[dict[str, Any]]:
    """The configuration (its ``data-config``, decoded) of every widget ``name`` in a rendered fragment."""
    pattern = rf"<div class=\"widget\" data-widget=\"{re.escape(name)}\" data-config='([^']*)'>"
    return [json.loads(html.unescape(raw)) for raw in re.findall(pattern, fragment)]


def widget_config(fragment: str, name: str) -> dict[str, Any]:
    """The configuration of the widget ``name``, which the fragment must hold exactly once."""
    (config,) = widget_configs(fragment, name)
    return config


def typed(value: object) -> str:
    """A value as a learner would type it, with every digit kept."""
    if isinstance(value, list):
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    return repr(float(value))  # type: ignore[arg-type]


def rounded(values: object, decimals: int) -> str:
    """Numbers written to ``decimals`` places, separated by commas (as a learner might type them)."""
    return ", ".join(f"{value:.{decimals}f}" for value in np.atleast_1d(np.asarray(values, dtype=float)))


def written_forms(value: object) -> list[str]:
    """An answer as a page could write it, to look for it where it must not be: qkv's format, rounded to
    2, 3 or 6 decimals with and without brackets, and each component that is specific enough to mean
    something (not 1, 0.5 or 2.25) alone at 3 and 6 decimals."""
    numbers = np.atleast_1d(np.asarray(value, dtype=float))
    forms = [format_value(np.asarray(value).tolist())]
    for decimals in (2, 3, 6):
        forms += [rounded(numbers, decimals), "[" + rounded(numbers, decimals) + "]"]
    forms += [f"{n:.{d}f}" for n in numbers for d in (3, 6) if round(n, 2) != n]
    return forms


def assert_named_mistakes_told_apart(lesson: Any, exercise_id: str, seed: int | None = None) -> None:
    """On a variant (the seed page by default) a typed exercise's answer and each of its named mistakes are
    computed and differ by more than 0.01 somewhere, and each mistake, typed in full, is named as itself."""
    names = lesson.hooks.namespace(lesson.variant(seed))
    exercise = lesson.exercises[exercise_id]
    keys = [exercise.answer, *(key for key in exercise.mistakes if key in names)]
    assert len(keys) == len(exercise.mistakes) + 1, keys  # every named mistake is computed
    values = [np.asarray(names[key], dtype=float) for key in keys]
    for i, a in enumerate(values):
        for j in range(i + 1, len(values)):
            assert np.max(np.abs(a - values[j])) > 0.01, (keys[i], keys[j])
    for key in keys[1:]:
        feedback = lesson.check(exercise_id, typed(names[key]))
        assert not feedback.correct and feedback.mistake == key, (exercise_id, key, feedback)


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
