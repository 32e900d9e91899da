"""residual-block: a pre-norm transformer block as a diagram whose arrows carry shapes, the residual stream
as its main line. Switches turn the residual connections or the layer norms off, or make X ten times larger.

Settings: ``X`` (n, d_model), ``heads`` (dividing d_model) and ``seed`` (for the block's small fixed
weights). The output is computed here for every combination of the switches (qkv.multi_head_attention,
qkv.layer_norm and qkv.gelu, the block's parts); the script only picks one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import gelu, layer_norm, multi_head_attention
from qkv.grading.display import format_value

SETTINGS = ("X", "heads", "seed")


def block_params(d: int, seed: int) -> dict[str, Any]:
    """Small fixed weights for the widget's block, drawn from ``seed`` (the same every time)."""
    rng = np.random.default_rng(seed)

    def draw(*shape: int) -> Any:
        return np.round(rng.normal(0.0, 0.3, size=shape), 2)

    return {
        "ln1_g": np.ones(d),
        "ln1_b": np.zeros(d),
        "Wq": draw(d, d),
        "Wk": draw(d, d),
        "Wv": draw(d, d),
        "Wo": draw(d, d),
        "ln2_g": np.ones(d),
        "ln2_b": np.zeros(d),
        "W1": draw(d, 4 * d),
        "b1": draw(4 * d),
        "W2": draw(4 * d, d),
        "b2": draw(d),
    }


def _forward(X: Any, p: Mapping[str, Any], h: int, residual: bool, norm: bool) -> Any:
    """The block with the residual connections and the layer norms each on or off (X: (n, d))."""

    def normed(Y: Any, gamma: Any, beta: Any) -> Any:
        return layer_norm(Y, gamma, beta) if norm else Y

    attended = multi_head_attention(
        normed(X, p["ln1_g"], p["ln1_b"]), p["Wq"], p["Wk"], p["Wv"], p["Wo"], h, causal=True
    )  # (n, d)
    X = X + attended if residual else attended
    hidden = gelu(normed(X, p["ln2_g"], p["ln2_b"]) @ p["W1"] + p["b1"])  # (n, 4d)
    fed = hidden @ p["W2"] + p["b2"]  # (n, d)
    return X + fed if residual else fed


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    X = np.asarray(settings["X"], dtype=float)  # (n, d)
    n, d = X.shape
    p = block_params(d, settings["seed"])
    views = [
        _view(X * scale, p, settings["heads"], residual, norm) | {"scale": scale}
        for scale in (1, 10)
        for residual in (True, False)
        for norm in (True, False)
    ]
    return {
        "n": n,
        "d": d,
        "heads": settings["heads"],
        "input_norms": np.round(np.linalg.norm(X, axis=1), 4).tolist(),
        "views": views,
    }


def _view(X: Any, p: Mapping[str, Any], h: int, residual: bool, norm: bool) -> dict[str, Any]:
    out = _forward(X, p, h, residual, norm)  # (n, d)
    update = out - X  # (n, d): what the block added to the residual stream
    return {
        "residual": residual,
        "norm": norm,
        "output": np.round(out, 4).tolist(),
        "row_norms": np.round(np.linalg.norm(out, axis=1), 4).tolist(),
        "cosines": np.round(
            (out * X).sum(axis=1) / (np.linalg.norm(out, axis=1) * np.linalg.norm(X, axis=1)), 4
        ).tolist(),  # (n,): how much each output row still points like its input row
        "update_norms": np.round(np.linalg.norm(update, axis=1), 4).tolist(),
        "input_norms": np.round(np.linalg.norm(X, axis=1), 4).tolist(),
    }


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The block diagram needs '{key}'." for key in SETTINGS if key not in settings]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(SETTINGS)})."
        for key in sorted(set(settings) - set(SETTINGS))
    ]
    if problems:
        return problems
    try:
        X = np.asarray(settings["X"], dtype=float)
    except (TypeError, ValueError) as error:
        return [f"X must be a matrix of numbers: {error}"]
    h, seed = settings["heads"], settings["seed"]
    if X.ndim != 2 or X.shape[0] < 1:
        return [f"X must be a matrix (n, d_model), not an array of shape {X.shape}."]
    if isinstance(h, bool) or not isinstance(h, int) or h <= 0 or X.shape[1] % h:
        problems.append(f"heads must be a number of heads that divides d_model = {X.shape[1]}, not {h!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(f"seed must be a whole number of 0 or more, not {seed!r}.")
    return problems


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    made = config(settings, names)
    n, d = made["n"], made["d"]
    rows = "".join(
        f'<tr><th scope="row">{"on" if view["residual"] else "off"}</th>'
        f"<td>{'on' if view['norm'] else 'off'}</td><td>{format_value(view['row_norms'])}</td>"
        f"<td>{format_value(view['cosines'])}</td></tr>"
        for view in made["views"]
        if view["scale"] == 1
    )
    return (
        f'<p class="widget-inputs">X ({n}, {d}) → LN₁ → attention ({n}, {d}) → + → LN₂ → MLP ({n}, {4 * d}) '
        f"→ ({n}, {d}) → + → output ({n}, {d}). Row norms of X: {format_value(made['input_norms'])}.</p>"
        '<table class="block-table"><thead><tr><th scope="col">residual</th><th scope="col">layer norms</th>'
        '<th scope="col">row norms of the output</th>'
        '<th scope="col">cosine of each output row with its input row</th>'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )
