"""The lesson's attention route: the same steps as /api/attention, but none that show an unearned answer."""

from __future__ import annotations

import numpy as np
from fastapi import FastAPI

from qkv.lessons import load_catalog
from tests.web.backend_fixtures import API, Browser

NAMES = {"scores": "one_scores", "weights": "one_weights", "output": "one_output"}
WORKED = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}


def one_query(browser: Browser) -> dict[str, object]:
    """The Part 1 query of L4.1 that the learner sees (the seed page's), as typed into the explorer."""
    assert browser.progress()["variant_seed"] is None
    return {"q": [1, 2], "K": [[1, 1], [1, 2]], "V": [[0, 3], [3, 1]]}


def test_numbers_of_its_own_get_every_step(browser: Browser) -> None:
    reply = browser.client.post(f"{API}/attention", json=WORKED).json()
    plain = browser.client.post("/api/attention", json=WORKED).json()
    assert reply == {**plain, "withheld": []}


def test_the_pages_own_query_is_withheld_until_each_answer_is_typed(browser: Browser) -> None:
    body = one_query(browser)
    first = browser.client.post(f"{API}/attention", json=body)
    assert first.status_code == 200
    assert first.json() == {
        "withheld": ["scores", "weights", "output"],
        "detail": "These numbers would show the answer to 'scores', 'weights' and 'output' (Part 1: one query "
        "to its output) on this page before you have typed it. Answer those questions first and every step "
        "appears here for these numbers; other numbers work now.",
    }
    assert browser.answer("scores", "2.1213, 3.5355").json()["feedback"]["correct"]
    assert browser.answer("weights", "0.2, 0.8").json()["feedback"]["correct"] is False
    assert browser.client.post(f"{API}/attention", json=body).json()["withheld"] == ["weights", "output"]
    assert browser.answer("weights", "0.1956, 0.8044").json()["feedback"]["correct"]
    assert browser.answer("output", "2.4133, 1.3911").json()["feedback"]["correct"]
    reply = browser.client.post(f"{API}/attention", json=body).json()
    assert reply["withheld"] == [] and reply["weights"] == [0.19557031749304313, 0.8044296825069569]


def test_numbers_typed_another_way_are_withheld_too(browser: Browser) -> None:
    """A rounded query, a key added in between, the query scaled with the scale: the answer still shows."""
    near = {"q": [1.0001, 2], "K": [[1, 1], [1, 2]], "V": [[0, 3], [3, 1]]}
    assert "weights" in browser.client.post(f"{API}/attention", json=near).json()["withheld"]
    extra_key = {"q": [1, 2], "K": [[1, 1], [0, 0], [1, 2]], "V": [[0, 3], [0, 0], [3, 1]]}
    assert browser.client.post(f"{API}/attention", json=extra_key).json()["withheld"] == ["scores"]


def test_another_learner_has_earned_nothing(app: FastAPI, browser: Browser) -> None:
    body = one_query(browser)
    for exercise, answer in (
        ("scores", "2.1213, 3.5355"),
        ("weights", "0.1956, 0.8044"),
        ("output", "2.4133, 1.3911"),
    ):
        assert browser.answer(exercise, answer).json()["feedback"]["correct"]
    assert browser.client.post(f"{API}/attention", json=body).json()["withheld"] == []
    stranger = Browser(app)
    assert stranger.client.post(f"{API}/attention", json=body).json()["withheld"] == [
        "scores",
        "weights",
        "output",
    ]


def test_another_variant_guards_its_own_numbers(browser: Browser) -> None:
    body = one_query(browser)
    response = browser.post(f"{API}/variant", {}).json()
    variant = response["variant"]
    seed_page = load_catalog().lesson("L4.1").variant(None)
    # The seed page's numbers are held back now only for an answer the two variants share (weights
    # drawn from a few score differences may coincide).
    shared = [name for name, key in NAMES.items() if np.allclose(variant[key], seed_page[key], atol=1e-3)]
    assert browser.client.post(f"{API}/attention", json=body).json()["withheld"] == shared
    theirs = {"q": variant["one_q"], "K": variant["one_K"], "V": variant["one_V"]}
    assert browser.client.post(f"{API}/attention", json=theirs).json()["withheld"] == [
        "scores",
        "weights",
        "output",
    ]


def test_bad_input_gets_the_same_sentences_as_the_plain_route(browser: Browser) -> None:
    bad = dict(WORKED, V=[[2, 0]])
    lesson, plain = (
        browser.client.post(f"{API}/attention", json=bad),
        browser.client.post("/api/attention", json=bad),
    )
    assert (lesson.status_code, lesson.json()) == (plain.status_code, plain.json()) == (422, plain.json())
    unknown = browser.client.post("/api/lessons/L9.9/attention", json=WORKED)
    assert unknown.status_code == 404


def test_the_library_routes_refuse_a_lessons_own_numbers_until_they_are_answered(
    app: FastAPI, browser: Browser
) -> None:
    # Issue 39: /api/attention and /api/project computed any lesson's typed answers. They now refuse the
    # numbers whose result holds an answer the learner has not typed yet, on every lesson's page numbers.
    body = one_query(browser)
    refused = browser.client.post("/api/attention", json=body)
    assert refused.status_code == 403
    assert refused.json()["detail"] == (
        "These numbers are those of lesson L4.1 (Queries, keys and values): the result would give away the "
        "answer to 'scores', 'weights', 'output' before it was typed. Open the lesson and answer there; its "
        "page shows every step once you have. Other numbers work here now."
    )
    assert browser.client.post("/api/attention", json=WORKED).status_code == 200  # numbers of its own
    weights = load_catalog().lesson("L4.1").variant(None)["one_weights"]
    leak = {"x": [1], "Wq": [list(weights)], "Wk": [[1, 0]], "Wv": [[0, 1]]}  # q would be the weights
    assert browser.client.post("/api/project", json=leak).status_code == 403
    assert Browser(app).client.post("/api/attention", json=body).status_code == 403  # a new visitor too
    for exercise, answer in (
        ("scores", "2.1213, 3.5355"),
        ("weights", "0.1956, 0.8044"),
        ("output", "2.4133, 1.3911"),
    ):
        assert browser.answer(exercise, answer).json()["feedback"]["correct"]
    # The same weights are the answer of another lesson too (L4.5's two heads), still unanswered there.
    still = browser.client.post("/api/attention", json=body)
    assert still.status_code == 403 and "lesson L4.5" in still.json()["detail"]
    assert "'head-weights'" in still.json()["detail"]
    typed = browser.post(
        "/api/lessons/L4.5/answers", {"exercise_id": "head-weights", "answer": "0.19557, 0.80443"}
    )
    assert typed.json()["feedback"]["correct"]
    assert browser.client.post("/api/attention", json=body).status_code == 200
    assert browser.client.post("/api/project", json=leak).status_code == 200


def test_the_library_routes_guard_the_learners_own_variant(browser: Browser) -> None:
    variant = browser.post(f"{API}/variant", {}).json()["variant"]
    theirs = {"q": variant["one_q"], "K": variant["one_K"], "V": variant["one_V"]}
    refused = browser.client.post("/api/attention", json=theirs)
    assert refused.status_code == 403 and "lesson L4.1" in refused.json()["detail"]


def _typed(vector: list[float]) -> str:
    return ", ".join(f"{number:g}" for number in vector)


def test_the_projection_api_refuses_the_learners_own_variant_until_it_is_typed(browser: Browser) -> None:
    # Issue 43: /api/project computed L4.1's q, k and v for the learner's own variant (whole numbers, which
    # the guard of results alone lets through); the lesson's own x and matrices are now refused.
    variant = browser.post(f"{API}/variant", {}).json()["variant"]
    theirs = {"x": variant["x"], "Wq": variant["Wq"], "Wk": variant["Wk"], "Wv": variant["Wv"]}
    refused = browser.client.post("/api/project", json=theirs)
    assert refused.status_code == 403, refused.text
    assert "lesson L4.1" in refused.json()["detail"] and "'q'" in refused.json()["detail"]
    assert browser.client.post("/api/project", json=dict(theirs, x=[7, -3])).status_code == 200  # another x
    for exercise in ("q", "k", "v"):
        assert browser.answer(exercise, _typed(variant[exercise])).json()["feedback"]["correct"]
    # Typed: the same numbers are computed, unless they are still another lesson's unanswered answer.
    answered = browser.client.post("/api/project", json=theirs)
    assert answered.status_code == 200, answered.text
    assert [answered.json()[name] for name in ("q", "k", "v")] == [variant[n] for n in ("q", "k", "v")]


def test_the_lessons_projection_route_withholds_each_unanswered_result(browser: Browser) -> None:
    page = load_catalog().lesson("L4.1").variant(None)
    body = {"x": page["x"], "Wq": page["Wq"], "Wk": page["Wk"], "Wv": page["Wv"]}
    first = browser.client.post(f"{API}/project", json=body)
    assert first.status_code == 200
    reply = first.json()
    assert (reply["q"], reply["k"], reply["v"], reply["withheld"]) == (None, None, None, ["q", "k", "v"])
    assert "'q', 'k' and 'v'" in reply["detail"]
    assert browser.answer("q", _typed(page["q"])).json()["feedback"]["correct"]
    after = browser.client.post(f"{API}/project", json=body).json()
    assert (after["q"], after["k"], after["withheld"]) == (page["q"], None, ["k", "v"])
    own = browser.client.post(f"{API}/project", json=dict(body, x=[7, -3])).json()
    assert own["withheld"] == [] and all(isinstance(own[name], list) for name in ("q", "k", "v"))
    bad = browser.client.post(f"{API}/project", json=dict(body, Wk=[[0, 1, 0], [1, 0, 0]]))
    assert bad.status_code == 422 and "Wk has 3 columns" in bad.json()["detail"]
