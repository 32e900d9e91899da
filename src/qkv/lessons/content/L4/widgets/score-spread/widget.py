"""score-spread: why scores are divided by √d_k. For each key size, random queries against random keys:
the spread of the raw and the scaled scores, and the softmax weights each gives.

Settings (all optional): ``sizes`` (the key sizes offered), ``keys``, ``queries`` and ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import attention_scores, softmax
from qkv.grading.display import format_value

SETTINGS = {"sizes", "keys", "queries", "seed"}
DEFAULT_SIZES = [4, 16, 64, 256, 512]


def _settings(settings: Mapping[str, Any]) -> tuple[list[int], int, int, int]:
    return (
        list(settings.get("sizes", DEFAULT_SIZES)),
        settings.get("keys", 48),
        settings.get("queries", 16),
        settings.get("seed", 0),
    )


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [
        f"Unknown setting '{key}' (known: keys, queries, seed, sizes)."
        for key in sorted(set(settings) - SETTINGS)
    ]
    sizes = settings.get("sizes", DEFAULT_SIZES)
    if not isinstance(sizes, list) or not 1 <= len(sizes) <= 8 or not all(_whole(n, 1, 1024) for n in sizes):
        problems.append(f"sizes must be a list of 1 to 8 whole numbers from 1 to 1024, not {sizes!r}.")
    for key, low, high, default in (("keys", 2, 64, 48), ("queries", 1, 64, 16), ("seed", 0, 2**32 - 1, 0)):
        if not _whole(settings.get(key, default), low, high):
            problems.append(f"{key} must be a whole number from {low} to {high}, not {settings[key]!r}.")
    return problems


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _rows(settings: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per size: one query's raw and scaled scores, their softmax weights, and the spread over all queries."""
    sizes, n_keys, n_queries, seed = _settings(settings)
    rows = []
    for d_k in sizes:
        rng = np.random.default_rng([seed, d_k])
        Q = rng.standard_normal((n_queries, d_k))  # (n_q, d_k)
        K = rng.standard_normal((n_keys, d_k))  # (n_k, d_k)
        raw = attention_scores(Q, K, scale=1.0)  # (n_q, n_k)
        scaled = attention_scores(Q, K)  # (n_q, n_k)
        rows.append(
            {
                "d_k": d_k,
                "root": _rounded(math.sqrt(d_k)),
                "raw": _rounded(raw[0]),
                "scaled": _rounded(scaled[0]),
                "raw_weights": _rounded(softmax(raw[0])),
                "scaled_weights": _rounded(softmax(scaled[0])),
                "raw_spread": _rounded(raw.std()),
                "scaled_spread": _rounded(scaled.std()),
            }
        )
    return rows


def _rounded(value: Any) -> Any:
    return np.round(np.asarray(value, dtype=float), 4).tolist()


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    _, n_keys, n_queries, _ = _settings(settings)
    return {"keys": n_keys, "queries": n_queries, "rows": _rows(settings)}


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    _, n_keys, n_queries, _ = _settings(settings)
    rows = "".join(
        f'<tr><th scope="row">{row["d_k"]}</th><td>{format_value(row["root"])}</td>'
        f"<td>{format_value(row['raw_spread'])}</td><td>{format_value(row['scaled_spread'])}</td>"
        f"<td>{format_value(max(row['raw_weights']))}</td><td>{format_value(max(row['scaled_weights']))}</td></tr>"
        for row in _rows(settings)
    )
    return (
        f'<p class="widget-inputs">{n_queries} random queries against {n_keys} random keys, every component '
        "drawn from a standard normal distribution.</p>"
        '<div class="table-scroll"><table class="spread-table"><thead><tr><th scope="col">d_k</th>'
        '<th scope="col">√d_k</th><th scope="col">spread of raw scores</th>'
        '<th scope="col">spread of scaled scores</th><th scope="col">largest weight, raw</th>'
        f'<th scope="col">largest weight, scaled</th></tr></thead><tbody>{rows}</tbody></table></div>'
    )
