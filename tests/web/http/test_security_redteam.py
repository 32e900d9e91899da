"""Red-team findings against the API: each request here got a 500 before its fix.

- a JSON body spelling a lone surrogate (``"\\ud800"``) failed when the route encoded the code as UTF-8;
- a NUL character (``"\\u0000"``) in code or an answer failed when PostgreSQL refused to store it;
- code whose exception message held a lone surrogate, or whose returned values were ragged lists, made the
  grader (and then the JSON response) fail.
"""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from qkv.grading import sandbox_available
from tests.web.backend_fixtures import API, CORRECT_SOLUTION, Browser

SURROGATE = "The request body contains a lone surrogate (\\ud800) in a string; text must be valid Unicode."
NUL = "The request body contains a NUL character (\\u0000) in a string, which this server does not accept."


@pytest.fixture
def learner(app: FastAPI) -> Browser:
    browser = Browser(app)
    browser.client = TestClient(app, raise_server_exceptions=False)  # see the status a client would get
    return browser.open_lesson()


def post_raw(browser: Browser, path: str, body: str) -> object:
    return browser.client.post(
        path,
        content=body.encode("utf-8"),
        headers={"X-CSRF-Token": browser.token, "content-type": "application/json"},
    )


@pytest.mark.parametrize(
    ("path", "field", "sentence"),
    [
        (f"{API}/code", '"code": "x = \'\\ud800\'"', SURROGATE),
        (f"{API}/answers", '"answer": "\\udfff"', SURROGATE.replace("ud800", "udfff")),
        (f"{API}/code", '"code": "x = 1\\u0000"', NUL),
        (f"{API}/answers", '"answer": "3\\u0000"', NUL),
    ],
    ids=["surrogate-in-code", "surrogate-in-answer", "nul-in-code", "nul-in-answer"],
)
def test_text_no_store_or_encoder_takes_is_refused_with_400(
    learner: Browser, path: str, field: str, sentence: str
) -> None:
    exercise = "functions" if path.endswith("/code") else "q"
    response = post_raw(learner, path, f'{{"exercise_id": "{exercise}", {field}}}')
    assert response.status_code == 400  # type: ignore[attr-defined]
    assert response.json() == {"detail": sentence}  # type: ignore[attr-defined]


@pytest.mark.sandbox
@pytest.mark.timeout(60)
@pytest.mark.skipif(
    not sandbox_available(), reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
def test_code_with_odd_results_is_graded_not_a_500(learner: Browser) -> None:
    code = CORRECT_SOLUTION.replace("return (n_q, d_v)", 'raise ValueError("no shape for \\ud800")').replace(
        "return X @ Wq, X @ Wk, X @ Wv", "return [[1.0], [2.0, 3.0]], X @ Wk, X @ Wv"
    )
    response = learner.submit_code(code)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["status"] == "fail"
    messages = [test["message"] or "" for test in result["tests"]]
    assert "output_shape raised ValueError (line 17 of your file): no shape for \\ud800" in messages
    assert "Expected Q to be an array, but got [[1.0], [2.0, 3.0]]." in messages
    json.dumps(result, ensure_ascii=False).encode("utf-8")
