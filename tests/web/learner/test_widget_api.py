"""The two calculator endpoints behind the sliders and the attention explorer."""

from __future__ import annotations

import math

import pytest
from fastapi import FastAPI

from tests.web.backend_fixtures import Browser

SEED = {"x": [1, 2], "Wq": [[1, 0], [1, 1]], "Wk": [[0, 1], [1, 0]], "Wv": [[2, 0], [0, 2]]}
WORKED = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}


@pytest.fixture
def client(app: FastAPI) -> Browser:
    return Browser(app)


def test_project_computes_numbers_of_its_own(client: Browser) -> None:
    response = client.client.post("/api/project", json=dict(SEED, x=[7, -3]))
    assert response.status_code == 200
    assert response.json() == {"q": [4.0, -3.0], "k": [-3.0, 7.0], "v": [14.0, -6.0]}
    # The page's own x and matrices compute its unanswered q, k and v (whole numbers): refused.
    refused = client.client.post("/api/project", json=SEED)
    assert refused.status_code == 403 and "'q', 'k', 'v'" in refused.json()["detail"]


def test_project_shape_errors_come_from_the_library(client: Browser) -> None:
    body = dict(SEED, Wk=[[0, 1, 0], [1, 0, 0]])
    response = client.client.post("/api/project", json=body)
    assert response.status_code == 422
    assert response.json() == {"detail": "Wk has 3 columns but Wq has 2; queries and keys must share d_k."}


def test_project_overflow_comes_back_as_null_not_nan(client: Browser) -> None:
    body = dict(SEED, x=[1e308, 1e308])
    response = client.client.post("/api/project", json=body)
    assert response.status_code == 200
    assert "NaN" not in response.text and "Infinity" not in response.text
    assert response.json()["q"] == [None, 1e308]


def test_project_refuses_empty_vectors(client: Browser) -> None:
    response = client.client.post("/api/project", json=dict(SEED, x=[]))
    assert response.status_code == 422
    assert response.json()["detail"].startswith(
        "The request body's field 'x' is not acceptable: list should have"
    )


def test_attention_walks_through_the_worked_example(client: Browser) -> None:
    body = client.client.post("/api/attention", json=WORKED).json()
    assert body["scores"] == [1.0, 0.0]
    assert body["scaled"] == pytest.approx([1 / math.sqrt(2), 0.0])
    assert body["masked"] == body["scaled"]
    assert [round(w, 6) for w in body["weights"]] == [0.669762, 0.330238]
    assert [round(o, 6) for o in body["output"]] == [1.339523, 0.660477]
    assert (body["d_k"], body["allowed"]) == (2, [True, True])


def test_attention_with_the_causal_mask_at_position_0(client: Browser) -> None:
    body = client.client.post("/api/attention", json=dict(WORKED, causal=True, causal_index=0)).json()
    assert body["allowed"] == [True, False]
    assert body["masked"] == [pytest.approx(1 / math.sqrt(2)), None]  # -inf is sent as null
    assert body["weights"] == [1.0, 0.0]
    assert body["output"] == [2.0, 0.0]


def test_attention_shape_errors_and_positions_are_sentences(client: Browser) -> None:
    bad_v = client.client.post("/api/attention", json=dict(WORKED, V=[[2, 0]]))
    assert bad_v.status_code == 422
    assert bad_v.json() == {
        "detail": "V has 1 rows but K has 2 (K (2, 2), V (1, 2)); every key needs exactly one value."
    }
    far = client.client.post("/api/attention", json=dict(WORKED, causal=True, causal_index=5))
    assert far.status_code == 422
    assert far.json() == {
        "detail": "causal_index is 5, but with 2 keys the query's position must be between 0 and 1."
    }


def test_attention_refuses_non_finite_numbers(client: Browser) -> None:
    response = client.client.post(
        "/api/attention",
        content=b'{"q": [NaN, 0], "K": [[1, 0]], "V": [[1]]}',
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "The request body contains NaN; numbers must be finite."}
