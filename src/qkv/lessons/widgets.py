"""Interactive widgets: their configuration checks and the HTML they fall back to without JavaScript.

Each widget renders ``<div class="widget" data-widget="NAME" data-config='JSON'>`` around static HTML
that is already correct for the current variant; the web app's JavaScript makes it live.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from qkv import attention, attention_scores, causal_mask, project_qkv, softmax
from qkv.lessons.answers import format_value

__all__ = ["WIDGETS", "check_widget", "render_widget"]

_PROJECTIONS = (("q", "query", "Wq"), ("k", "key", "Wk"), ("v", "value", "Wv"))


_PROJECTION_SETTINGS = ("slider_min", "slider_max", "roles", "numbers", "solved_by")


def _projection_numbers(config: Mapping[str, Any], names: Mapping[str, Any]) -> Mapping[str, Any]:
    """The variant's values the widget shows: the variant itself, or its table named by ``numbers``."""
    table = config.get("numbers")
    return names if table is None else names.get(table, {})


def _projection_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    numbers = _projection_numbers(config, names)
    Q, K, V = project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, d)
    solved_by = dict(config.get("solved_by", {}))
    results = {"q": Q[0].tolist(), "k": K[0].tolist(), "v": V[0].tolist()}
    return {
        "x": numbers["x"],
        "Wq": numbers["Wq"],
        "Wk": numbers["Wk"],
        "Wv": numbers["Wv"],
        # A result that an exercise asks for is not in the page until that exercise is solved.
        **{letter: value for letter, value in results.items() if letter not in solved_by},
        "solved_by": solved_by,
        "slider": {"min": config.get("slider_min", -5), "max": config.get("slider_max", 5), "step": 1},
        "roles": dict(config.get("roles", {})),
    }


def _check_projection(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    table = config.get("numbers")
    problems = []
    if table is not None and not (isinstance(table, str) and isinstance(names.get(table), dict)):
        problems.append(f'numbers must name a table of the variant (such as "example"), not {table!r}.')
    numbers = _projection_numbers(config, names) if not problems else {}
    where = "The variant" if table is None else f"The variant's table '{table}'"
    problems += [
        f"{where} has no '{key}', which this widget shows."
        for key in ("x", "Wq", "Wk", "Wv")
        if not problems and key not in numbers
    ]
    for key in ("slider_min", "slider_max"):
        if key in config and (isinstance(config[key], bool) or not isinstance(config[key], int)):
            problems.append(f"{key} must be a whole number, not {config[key]!r}.")
    if not problems and config.get("slider_min", -5) >= config.get("slider_max", 5):
        problems.append("slider_min must be smaller than slider_max.")
    roles = config.get("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(text, str) for text in roles.values()):
        problems.append('roles must be a table of texts, such as q = "what am I looking for?".')
    solved_by = config.get("solved_by", {})
    if not (
        isinstance(solved_by, dict)
        and set(solved_by) <= {"q", "k", "v"}
        and all(isinstance(exercise, str) for exercise in solved_by.values())
    ):
        problems.append(
            "solved_by must be a table from q, k or v to the id of the exercise that asks for it, "
            'such as q = "q".'
        )
    unknown = set(config) - set(_PROJECTION_SETTINGS)
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(_PROJECTION_SETTINGS)})." for key in sorted(unknown)
    ]
    if not problems:
        try:
            project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])
        except (TypeError, ValueError) as error:
            problems.append(f"The variant's x and weights do not fit together: {error}")
    return problems


def _render_projection(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    numbers = _projection_numbers(config, names)
    x = numbers["x"]
    results = project_qkv([x], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, d)
    roles = config.get("roles", {})
    hidden = config.get("solved_by", {})
    inputs = " ".join(
        f'<span class="widget-input">hidden x[{i}] <output>{format_value(value)}</output></span>'
        for i, value in enumerate(x)
    )
    rows = "".join(
        f'<tr><th scope="row">{kind} {letter} = x·{matrix}</th><td>{format_value(numbers[matrix])}</td>'
        f"<td>{_result_cell(letter, result[0].tolist(), hidden)}</td>"
        f"<td>{_quoted(roles.get(letter, ''))}</td></tr>"
        for (letter, kind, matrix), result in zip(_PROJECTIONS, results, strict=True)
    )
    return (
        f'<p class="widget-inputs">{inputs}</p>'
        '<table class="projection-table"><thead><tr><th scope="col">projection</th>'
        f'<th scope="col">matrix (rows)</th><th scope="col">result for x = {format_value(x)}</th>'
        f'<th scope="col">role</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _result_cell(letter: str, value: list[Any], hidden: Mapping[str, str]) -> str:
    """The result, or "?" while an exercise of the page asks for it (the static page knows no progress)."""
    if letter in hidden:
        note = f"({letter} not shown until you type it correctly below)"
        return f'<span class="hidden-result">?<span class="visually-hidden"> {note}</span></span>'
    return format_value(value)


def _explorer_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return {"q": config["q"], "K": config["K"], "V": config["V"]}


def _check_explorer(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    missing = [f"The attention explorer needs '{key}'." for key in ("q", "K", "V") if key not in config]
    if missing:
        return missing
    try:
        attention([config["q"]], config["K"], config["V"])
    except (TypeError, ValueError) as error:
        return [f"q, K and V do not fit together: {error}"]
    return []


def _render_explorer(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    q, K, V = [config["q"]], config["K"], config["V"]
    scores = attention_scores(q, K)[0]  # (n_k,)
    output, weights = attention(q, K, V, return_weights=True)  # (1, d_v), (1, n_k)
    first_only = np.zeros((1, len(K)), dtype=bool)
    first_only[0, 0] = True
    causal = attention(q, K, V, mask=first_only)  # (1, d_v)
    d_k = len(config["q"])
    rows = "".join(
        f'<tr><th scope="row">{j}</th><td>{format_value(key)}</td><td>{format_value(float(score))}</td>'
        f"<td>{format_value(float(weight))}</td><td>{format_value(value)}</td></tr>"
        for j, (key, score, weight, value) in enumerate(zip(K, scores, weights[0], V, strict=True))
    )
    return (
        f'<p class="widget-inputs">q = {format_value(config["q"])}, d_k = {d_k}, '
        f"scale 1/√{d_k} ≈ {format_value(1 / math.sqrt(d_k))}</p>"
        '<table class="attention-table"><thead><tr><th scope="col">key</th><th scope="col">k</th>'
        '<th scope="col">score q·k/√d_k</th><th scope="col">weight</th><th scope="col">v</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        f'<p class="widget-output">output = {format_value(output[0].tolist())}; '
        f"with only the first key allowed: {format_value(causal[0].tolist())}</p>"
    )


_SPREAD_KEYS = {"sizes", "keys", "queries", "seed"}


def _spread_settings(config: Mapping[str, Any]) -> tuple[list[int], int, int, int]:
    return (
        list(config.get("sizes", [4, 16, 64, 256, 512])),
        config.get("keys", 48),
        config.get("queries", 16),
        config.get("seed", 0),
    )


def _check_spread(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [
        f"Unknown setting '{key}' (known: keys, queries, seed, sizes)."
        for key in sorted(set(config) - _SPREAD_KEYS)
    ]
    sizes = config.get("sizes", [4, 16, 64, 256, 512])
    if not isinstance(sizes, list) or not 1 <= len(sizes) <= 8 or not all(_whole(n, 1, 1024) for n in sizes):
        problems.append(f"sizes must be a list of 1 to 8 whole numbers from 1 to 1024, not {sizes!r}.")
    for key, low, high, default in (("keys", 2, 64, 48), ("queries", 1, 64, 16), ("seed", 0, 2**32 - 1, 0)):
        if not _whole(config.get(key, default), low, high):
            problems.append(f"{key} must be a whole number from {low} to {high}, not {config[key]!r}.")
    return problems


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _spread_rows(config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per size: one query's raw and scaled scores, their softmax weights, and the spread over all queries."""
    sizes, n_keys, n_queries, seed = _spread_settings(config)
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


def _spread_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    _, n_keys, n_queries, _ = _spread_settings(config)
    return {"keys": n_keys, "queries": n_queries, "rows": _spread_rows(config)}


def _render_spread(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    _, n_keys, n_queries, _ = _spread_settings(config)
    rows = "".join(
        f'<tr><th scope="row">{row["d_k"]}</th><td>{format_value(row["root"])}</td>'
        f"<td>{format_value(row['raw_spread'])}</td><td>{format_value(row['scaled_spread'])}</td>"
        f"<td>{format_value(max(row['raw_weights']))}</td><td>{format_value(max(row['scaled_weights']))}</td></tr>"
        for row in _spread_rows(config)
    )
    return (
        f'<p class="widget-inputs">{n_queries} random queries against {n_keys} random keys, every component '
        "drawn from a standard normal distribution.</p>"
        '<div class="table-scroll"><table class="spread-table"><thead><tr><th scope="col">d_k</th>'
        '<th scope="col">√d_k</th><th scope="col">spread of raw scores</th>'
        '<th scope="col">spread of scaled scores</th><th scope="col">largest weight, raw</th>'
        f'<th scope="col">largest weight, scaled</th></tr></thead><tbody>{rows}</tbody></table></div>'
    )


_BARS_KEYS = {"scores", "V"}
_BIG_SHIFT = 1000.0


def _check_bars(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"Unknown setting '{key}' (known: V, scores)." for key in sorted(set(config) - _BARS_KEYS)]
    scores, values = config.get("scores"), config.get("V")
    if not isinstance(scores, list) or not 2 <= len(scores) <= 6 or not all(_real(s) for s in scores):
        return [*problems, f"scores must be a list of 2 to 6 numbers, not {scores!r}."]
    rows_ok = isinstance(values, list) and all(isinstance(row, list) for row in values)
    if not rows_ok or len(values) != len(scores):  # type: ignore[arg-type]
        return [*problems, f"V must have one row per score ({len(scores)} rows), not {values!r}."]
    widths = {len(row) for row in values}  # type: ignore[union-attr]
    if len(widths) != 1 or not 1 <= widths.pop() <= 4 or not all(_real(v) for row in values for v in row):  # type: ignore[union-attr]
        problems.append(f"The rows of V must be 1 to 4 numbers each, all of the same length, not {values!r}.")
    return problems


def _real(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _bars_numbers(config: Mapping[str, Any]) -> dict[str, Any]:
    scores = np.asarray(config["scores"], dtype=float)  # (n_k,)
    values = np.asarray(config["V"], dtype=float)  # (n_k, d_v)
    weights = softmax(scores)  # (n_k,)
    shifted = scores + _BIG_SHIFT
    with np.errstate(over="ignore", invalid="ignore"):
        plain = np.exp(shifted) / np.exp(shifted).sum()  # the formula without the max: inf / inf
    return {
        "scores": scores.tolist(),
        "V": values.tolist(),
        "weights": weights.tolist(),
        "output": (weights @ values).tolist(),  # (d_v,)
        "shift": _BIG_SHIFT,
        "shifted_weights": softmax(shifted).tolist(),
        "plain_shifted": ["nan" if math.isnan(w) else w for w in plain.tolist()],
    }


def _bars_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return _bars_numbers(config)


def _render_bars(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    numbers = _bars_numbers(config)
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


def _quoted(text: str) -> str:
    return f"“{html.escape(text)}”" if text else ""


# -- mask-grid: toggle which keys each query may attend; weights and outputs under a fully-masked policy --

_MASK_GRID_KEYS = ("Q", "K", "V", "padding_length")
_MASK_GRID_MAX = 5  # queries and keys: 2**5 masks per row stay a small config
_LARGE_NEGATIVE = -1e9  # the common shortcut for -inf, shown next to qkv's three policies


def _mask_grid_arrays(config: Mapping[str, Any]) -> tuple[np.ndarray[Any, Any], ...]:
    return tuple(np.asarray(config[key], dtype=float) for key in ("Q", "K", "V"))


def _check_mask_grid(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The mask grid needs '{key}'." for key in ("Q", "K", "V") if key not in config]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(_MASK_GRID_KEYS)})."
        for key in sorted(set(config) - set(_MASK_GRID_KEYS))
    ]
    if problems:
        return problems
    try:
        attention(config["Q"], config["K"], config["V"])
    except (TypeError, ValueError) as error:
        return [f"Q, K and V do not fit together: {error}"]
    n_q, n_k = len(config["Q"]), len(config["K"])
    if not (1 <= n_q <= _MASK_GRID_MAX and 2 <= n_k <= _MASK_GRID_MAX):
        problems.append(
            f"The mask grid shows 1 to {_MASK_GRID_MAX} queries and 2 to {_MASK_GRID_MAX} keys, "
            f"not {n_q} and {n_k}."
        )
    length = config.get("padding_length", n_k - 1)
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= n_k:
        problems.append(f"padding_length must be a whole number from 1 to {n_k}, not {length!r}.")
    return problems


def _finite_or_none(values: np.ndarray[Any, Any]) -> list[float | None]:
    """JSON has no NaN: the nan policy's entries travel as null."""
    return [float(v) if np.isfinite(v) else None for v in values]


def _mask_grid_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    Q, K, V = _mask_grid_arrays(config)  # (n_q, d_k), (n_k, d_k), (n_k, d_v)
    n_q, n_k = len(Q), len(K)
    # rows[i][bits]: query i's weights and output when the keys it may attend are the set bits.
    rows: list[list[dict[str, Any] | None]] = []
    for i in range(n_q):
        entries: list[dict[str, Any] | None] = [None]  # bits 0: no key left, see "dead"
        for bits in range(1, 1 << n_k):
            allowed = [[bool(bits >> j & 1) for j in range(n_k)]]  # (1, n_k)
            O, A = attention(Q[i : i + 1], K, V, mask=allowed, return_weights=True)  # (1, d_v), (1, n_k)
            entries.append({"weights": A[0].tolist(), "output": O[0].tolist()})
        rows.append(entries)
    nothing = np.zeros((n_q, n_k), dtype=bool)
    dead: dict[str, list[dict[str, Any]]] = {}
    for policy in ("zero", "nan"):
        O, A = attention(Q, K, V, mask=nothing, all_masked=policy, return_weights=True)
        dead[policy] = [
            {"weights": _finite_or_none(A[i]), "output": _finite_or_none(O[i])} for i in range(n_q)
        ]
    S = attention_scores(Q, K)  # (n_q, n_k)
    A = softmax(np.where(nothing, S, _LARGE_NEGATIVE))  # (n_q, n_k): every score equal, so uniform
    dead["fill"] = [{"weights": A[i].tolist(), "output": (A @ V)[i].tolist()} for i in range(n_q)]
    errors: dict[str, str] = {}  # the raise policy: qkv's own sentence for each set of dead rows
    for bits in range(1, 1 << n_q):
        mask = np.ones((n_q, n_k), dtype=bool)
        mask[[i for i in range(n_q) if bits >> i & 1]] = False
        try:
            attention(Q, K, V, mask=mask, all_masked="raise")
        except ValueError as error:
            errors[str(bits)] = str(error)
    length = int(config.get("padding_length", n_k - 1))
    causal = causal_mask(n_q, n_k)  # (n_q, n_k)
    presets = {
        "all": np.ones((n_q, n_k), dtype=bool),
        "causal": causal,
        "padding": np.broadcast_to(np.arange(n_k) < length, (n_q, n_k)),
        "no-diagonal": causal & ~np.eye(n_q, n_k, dtype=bool),
        "none": nothing,
    }
    return {
        "Q": Q.tolist(),
        "K": K.tolist(),
        "V": V.tolist(),
        "scores": S.tolist(),
        "rows": rows,
        "dead": dead,
        "errors": errors,
        "padding_length": length,
        "presets": {name: mask.tolist() for name, mask in presets.items()},
        "initial": "causal",
    }


def _render_mask_grid(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    Q, K, V = _mask_grid_arrays(config)
    mask = causal_mask(len(Q), len(K))  # (n_q, n_k): the widget starts on the causal preset
    O, A = attention(Q, K, V, mask=mask, return_weights=True)  # (n_q, d_v), (n_q, n_k)
    head = "".join(f'<th scope="col">key {j}</th>' for j in range(len(K)))
    body = "".join(
        f'<tr><th scope="row">query {i}</th>'
        + "".join(
            f"<td>{format_value(float(w)) if ok else '−∞ (masked)'}</td>"
            for w, ok in zip(A[i], mask[i], strict=True)
        )
        + f"<td>{format_value([round(float(v), 6) for v in O[i]])}</td></tr>"
        for i in range(len(Q))
    )
    return (
        '<p class="widget-inputs">The causal mask (query i sees keys j ≤ i) on Q = '
        f"{format_value(config['Q'])}, K = {format_value(config['K'])}, V = {format_value(config['V'])}:</p>"
        f'<table class="mask-table"><thead><tr><th scope="col">weights</th>{head}'
        f'<th scope="col">output</th></tr></thead><tbody>{body}</tbody></table>'
    )


# name -> (check the config against the variant, JSON config for the script, static fallback HTML)
Widget = tuple[
    Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]],
    Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]],
    Callable[[Mapping[str, Any], Mapping[str, Any]], str],
]
WIDGETS: dict[str, Widget] = {
    "projection-sliders": (_check_projection, _projection_config, _render_projection),
    "attention-explorer": (_check_explorer, _explorer_config, _render_explorer),
    "mask-grid": (_check_mask_grid, _mask_grid_config, _render_mask_grid),
    "score-spread": (_check_spread, _spread_config, _render_spread),
    "softmax-bars": (_check_bars, _bars_config, _render_bars),
}


def check_widget(name: str, config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    """Problems with a widget's configuration, as sentences (empty when it is fine).

    Examples
    --------
    >>> check_widget("attention-explorer", {"q": [1, 0], "K": [[1, 0]], "V": [[2, 0]]}, {})
    []
    >>> check_widget("sparkles", {}, {})[0].startswith("There is no widget called 'sparkles' (known: ")
    True
    """
    if name not in WIDGETS:
        return [f"There is no widget called {name!r} (known: {', '.join(sorted(WIDGETS))})."]
    return WIDGETS[name][0](config, names)


def render_widget(name: str, config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    """The widget's HTML: its JSON config in ``data-config`` and a static fallback inside.

    Examples
    --------
    >>> config = {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
    >>> html_text = render_widget("attention-explorer", config, {})
    >>> html_text.startswith('<div class="widget" data-widget="attention-explorer" data-config=')
    True
    >>> "[1.339523, 0.660477]" in html_text
    True
    """
    _, make_config, fallback = WIDGETS[name]
    config_json = html.escape(json.dumps(make_config(config, names), separators=(",", ":")), quote=True)
    return (
        f'<div class="widget" data-widget="{html.escape(name)}" data-config=\'{config_json}\'>'
        f"{fallback(config, names)}</div>\n"
    )


# ------------------------------------------------------------------------------------------ head-heatmaps
# One weights heatmap per head for a short sequence, for each number of heads the config offers. Every
# number is qkv.attention on the heads' columns (its leading batch axis holds the heads), computed here;
# the script only chooses which of the precomputed views to draw.

_HEATMAP_KEYS = ("tokens", "X", "Wq", "Wk", "Wv", "Wo", "heads")


def _heads_view(config: Mapping[str, Any], h: int, causal: bool) -> dict[str, Any]:
    X = np.asarray(config["X"], dtype=float)  # (n, d_model)
    n, d_model = X.shape
    d_head = d_model // h
    Q, K, V = (
        (X @ np.asarray(config[name], dtype=float)).reshape(n, h, d_head).transpose(1, 0, 2)
        for name in ("Wq", "Wk", "Wv")
    )  # each (h, n, d_head)
    heads, weights = attention(Q, K, V, causal=causal, return_weights=True)  # (h, n, d_head), (h, n, n)
    merged = heads.transpose(1, 0, 2).reshape(n, d_model)  # (n, d_model)
    output = merged @ np.asarray(config["Wo"], dtype=float)  # (n, d_model)
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


def _heatmaps_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tokens": list(config["tokens"]),
        "d_model": len(config["X"][0]),
        "initial": config.get("initial", config["heads"][0]),
        "views": [_heads_view(config, h, causal) for h in config["heads"] for causal in (False, True)],
    }


def _check_heatmaps(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The head heatmaps need '{key}'." for key in _HEATMAP_KEYS if key not in config]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(_HEATMAP_KEYS)}, initial)."
        for key in sorted(set(config) - {*_HEATMAP_KEYS, "initial"})
    ]
    if problems:
        return problems
    try:
        X = np.asarray(config["X"], dtype=float)
        d_model = X.shape[1]
        weights = [np.asarray(config[name], dtype=float) for name in ("Wq", "Wk", "Wv", "Wo")]
    except (TypeError, ValueError, IndexError) as error:
        return [f"X and the weights must be matrices of numbers: {error}"]
    if X.ndim != 2 or any(W.shape != (d_model, d_model) for W in weights):
        problems.append(f"X must be (n, d_model) and every weight (d_model, d_model); X is {X.shape}.")
    if len(config["tokens"]) != len(X):
        problems.append(f"There are {len(config['tokens'])} tokens but X has {len(X)} rows.")
    heads = config["heads"]
    if (
        not isinstance(heads, list)
        or not heads
        or any(isinstance(h, bool) or not isinstance(h, int) or h <= 0 or d_model % h for h in heads)
    ):
        problems.append(f"heads must list numbers of heads that divide d_model = {d_model}, not {heads!r}.")
    elif config.get("initial", heads[0]) not in heads:
        problems.append(f"initial = {config['initial']!r} is not one of heads = {heads}.")
    return problems


def _render_heatmaps(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    h = config.get("initial", config["heads"][0])
    view = _heads_view(config, h, False)
    tokens = [html.escape(str(token)) for token in config["tokens"]]
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


WIDGETS["head-heatmaps"] = (_check_heatmaps, _heatmaps_config, _render_heatmaps)


# ------------------------------------------------------------------------------------------ residual-block
# A pre-norm transformer block as a diagram whose arrows carry shapes, with the residual stream as the main
# line. Its output is computed here (qkv.attention in each head, a layer norm, a tanh-GELU MLP) for every
# combination of the residual connections and the layer norms on or off; the script only picks one.

_BLOCK_KEYS = ("X", "heads", "seed")


def _block_params(d: int, seed: int) -> dict[str, Any]:
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


def _block_forward(X: Any, p: Mapping[str, Any], h: int, residual: bool, norm: bool) -> Any:
    def normed(Y: Any, gamma: Any, beta: Any) -> Any:
        if not norm:
            return Y
        centred = Y - Y.mean(axis=-1, keepdims=True)  # (n, d)
        return centred / np.sqrt(Y.var(axis=-1, keepdims=True) + 1e-5) * gamma + beta

    n, d = X.shape
    Y = normed(X, p["ln1_g"], p["ln1_b"])
    Q, K, V = (
        (Y @ p[name]).reshape(n, h, d // h).transpose(1, 0, 2) for name in ("Wq", "Wk", "Wv")
    )  # each (h, n, d_head)
    heads = np.asarray(attention(Q, K, V, causal=True))  # (h, n, d_head)
    attended = heads.transpose(1, 0, 2).reshape(n, d) @ p["Wo"]  # (n, d)
    X = X + attended if residual else attended
    Z = normed(X, p["ln2_g"], p["ln2_b"]) @ p["W1"] + p["b1"]  # (n, 4d)
    hidden = 0.5 * Z * (1 + np.tanh(math.sqrt(2 / math.pi) * (Z + 0.044715 * Z**3)))
    fed = hidden @ p["W2"] + p["b2"]  # (n, d)
    return X + fed if residual else fed


def _residual_block_config(config: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    X = np.asarray(config["X"], dtype=float)  # (n, d)
    n, d = X.shape
    p = _block_params(d, config["seed"])
    views = []
    for scale in (1, 10):
        for residual in (True, False):
            for norm in (True, False):
                views.append(_block_view(X * scale, p, config["heads"], residual, norm) | {"scale": scale})
    return {
        "n": n,
        "d": d,
        "heads": config["heads"],
        "input_norms": np.round(np.linalg.norm(X, axis=1), 4).tolist(),
        "views": views,
    }


def _block_view(X: Any, p: Mapping[str, Any], h: int, residual: bool, norm: bool) -> dict[str, Any]:
    out = _block_forward(X, p, h, residual, norm)  # (n, d)
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


def _check_residual_block(config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The block diagram needs '{key}'." for key in _BLOCK_KEYS if key not in config]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(_BLOCK_KEYS)})."
        for key in sorted(set(config) - set(_BLOCK_KEYS))
    ]
    if problems:
        return problems
    try:
        X = np.asarray(config["X"], dtype=float)
    except (TypeError, ValueError) as error:
        return [f"X must be a matrix of numbers: {error}"]
    h, seed = config["heads"], config["seed"]
    if X.ndim != 2 or X.shape[0] < 1:
        return [f"X must be a matrix (n, d_model), not an array of shape {X.shape}."]
    if isinstance(h, bool) or not isinstance(h, int) or h <= 0 or X.shape[1] % h:
        problems.append(f"heads must be a number of heads that divides d_model = {X.shape[1]}, not {h!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(f"seed must be a whole number of 0 or more, not {seed!r}.")
    return problems


def _render_residual_block(config: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    made = _residual_block_config(config, names)
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


WIDGETS["residual-block"] = (_check_residual_block, _residual_block_config, _render_residual_block)
