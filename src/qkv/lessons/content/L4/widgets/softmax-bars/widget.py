"""softmax-bars: a slider per score, the softmax weights as bars and the output they give; a switch adds
1000 to every score, where the textbook formula overflows and the one that subtracts the maximum does not.

Settings: ``scores`` (2 to 6 numbers) and ``V`` (one row of 1 to 4 numbers per score).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import softmax
from qkv.grading.display import format_value

SETTINGS = {"scores", "V"}
BIG_SHIFT = 1000.0


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"Unknown setting '{key}' (known: V, scores)." for key in sorted(set(settings) - SETTINGS)]
    scores, values = settings.get("scores"), settings.get("V")
    if not isinstance(scores, list) or not 2 <= len(scores) <= 6 or not all(_real(s) for s in scores):
        return [*problems, f"scores must be a list of 2 to 6 numbers, not {scores!r}."]
    rows_ok = isinstance(values, list) and all(isinstance(row, list) for row in values)
    if not rows_ok or len(values) != len(scores):
        return [*problems, f"V must have one row per score ({len(scores)} rows), not {values!r}."]
    widths = {len(row) for row in values}
    if len(widths) != 1 or not 1 <= widths.pop() <= 4 or not all(_real(v) for row in values for v in row):
        problems.append(f"The rows of V must be 1 to 4 numbers each, all of the same length, not {values!r}.")
    return problems


def _real(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _numbers(settings: Mapping[str, Any]) -> dict[str, Any]:
    scores = np.asarray(settings["scores"], dtype=float)  # (n_k,)
    values = np.asarray(settings["V"], dtype=float)  # (n_k, d_v)
    weights = softmax(scores)  # (n_k,)
    shifted = scores + BIG_SHIFT
    with np.errstate(over="ignore", invalid="ignore"):
        plain = np.exp(shifted) / np.exp(shifted).sum()  # the formula without the max: inf / inf
    return {
        "scores": scores.tolist(),
        "V": values.tolist(),
        "weights": weights.tolist(),
        "output": (weights @ values).tolist(),  # (d_v,)
        "shift": BIG_SHIFT,
        "shifted_weights": softmax(shifted).tolist(),
        "plain_shifted": ["nan" if math.isnan(w) else w for w in plain.tolist()],
    }


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return _numbers(settings)


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    numbers = _numbers(settings)
    rows = "".join(
        f'<tr><th scope="row">{j + 1}</th><td>{format_value(score)}</td><td>{format_value(weight)}</td>'
        f"<td>{format_value(value)}</td></tr>"
        for j, (score, weight, value) in enumerate(
            zip(numbers["scores"], numbers["weights"], numbers["V"], strict=True)
        )
    )
    plain = ", ".join(str(w) for w in numbers["plain_shifted"])
    return (
        '<div class="table-scroll"><table class="bars-table"><thead><tr><th scope="col">key</th>'
        '<th scope="col">score</th><th scope="col">weight</th><th scope="col">value</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        f'<p class="widget-output">output = {format_value(numbers["output"])}</p>'
        f'<p class="widget-output">Every score + {format_value(numbers["shift"])}: weights '
        f"{format_value(numbers['shifted_weights'])} after subtracting the maximum; the plain formula "
        f"gives [{plain}].</p>"
    )
