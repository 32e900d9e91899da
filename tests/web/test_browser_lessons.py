"""The browser part of the lesson contract: every lesson of the catalog, and the lesson that the contract's
proof adds to a copy of the chapter, gets the same smoke walk in Chromium (``lesson_walk.smoke_walk``):
phone and desktop, no console error, every widget mounted, no answer shown before it is earned, a wrong
typed answer told so, Run on the starter code answered with results.

Nothing here names a lesson: the ids come from the catalog, the new lesson's from ``lesson_contract``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from qkv.lessons import Lesson, load_catalog
from tests import lesson_contract as contract
from tests.web.browser_support import BROWSER, LiveServer, live_app
from tests.web.lesson_walk import smoke_walk

pytestmark = BROWSER

LESSONS = contract.catalog().lessons


@pytest.fixture(scope="module")
def catalog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The real app serving the lessons' catalog (``contract.catalog()``: the built-in one by default)."""
    catalog = contract.catalog() if contract.CONTENT else None
    with live_app(tmp_path_factory.mktemp("catalog-server"), catalog) as server:
        yield server


@pytest.mark.content
@pytest.mark.timeout(180)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_every_lesson_passes_the_smoke_walk(
    catalog_server: LiveServer, chromium: Any, lesson: Lesson
) -> None:
    smoke_walk(chromium, catalog_server.url, lesson, f"smoke-{lesson.id}")


@pytest.fixture(scope="module")
def new_lesson_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Lesson]]:
    """The real app serving a copy of the chapter with one lesson more (as ``qkv serve --content`` would)."""
    content, _, new_id = contract.chapter_with_a_new_lesson(tmp_path_factory.mktemp("new-lesson"))
    catalog = load_catalog(content)
    with live_app(tmp_path_factory.mktemp("new-lesson-server"), catalog) as server:
        yield server, catalog.lesson(new_id)


@pytest.mark.timeout(180)
def test_a_new_lesson_passes_the_smoke_walk(
    new_lesson_server: tuple[LiveServer, Lesson], chromium: Any
) -> None:
    server, lesson = new_lesson_server
    assert lesson.id not in {known.id for known in LESSONS}
    smoke_walk(chromium, server.url, lesson, f"smoke-{lesson.id}")
