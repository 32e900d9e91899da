"""head-heatmaps: one weights heatmap per head for a short sequence, for each number of heads offered.

Settings: ``tokens``, ``X`` (n, d_model), ``Wq``, ``Wk``, ``Wv``, ``Wo`` (d_model, d_model), ``heads`` (the
numbers of heads to offer, each dividing d_model) and ``initial`` (the one shown first). Every number is
qkv.attention on the heads (qkv.split_heads puts them on a leading batch axis), computed here for each
number of heads, with and without the causal mask; the script only chooses which view to draw.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import attention, merge_heads, split_heads
from qkv.grading.display import format_value

REQUIRED = ("tokens", "X", "Wq", "Wk", "Wv", "Wo", "heads")


def _view(settings: Mapping[str, Any], h: int, causal: bool) -> dict[str, Any]:
    X = np.asarray(settings["X"], dtype=float)  # (n, d_model)
    n, d_model = X.shape
    d_head = d_model // h
    Q, K, V = (split_heads(X @ np.asarray(settings[name], dtype=float), h) for name in ("Wq", "Wk", "Wv"))
    heads, weights = attention(Q, K, V, causal=causal, return_weights=True)  # (h, n, d_head), (h, n, n)
    output = merge_heads(heads) @ np.asarray(settings["Wo"], dtype=float)  # (n, d_model)
    return {
        "h": h,
        "d_head": d_head,
        "causal": causal,
        "weights": np.round(weights, 6).tolist(),
        "output": np.round(output, 6).tolist(),
        "shapes": [
            ["X", [n, d_model]],
            ["Q = X·Wq, split", [h, n, d_head]],
            ["weights per head", [h, n, n]],
            ["head outputs", [h, n, d_head]],
            ["merged", [n, d_model]],
            ["output = merged·Wo", [n, d_model]],
        ],
    }


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tokens": list(settings["tokens"]),
        "d_model": len(settings["X"][0]),
        "initial": settings.get("initial", settings["heads"][0]),
        "views": [_view(settings, h, causal) for h in settings["heads"] for causal in (False, True)],
    }


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The head heatmaps need '{key}'." for key in REQUIRED if key not in settings]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(REQUIRED)}, initial)."
        for key in sorted(set(settings) - {*REQUIRED, "initial"})
    ]
    if problems:
        return problems
    try:
        X = np.asarray(settings["X"], dtype=float)
        d_model = X.shape[1]
        weights = [np.asarray(settings[name], dtype=float) for name in ("Wq", "Wk", "Wv", "Wo")]
    except (TypeError, ValueError, IndexError) as error:
        return [f"X and the weights must be matrices of numbers: {error}"]
    if X.ndim != 2 or any(W.shape != (d_model, d_model) for W in weights):
        problems.append(f"X must be (n, d_model) and every weight (d_model, d_model); X is {X.shape}.")
    if len(settings["tokens"]) != len(X):
        problems.append(f"There are {len(settings['tokens'])} tokens but X has {len(X)} rows.")
    return problems + _check_heads(settings, d_model)


def _check_heads(settings: Mapping[str, Any], d_model: int) -> list[str]:
    heads = settings["heads"]
    if (
        not isinstance(heads, list)
        or not heads
        or any(isinstance(h, bool) or not isinstance(h, int) or h <= 0 or d_model % h for h in heads)
    ):
        return [f"heads must list numbers of heads that divide d_model = {d_model}, not {heads!r}."]
    if settings.get("initial", heads[0]) not in heads:
        return [f"initial = {settings['initial']!r} is not one of heads = {heads}."]
    return []


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    h = settings.get("initial", settings["heads"][0])
    view = _view(settings, h, False)
    tokens = [html.escape(str(token)) for token in settings["tokens"]]
    head_row = "".join(f'<th scope="col">{token}</th>' for token in tokens)
    tables = "".join(
        f'<table class="heatmap-table"><caption>head {i}: weights (rows: queries)</caption>'
        f'<thead><tr><th scope="col">query</th>{head_row}</tr></thead><tbody>'
        + "".join(
            f'<tr><th scope="row">{token}</th>'
            + "".join(f"<td>{format_value(float(w))}</td>" for w in row)
            + "</tr>"
            for token, row in zip(tokens, head, strict=True)
        )
        + "</tbody></table>"
        for i, head in enumerate(view["weights"])
    )
    shapes = " → ".join(f"{label} {tuple(shape)}" for label, shape in view["shapes"])
    return (
        f'<p class="widget-inputs">h = {h}, d_head = {view["d_head"]}</p>'
        f'{tables}<p class="widget-output">{shapes}</p>'
    )
