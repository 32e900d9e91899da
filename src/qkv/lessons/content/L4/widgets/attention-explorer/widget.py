"""attention-explorer: one query against a few keys and values, every step of attention on show.

Settings: ``q``, ``K`` and ``V``. The page's script lets the learner edit them and asks the server's
``POST /api/attention`` (the qkv library) for each step; the fallback shows the steps for the settings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import attention, attention_scores
from qkv.grading.display import format_value


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    missing = [f"The attention explorer needs '{key}'." for key in ("q", "K", "V") if key not in settings]
    if missing:
        return missing
    try:
        attention([settings["q"]], settings["K"], settings["V"])
    except (TypeError, ValueError) as error:
        return [f"q, K and V do not fit together: {error}"]
    return []


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return {"q": settings["q"], "K": settings["K"], "V": settings["V"]}


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    q, K, V = [settings["q"]], settings["K"], settings["V"]
    scores = attention_scores(q, K)[0]  # (n_k,)
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    first_only = np.zeros((1, len(K)), dtype=bool)
    first_only[0, 0] = True
    causal = attention(q, K, V, mask=first_only)  # (1, d_v)
    d_k = len(settings["q"])
    rows = "".join(
        f'<tr><th scope="row">{j}</th><td>{format_value(key)}</td><td>{format_value(float(score))}</td>'
        f"<td>{format_value(float(weight))}</td><td>{format_value(value)}</td></tr>"
        for j, (key, score, weight, value) in enumerate(zip(K, scores, weights[0], V, strict=True))
    )
    return (
        f'<p class="widget-inputs">q = {format_value(settings["q"])}, d_k = {d_k}, '
        f"scale 1/√{d_k} ≈ {format_value(1 / math.sqrt(d_k))}</p>"
        '<table class="attention-table"><thead><tr><th scope="col">key</th><th scope="col">k</th>'
        '<th scope="col">score q·k/√d_k</th><th scope="col">weight</th><th scope="col">v</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        f'<p class="widget-output">output = {format_value(output[0].tolist())}; '
        f"with only the first key allowed: {format_value(causal[0].tolist())}</p>"
    )
