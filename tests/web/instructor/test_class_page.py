"""The class at a glance: the grid, "stuck now", questions as learners saw them, item statistics, numbers
that agree with every export, the live fragments and the paged timeline."""

from __future__ import annotations

import csv
import io
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.lessons import load_catalog
from qkv.web.instructor.exports import counted_exercises
from tests.web.instructor.test_routes import HTML, _app, sign_in
from tests.web.instructor_seed import (
    ANN,
    AREA_HINT,
    BEN,
    CY,
    DEE,
    FORMULA_NAME,
    LESSON_ID,
    PERIMETER_HINT,
    seed_class,
)


def _class(make_app: Callable[..., FastAPI], **settings: Any) -> FastAPI:
    app = _app(make_app, **settings)
    seed_class(app.state.qkv.store)
    return app


def _csv(client: TestClient, name: str) -> list[dict[str, str]]:
    response = client.get(f"/instructor/export/{name}")
    assert response.status_code == 200, response.text
    assert "\r\n" in response.text
    return list(csv.DictReader(io.StringIO(response.text)))


def test_the_grid_shows_each_lesson_as_text_and_the_current_exercise(
    make_app: Callable[..., FastAPI],
) -> None:
    client = sign_in(_class(make_app))
    rows = {row["id"]: row for row in client.get("/api/instructor/class").json()["rows"]}
    assert [(c["solved"], c["of"], c["word"]) for c in rows[ANN]["cells"]] == [(2, 2, "done")]
    assert [(c["solved"], c["word"]) for c in rows[BEN]["cells"]] == [(1, "in progress")]
    assert [(c["solved"], c["word"]) for c in rows[CY]["cells"]] == [(0, "in progress")]
    assert rows[BEN]["current"]["exercise_id"] == "shapes"
    page = client.get("/instructor/class", headers=HTML).text
    assert '2/2 <span class="cell-word">done</span>' in page  # the cell says it in words, not colour alone
    assert 'class="cell cell-done"' in page


def test_the_grid_sorts_and_filters_without_javascript(make_app: Callable[..., FastAPI]) -> None:
    client = sign_in(_class(make_app))

    def names(query: str) -> list[str]:
        return [
            row["display_name"] or row["id"]
            for row in client.get(f"/api/instructor/class?{query}").json()["rows"]
        ]

    by_name = [FORMULA_NAME, "Ann", DEE, "Ben"]  # Dee has no name: "anonymous 00000000"
    assert names("sort=name") == by_name
    assert names("sort=name&order=desc") == by_name[::-1]
    by_progress = names("sort=progress")
    assert by_progress[0] == "Ann" and by_progress[-1].startswith("=HYPERLINK")
    assert names("q=NN") == ["Ann"] and names("q=anonymous") == [DEE]
    assert names("show=not-started") == [names("show=not-started")[0]] and len(names("show=not-started")) == 1
    page = client.get("/instructor/class?sort=progress&order=desc&q=b", headers=HTML).text
    assert page.count('scope="row"><a href="/instructor/learners/') == 1 and "Ben" in page
    assert 'href="/instructor/class?sort=progress&amp;order=asc&amp;show=all&amp;q=b"' in page
    bad = client.get("/instructor/class?sort=age", headers=HTML)
    assert bad.status_code == 400 and "cannot be sorted by" in bad.text
    assert client.get("/api/instructor/class?show=everyone").status_code == 400
    assert client.get(f"/api/instructor/class?q={'x' * 81}").json()["detail"].startswith("The name filter")


def test_a_stuck_learner_is_listed_with_their_latest_wrong_answer(make_app: Callable[..., FastAPI]) -> None:
    app = _class(make_app, stuck_attempts=2)
    client = sign_in(app)
    page = client.get("/instructor", headers=HTML).text
    stuck = page[page.index('id="stuck-now"') : page.index('class="chapter"')]
    assert "2 failed attempts" in stuck  # the rule is said on the page
    # Cy's two readable wrong answers (13 twice) make two attempts; Ben's failing program two more.
    assert "stuck on <strong>T1.1 / area</strong>" in stuck
    assert f'href="/instructor/learners/{CY}?exercise=T1.1/area"' in stuck
    assert "Latest wrong answer" in stuck and "<code>abc</code>" not in stuck  # unreadable is not wrong
    assert "<code> 13 </code>" in stuck and "no named mistake matched" in stuck
    assert "{{" not in stuck and 'class="literal"' in stuck  # the question with its numbers
    assert "Latest failing program" in stuck
    fragment = client.get("/instructor/live/stuck", headers=HTML).text
    assert fragment.lstrip().startswith('<div data-live-count="2"')
    relaxed = sign_in(_app(make_app, stuck_attempts=9), "Ada")  # another server on the same class
    assert "Nobody is stuck right now." in relaxed.get("/instructor", headers=HTML).text


def test_a_named_mistake_is_shown_with_its_sentence_in_its_variant(make_app: Callable[..., FastAPI]) -> None:
    app = _class(make_app, stuck_attempts=1)
    store = app.state.qkv.store
    lesson = app.state.qkv.catalog.lesson(LESSON_ID)
    perimeter = str(lesson.variant(5)["perimeter"])
    feedback = lesson.check("area", perimeter, variant_seed=5)
    assert feedback.mistake == "perimeter"
    store.progress.record_answer(
        CY,
        LESSON_ID,
        "area",
        perimeter,
        correct=False,
        message=feedback.message,
        variant_seed=5,
        mistake="perimeter",
    )
    page = sign_in(app).get("/instructor", headers=HTML).text
    item = page[page.index(f"/instructor/learners/{CY}") :]
    item = item[: item.index("</li>")]
    texts = lesson.texts("area", 5)
    assert "variant 5" in item and texts.prompt_html in item
    assert "named mistake <code>perimeter</code>" in item and texts.mistakes["perimeter"] in item
    assert texts.prompt_html != lesson.texts("area").prompt_html  # the variant's own numbers


def test_exercises_are_shown_with_their_question_and_mistakes_with_their_sentence(
    make_app: Callable[..., FastAPI],
) -> None:
    app = _class(make_app)
    client = sign_in(app)
    lesson = app.state.qkv.catalog.lesson(LESSON_ID)
    for url in (f"/instructor/lessons/{LESSON_ID}", f"/instructor/lessons/{LESSON_ID}/items"):
        page = client.get(url, headers=HTML).text
        assert "{{" not in page, url
        assert lesson.texts("area").prompt_html in page, url
    items = client.get(f"/instructor/lessons/{LESSON_ID}/items", headers=HTML).text
    assert lesson.texts("area").mistakes["perimeter"] in items


def test_item_statistics_and_their_csv(make_app: Callable[..., FastAPI]) -> None:
    app = _class(make_app)
    app.state.qkv.store.learners.set_display_name(ANN, "Ann")
    rows = {row["exercise_id"]: row for row in _csv(sign_in(app), "items.csv")}
    area = rows["area"]
    # Solvers: Ann in 3 attempts, Ben in 1, Dee in 2.
    assert (area["started"], area["solved"], area["solved_first_try"], area["median_attempts"]) == (
        "4",
        "3",
        "1",
        "2.0",
    )
    assert area["first_try_share"] == "0.3333"
    assert area["question"] and "{{" not in area["question"]
    commonest = [(area[f"wrong_{n}"], area[f"wrong_{n}_count"]) for n in (1, 2, 3)]
    assert commonest[0] == ("13", "2")  # "13" and " 13 " are one answer as the lesson reads it
    named = {area[f"wrong_{n}"]: area[f"wrong_{n}_mistake"] for n in (1, 2, 3)}
    assert named["14"].startswith("perimeter: That is the perimeter")
    assert area["unnamed_wrong_answers"] == "13 ×2 (the page's numbers); 999 ×1 (variant 5)"
    shapes = rows["shapes"]
    assert (shapes["solved"], shapes["median_attempts"], shapes["first_try_share"]) == ("1", "2.0", "0.0")
    assert shapes["wrong_1_count"] == "1" and shapes["wrong_1_mistake"] in (AREA_HINT, PERIMETER_HINT)


def test_every_count_on_the_dashboard_equals_the_exports(make_app: Callable[..., FastAPI]) -> None:
    """A generated class on the built-in chapter, with exercises that do not count toward done."""
    app = make_app()
    catalog = load_catalog()
    app.state.qkv.catalog = catalog
    store = app.state.qkv.store
    chooser = random.Random(26)
    exercises = [(lesson.id, eid) for lesson in catalog.lessons for eid in lesson.exercises]
    learners = [f"00000000-0000-4000-8000-{n:012d}" for n in range(12)]
    for n, learner in enumerate(learners):
        store.learners.set_display_name(learner, f"Learner {n:02d}")
        for lesson_id, exercise_id in chooser.sample(exercises, 15):
            for _ in range(chooser.randint(1, 3)):
                store.progress.record_answer(
                    learner, lesson_id, exercise_id, "1", correct=chooser.random() < 0.4, message="m"
                )
    client = sign_in(app)
    dashboard = client.get("/api/instructor/dashboard").json()
    gradebook = _csv(client, "gradebook.csv")
    solved_rows = Counter((r["lesson_id"], r["exercise_id"]) for r in gradebook if r["solved"] == "True")
    started_rows = Counter((r["lesson_id"], r["exercise_id"]) for r in gradebook if r["submissions"] != "0")
    assert dashboard["learners"] == len({r["learner_id"] for r in gradebook}) == 12
    for chapter in dashboard["chapters"]:
        for lesson in chapter["lessons"]:
            for ex in lesson["exercises"]:
                key = (lesson["id"], ex["id"])
                assert ex["stats"]["solved"] == solved_rows[key], key
                assert ex["stats"]["started"] == started_rows[key], key
            detail = client.get(f"/api/instructor/lessons/{lesson['id']}").json()["lesson"]["exercises"]
            assert [(d["stats"]["started"], d["stats"]["solved"]) for d in detail] == [
                (ex["stats"]["started"], ex["stats"]["solved"]) for ex in lesson["exercises"]
            ]
    lms = {row["learner_id"]: row for row in _csv(client, "lms.csv")}
    grid = client.get("/api/instructor/class").json()
    columns = {
        lesson.id: f"{lesson.id} {lesson.title} (out of {len(counted_exercises(lesson))})"
        for lesson in catalog.lessons
    }
    total_column = next(column for column in next(iter(lms.values())) if column.startswith("total"))
    assert len(grid["rows"]) == len(lms) == 12
    some_not_counted = False
    for row in grid["rows"]:
        for cell in row["cells"]:
            assert str(cell["solved"]) == lms[row["id"]][columns[cell["lesson_id"]]]
            assert cell["of"] == grid["lessons"][cell["lesson_id"]]
        assert str(row["solved"]) == lms[row["id"]][total_column]
        every_solved = sum(1 for r in gradebook if r["learner_id"] == row["id"] and r["solved"] == "True")
        some_not_counted |= every_solved > row["solved"]
    assert some_not_counted  # the generated class does exercise the difference that once disagreed
    page = client.get("/instructor", headers=HTML).text
    assert "as a share of all 12 learners with saved work" in page
    assert re.search(r"solved by \d+ of 12 learners</text>", page)  # each bar says what it is a share of


def test_the_timeline_comes_a_page_at_a_time(make_app: Callable[..., FastAPI]) -> None:
    app = _class(make_app)
    store = app.state.qkv.store
    for n in range(60):
        store.progress.record_answer(ANN, "T1.1", f"extra{n % 3}", str(n), correct=False, message="m")
    client = sign_in(app)
    first = client.get(f"/instructor/learners/{ANN}", headers=HTML).text
    assert "page 1 of 2" in first and 'rel="next"' in first and first.count('class="timeline-item') == 50
    second = client.get(f"/instructor/learners/{ANN}?page=2", headers=HTML).text
    assert second.count('class="timeline-item') == 65 - 50 and 'rel="prev"' in second
    one = client.get(f"/instructor/learners/{ANN}?exercise=T1.1/shapes", headers=HTML).text
    assert one.count('class="timeline-item') == 2
    assert client.get(f"/instructor/learners/{ANN}?page=3", headers=HTML).status_code == 404
    bad = client.get(f"/instructor/learners/{ANN}?exercise=nonsense", headers=HTML)
    assert bad.status_code == 400 and "LESSON/EXERCISE" in bad.text


def test_the_live_grid_reads_the_database_another_server_wrote(make_app: Callable[..., FastAPI]) -> None:
    first = _class(make_app)
    second = make_app()  # a second server on the same SQLite file
    second.state.qkv.catalog = first.state.qkv.catalog
    client = sign_in(first)
    before = client.get("/instructor/live/grid?sort=name", headers=HTML).text
    second.state.qkv.store.progress.record_answer(CY, LESSON_ID, "area", "12", correct=True, message="Right.")
    after = client.get("/instructor/live/grid?sort=name", headers=HTML).text
    assert before != after
    cells = defaultdict(list)
    for row in client.get("/api/instructor/class").json()["rows"]:
        cells[row["id"]] = [c["solved"] for c in row["cells"]]
    assert cells[CY] == [1]
    page = client.get("/instructor/class", headers=HTML).text
    assert 'data-live-src="/instructor/live/grid?sort=name&amp;order=asc&amp;show=all"' in page
    assert '<script type="module" src="/static/instructor-live.js"></script>' in page
    assert "Updated <time" in page


def test_the_stuck_rule_is_set_when_serving_and_refuses_nonsense() -> None:
    import pytest
    from click.testing import CliRunner

    from qkv.cli.serve import serve
    from qkv.web.settings import Settings

    assert (Settings().stuck_attempts, Settings().stuck_minutes) == (3, 10)
    with pytest.raises(ValueError, match="stuck_minutes must be at least 1, but it is 0"):
        Settings(stuck_minutes=0)
    refused = CliRunner().invoke(serve, ["--stuck-attempts", "0"])
    assert refused.exit_code == 2 and "--stuck-attempts" in refused.output
    helped = CliRunner().invoke(serve, ["--help"])
    assert "--stuck-attempts" in helped.output and "--stuck-minutes" in helped.output
