"""The lesson API and pages, in-process against the real app: answers, progress, variants, names, errors."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from qkv.lessons import BUILTIN_CONTENT, load_catalog
from qkv.web.app import create_app
from qkv.web.settings import Settings
from tests.web.backend_fixtures import API, LESSON_URL, SECRET, Browser, learner_id_of


def test_the_lesson_page_sets_a_learner_cookie_and_embeds_a_csrf_token(app: FastAPI) -> None:
    learner = Browser(app)
    page = learner.client.get(LESSON_URL, headers={"accept": "text/html"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>Queries, keys and values</h1>" in page.text
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("qkv_learner=")
    for flag in ("HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="):
        assert flag in cookie
    assert re.search(r'<meta name="csrf-token" content="[0-9a-f]{64}">', page.text)
    # The same browser keeps its identity: no new cookie on the next visit.
    assert "set-cookie" not in learner.client.get(LESSON_URL).headers


def test_every_section_is_on_the_page_in_order(browser: Browser) -> None:
    page = browser.client.get(LESSON_URL).text
    ids = re.findall(r'<section class="lesson-section" id="([a-z0-9-]+)"', page)
    assert ids[:2] == ["predict-first", "idea"] and ids[-1] == "reference"
    assert ids.index("part1") < ids.index("one-query") < ids.index("part2") < ids.index("quiz")


def test_index_lists_the_lesson_with_the_learners_progress(browser: Browser) -> None:
    browser.answer("q", "3, 2")
    page = browser.client.get("/", headers={"accept": "text/html"}).text
    assert 'href="/lessons/L4.1"' in page
    assert "1 of 11 exercises done" in " ".join(page.split())  # predicting first is not counted


def test_index_shows_the_chapters_whole_outline_with_planned_lessons_unlinked(browser: Browser) -> None:
    page = " ".join(browser.client.get("/", headers={"accept": "text/html"}).text.split())
    catalog = load_catalog()
    (chapter,) = catalog.chapters
    outline, count = chapter.lesson_ids, len(chapter.lesson_ids)
    places = re.findall(r'<span class="lesson-place">([\w.]+) · lesson (\d+) of (\d+)</span>', page)
    assert places == [(lesson_id, str(i), str(count)) for i, lesson_id in enumerate(outline, start=1)]
    written = [lesson.id for lesson in catalog.lessons]
    assert page.count('class="lesson-card is-planned"') == count - len(written)
    for lesson_id in outline:
        assert (f'href="/lessons/{lesson_id}"' in page) == (lesson_id in written), lesson_id
    assert ("Not written yet." in page) == (len(written) < count)


def test_wrong_then_right_answer_is_saved_and_counted(browser: Browser) -> None:
    wrong = browser.answer("q", "3, 1")
    assert wrong.status_code == 200
    assert wrong.json()["feedback"]["correct"] is False
    assert wrong.json()["progress"]["exercises"]["q"]["status"] == "attempted"

    right = browser.answer("q", "3, 2").json()
    assert right["feedback"] == {
        "correct": True,
        "message": "Correct: q = [3, 2].",
        "counted_as_attempt": True,
    }
    entry = right["progress"]["exercises"]["q"]
    assert (entry["status"], entry["attempts"], entry["last_answer"]) == ("correct", 2, "3, 2")
    assert (right["progress"]["done"], right["progress"]["total"]) == (1, 11)


def test_a_format_error_costs_no_attempt(browser: Browser) -> None:
    body = browser.answer("k", "three").json()
    assert body["feedback"]["counted_as_attempt"] is False
    assert body["feedback"]["message"].startswith("I could not read 'three' as a number")
    assert body["progress"]["exercises"]["k"]["attempts"] == 0


def test_the_right_value_typed_too_coarsely_costs_no_attempt(browser: Browser) -> None:
    lesson = load_catalog().lesson("L4.1")
    exercise = next(
        ex for ex in lesson.exercises.values()
        if ex.kind == "numeric" and any(v != round(v, 1) for v in lesson.variant(None)[ex.answer])
    )  # fmt: skip
    coarse = ", ".join(f"{value:.1f}" for value in lesson.variant(None)[exercise.answer])
    body = browser.answer(exercise.id, coarse).json()
    assert body["feedback"]["counted_as_attempt"] is False
    assert body["feedback"]["message"].startswith("Right to the 1 decimal you typed")
    assert body["progress"]["exercises"][exercise.id]["attempts"] == 0


def test_reloading_restores_answers_and_feedback(browser: Browser) -> None:
    browser.answer("q", "3, 2")
    browser.answer("averaged", "V")
    browser.answer("quiz", "B")
    restored = browser.page_progress()
    assert restored == browser.progress()
    assert restored["exercises"]["averaged"]["last_answer"] == "V"
    assert restored["exercises"]["quiz"]["status"] == "attempted"
    assert restored["exercises"]["quiz"]["feedback"]["message"].startswith("Not quite.")
    assert restored["exercises"]["v"]["status"] == "untouched"


def test_a_new_variant_changes_the_numbers_and_resets_part1_answers(browser: Browser) -> None:
    browser.answer("q", "3, 2")
    response = browser.post(f"{API}/variant", {})
    assert response.status_code == 200
    body = response.json()
    seed = body["variant"]["seed"]
    assert isinstance(seed, int) and seed > 0
    assert body["progress"]["variant_seed"] == seed
    assert 'id="part1"' in body["sections"]["part1"]
    q = body["progress"]["exercises"]["q"]
    # Solved stays solved, but the old answer belongs to other numbers and is not restored.
    assert (q["status"], q["last_answer"], q["feedback"]) == ("correct", None, None)

    x = body["variant"]["x"]
    Wq = body["variant"]["Wq"]
    expected = [x[0] * Wq[0][j] + x[1] * Wq[1][j] for j in range(2)]
    check = browser.answer("q", f"{expected[0]}, {expected[1]}").json()
    assert check["feedback"]["correct"] is True
    assert browser.page_progress()["variant_seed"] == seed


def test_code_exercises_are_refused_by_the_answer_endpoint(browser: Browser) -> None:
    response = browser.answer("functions", "def f(): pass")
    assert response.status_code == 422
    assert response.json() == {
        "detail": "The exercise 'functions' is a code exercise; send it to /api/lessons/L4.1/code instead."
    }


def test_unknown_exercise_and_lesson_get_sentences(browser: Browser) -> None:
    unknown = browser.answer("nope", "1")
    assert unknown.status_code == 422
    assert unknown.json() == {
        "detail": "The lesson L4.1 has no exercise 'nope'; its exercises are predict, q, k, v, averaged, scores, "
        "weights, output, functions, quiz, doubled, shifted."
    }
    missing = browser.client.get("/api/lessons/L9.9/progress")
    assert missing.status_code == 404
    written = ", ".join(lesson.id for lesson in load_catalog().lessons)
    assert missing.json() == {
        "detail": f"There is no written lesson 'L9.9'; the written lessons are: {written}."
    }
    page = browser.client.get("/lessons/L9.9", headers={"accept": "text/html"})
    assert page.status_code == 404
    assert "There is no written lesson" in page.text and "<html" in page.text


def test_bad_bodies_get_one_sentence_not_a_list(browser: Browser) -> None:
    cases: list[tuple[Any, str]] = [
        ({"exercise_id": "q"}, "The request body is missing the field 'answer'."),
        (
            {"exercise_id": "q", "answer": 3},
            "The request body's field 'answer' is not acceptable: input should be a valid string.",
        ),
        (
            {"exercise_id": "q", "answer": "1", "learner_id": "someone"},
            "The request body has a field 'learner_id' that this endpoint does not take.",
        ),
        (
            [1, 2],
            "The request body must be a JSON object with the documented fields.",
        ),
    ]
    for body, sentence in cases:
        response = browser.post(f"{API}/answers", body)
        assert response.status_code == 422, body
        assert response.json() == {"detail": sentence}, body


def test_answers_over_1000_characters_are_refused(browser: Browser) -> None:
    response = browser.answer("q", "1" * 1001)
    assert response.status_code == 422
    assert "at most 1000 characters" in response.json()["detail"]


def test_display_name_is_saved_and_shown(browser: Browser) -> None:
    saved = browser.post("/api/learner", {"display_name": "  Ada  "})
    assert saved.json() == {"display_name": "Ada"}
    assert 'value="Ada"' in browser.client.get("/").text
    too_long = browser.post("/api/learner", {"display_name": "x" * 81})
    assert too_long.status_code == 422
    assert too_long.json() == {
        "detail": "A display name may have at most 80 characters, but this one has 81."
    }


def test_unknown_paths_and_methods_answer_with_sentences(app: FastAPI) -> None:
    learner = Browser(app)
    assert learner.client.get("/api/nothing").json() == {"detail": "There is nothing at /api/nothing."}
    wrong_method = learner.client.put(f"{API}/answers", json={})
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {"detail": "PUT is not allowed on /api/lessons/L4.1/answers."}


def test_api_reference_and_openapi_document(app: FastAPI) -> None:
    learner = Browser(app)
    spec = learner.client.get("/openapi.json").json()
    assert {"/api/lessons/{lesson_id}/answers", "/api/project", "/api/attention"} <= set(spec["paths"])
    docs = learner.client.get("/docs")
    assert docs.status_code == 200
    assert "<code>POST /api/lessons/{lesson_id}/code</code>" in docs.text
    assert "cdn" not in docs.text.lower()


def test_health_check_reports_the_database_and_grading(app: FastAPI) -> None:
    body = Browser(app).client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["grading"] in {"bubblewrap", "rlimits only (no bubblewrap)"} or body["grading"].startswith(
        "grading is off"
    )


def test_a_database_outage_is_a_503_with_a_sentence(browser: Browser, app: FastAPI) -> None:
    from qkv.store import create_store_engine

    store = app.state.qkv.store
    store.database.engine.dispose()
    store.database.engine = create_store_engine(
        "postgresql+psycopg://qkv:pw@127.0.0.1:1/qkv"
    )  # nothing listens there
    response = browser.answer("q", "3, 2")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json() == {
        "detail": "Your work could not be saved or read just now: the database is not answering. "
        "Try again in a moment."
    }
    page = browser.client.get(LESSON_URL, headers={"accept": "text/html"})
    assert page.status_code == 503
    assert "Your work could not be saved or read just now" in page.text


def _app_with_parts(tmp_path: Path, edit: Callable[[str], str]) -> FastAPI:
    content = tmp_path / "content"
    shutil.copytree(BUILTIN_CONTENT, content, ignore=shutil.ignore_patterns("__pycache__"))
    lesson_md = sorted(content.glob("*/*/lesson.md"))[0]  # the first lesson, L4.1
    lesson_md.write_text(edit(lesson_md.read_text(encoding="utf-8")), encoding="utf-8")
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'parts.sqlite3'}", secret_key=SECRET)
    return create_app(settings, catalog=load_catalog(content))


def test_the_variant_route_returns_every_section_that_changes_with_the_variant(tmp_path: Path) -> None:
    def part2_changes_too(text: str) -> str:
        text = text.replace(
            'title = "Part 2: in code"\n', 'title = "Part 2: in code"\nchanges_with_variant = true\n'
        )
        return text.replace(
            'title = "Check your understanding"\n',
            'title = "Check your understanding"\ncounts_toward_done = false\n',
        )

    browser = Browser(_app_with_parts(tmp_path, part2_changes_too)).open_lesson()
    page = browser.client.get(LESSON_URL).text
    assert 'data-variant-sections="part1 one-query part2"' in page
    body = browser.post(f"{API}/variant", {}).json()
    assert list(body["sections"]) == ["part1", "one-query", "part2"]
    for section_id, html in body["sections"].items():
        assert html.startswith(f'<section class="lesson-section" id="{section_id}"')
    # The quiz no longer counts toward done: it is shown in the panel but left out of the total.
    progress = body["progress"]
    assert progress["total"] == 8
    assert [(p["id"], p["total"]) for p in progress["parts"]] == [
        ("predict-first", 1),
        ("part1", 4),
        ("one-query", 3),
        ("part2", 1),
        ("quiz", 3),
    ]


def test_a_lesson_without_variant_parts_gets_no_sections_and_no_variant_marker(tmp_path: Path) -> None:
    browser = Browser(
        _app_with_parts(tmp_path, lambda text: text.replace("changes_with_variant = true\n", ""))
    ).open_lesson()
    assert 'data-variant-sections=""' in browser.client.get(LESSON_URL).text
    browser.answer("q", "3, 2")
    body = browser.post(f"{API}/variant", {}).json()
    assert body["sections"] == {}
    # Its answers are not tied to a variant any more, so the saved answer is still restored.
    assert body["progress"]["exercises"]["q"]["last_answer"] == "3, 2"


def test_the_progress_document_says_what_is_done(browser: Browser) -> None:
    browser.answer("q", "3, 2")
    browser.answer("quiz", "B")
    progress = browser.progress()
    assert (progress["done"], progress["total"]) == (1, 11)
    predict, part1, one_query, part2, quiz = progress["parts"]
    assert (predict["total"], one_query["total"], quiz["total"]) == (1, 3, 3)
    assert (part1["done"], part1["total"], part1["complete"]) == (1, 4, False)
    assert part1["exercise_ids"] == ["q", "k", "v", "averaged"]
    assert (part2["done"], part2["total"], quiz["done"]) == (0, 1, 0)
    assert progress["exercises"]["q"]["done"] is True
    assert progress["exercises"]["quiz"]["done"] is False


def test_the_index_says_a_chapter_is_complete_only_when_every_lesson_is_done(
    app: FastAPI, browser: Browser
) -> None:
    store = app.state.qkv.store
    learner = learner_id_of(browser)
    lessons = load_catalog().lessons
    assert [lesson.id for lesson in lessons] == load_catalog().chapters[0].lesson_ids  # every lesson written

    def finish(lesson: Any) -> None:
        for exercise in lesson.exercises.values():
            if exercise.kind == "code":
                store.code.record(
                    learner, lesson.id, exercise.id, "# solved", {"status": "pass", "tests": []}
                )
            else:
                store.progress.record_answer(
                    learner, lesson.id, exercise.id, "right", correct=True, message="Right."
                )

    for lesson in lessons[:-1]:
        finish(lesson)
    index = " ".join(browser.client.get("/", headers={"accept": "text/html"}).text.split())
    assert index.count("✓ complete") == len(lessons) - 1 and "Chapter complete" not in index  # one to do
    finish(lessons[-1])
    index = " ".join(browser.client.get("/", headers={"accept": "text/html"}).text.split())
    assert "✓ Chapter complete: every lesson of Attention is done." in index


def test_a_browser_of_an_erased_learner_saves_nothing_and_starts_afresh(app: FastAPI) -> None:
    """After ``qkv learners erase``, a browser still holding the old cookie (or a verdict still in flight)
    saves nothing under the erased id: 410 with a sentence, both cookies cleared; a reload is a new learner."""
    browser = Browser(app).open_lesson()
    assert browser.answer("q", "3, 1").status_code == 200
    erased = learner_id_of(browser)
    assert app.state.qkv.store.personal_data.erase(erased).found

    refused = browser.answer("q", "3, 2")
    assert refused.status_code == 410
    assert refused.json()["detail"].startswith("This browser's learner was erased on request")
    cleared = refused.headers.get_list("set-cookie")
    assert any(c.startswith("qkv_learner=") and "Max-Age=0" in c for c in cleared), cleared
    assert not app.state.qkv.store.learners.has_saved_work(erased)

    browser.client.cookies.clear()
    browser.open_lesson()
    assert browser.answer("q", "3, 2").json()["feedback"]["correct"] is True
    assert learner_id_of(browser) != erased
