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

from qkv import attention, attention_scores, project_qkv
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


def _quoted(text: str) -> str:
    return f"“{html.escape(text)}”" if text else ""


# name -> (check the config against the variant, JSON config for the script, static fallback HTML)
Widget = tuple[
    Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]],
    Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]],
    Callable[[Mapping[str, Any], Mapping[str, Any]], str],
]
WIDGETS: dict[str, Widget] = {
    "projection-sliders": (_check_projection, _projection_config, _render_projection),
    "attention-explorer": (_check_explorer, _explorer_config, _render_explorer),
}


def check_widget(name: str, config: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    """Problems with a widget's configuration, as sentences (empty when it is fine).

    Examples
    --------
    >>> check_widget("attention-explorer", {"q": [1, 0], "K": [[1, 0]], "V": [[2, 0]]}, {})
    []
    >>> check_widget("sparkles", {}, {})
    ["There is no widget called 'sparkles' (known: attention-explorer, projection-sliders)."]
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
