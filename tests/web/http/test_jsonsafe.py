"""The app's JSON responses: always valid JSON, whichever way a document is encoded."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from qkv.web.http.jsonsafe import SafeJSONResponse, finite_or_none

_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_DOCUMENTS = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def _by_the_long_way(content: object) -> bytes:
    safe = finite_or_none(content)
    return json.dumps(safe, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


@given(_DOCUMENTS)
def test_a_document_renders_as_the_copy_made_finite_would(document: object) -> None:
    # Plain and finite documents skip the copy; the rest take it: the bytes must not tell them apart.
    rendered = SafeJSONResponse(document).body
    assert rendered == _by_the_long_way(document)
    json.loads(rendered)  # and it is JSON a browser parses


def test_non_finite_numbers_and_numpy_values_become_plain_json() -> None:
    document = {
        "loss": math.nan,
        "bound": -math.inf,
        "weights": np.array([0.5, np.inf], dtype=np.float32),
        "count": np.int64(3),
        "ok": np.bool_(True),
        "pair": (1, "a"),
    }
    body = json.loads(SafeJSONResponse(document).body)
    assert body == {
        "loss": None,
        "bound": None,
        "weights": [0.5, None],
        "count": 3,
        "ok": True,
        "pair": [1, "a"],
    }


def test_text_is_written_as_utf8_not_escaped() -> None:
    assert SafeJSONResponse({"name": "Zoë → ∑"}).body == '{"name":"Zoë → ∑"}'.encode()
