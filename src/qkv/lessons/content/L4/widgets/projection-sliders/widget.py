"""projection-sliders: sliders for a hidden vector x, and its query, key and value x·Wq, x·Wk, x·Wv.

Settings: ``numbers`` (a table of the variant holding x, Wq, Wk and Wv; the variant itself by default),
``slider_min`` and ``slider_max``, ``roles`` (a sentence per projection) and ``solved_by`` (from q, k or v
to the exercise that asks for it: that result stays out of the page until the exercise is solved).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from qkv import project_qkv
from qkv.grading.display import format_value

PROJECTIONS = (("q", "query", "Wq"), ("k", "key", "Wk"), ("v", "value", "Wv"))
SETTINGS = ("slider_min", "slider_max", "roles", "numbers", "solved_by")


def _numbers(settings: Mapping[str, Any], names: Mapping[str, Any]) -> Mapping[str, Any]:
    """The variant's values the widget shows: the variant itself, or its table named by ``numbers``."""
    table = settings.get("numbers")
    return names if table is None else names.get(table, {})


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    table = settings.get("numbers")
    problems = []
    if table is not None and not (isinstance(table, str) and isinstance(names.get(table), dict)):
        problems.append(f'numbers must name a table of the variant (such as "example"), not {table!r}.')
    numbers = _numbers(settings, names) if not problems else {}
    where = "The variant" if table is None else f"The variant's table '{table}'"
    problems += [
        f"{where} has no '{key}', which this widget shows."
        for key in ("x", "Wq", "Wk", "Wv")
        if not problems and key not in numbers
    ]
    for key in ("slider_min", "slider_max"):
        if key in settings and (isinstance(settings[key], bool) or not isinstance(settings[key], int)):
            problems.append(f"{key} must be a whole number, not {settings[key]!r}.")
    if not problems and settings.get("slider_min", -5) >= settings.get("slider_max", 5):
        problems.append("slider_min must be smaller than slider_max.")
    roles = settings.get("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(text, str) for text in roles.values()):
        problems.append('roles must be a table of texts, such as q = "what am I looking for?".')
    solved_by = settings.get("solved_by", {})
    if not (
        isinstance(solved_by, dict)
        and set(solved_by) <= {"q", "k", "v"}
        and all(isinstance(exercise, str) for exercise in solved_by.values())
    ):
        problems.append(
            "solved_by must be a table from q, k or v to the id of the exercise that asks for it, "
            'such as q = "q".'
        )
    unknown = set(settings) - set(SETTINGS)
    problems += [f"Unknown setting '{key}' (known: {', '.join(SETTINGS)})." for key in sorted(unknown)]
    if not problems:
        try:
            project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])
        except (TypeError, ValueError) as error:
            problems.append(f"The variant's x and weights do not fit together: {error}")
    return problems


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    numbers = _numbers(settings, names)
    Q, K, V = project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, d)
    solved_by = dict(settings.get("solved_by", {}))
    results = {"q": Q[0].tolist(), "k": K[0].tolist(), "v": V[0].tolist()}
    return {
        "x": numbers["x"],
        "Wq": numbers["Wq"],
        "Wk": numbers["Wk"],
        "Wv": numbers["Wv"],
        # A result that an exercise asks for is not in the page until that exercise is solved.
        **{letter: value for letter, value in results.items() if letter not in solved_by},
        "solved_by": solved_by,
        "slider": {"min": settings.get("slider_min", -5), "max": settings.get("slider_max", 5), "step": 1},
        "roles": dict(settings.get("roles", {})),
    }


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    numbers = _numbers(settings, names)
    x = numbers["x"]
    results = project_qkv([x], numbers["Wq"], numbers["Wk"], numbers["Wv"])  # each (1, d)
    roles = settings.get("roles", {})
    hidden = settings.get("solved_by", {})
    inputs = " ".join(
        f'<span class="widget-input">hidden x[{i}] <output>{format_value(value)}</output></span>'
        for i, value in enumerate(x)
    )
    rows = "".join(
        f'<tr><th scope="row">{kind} {letter} = x·{matrix}</th><td>{format_value(numbers[matrix])}</td>'
        f"<td>{_result_cell(letter, result[0].tolist(), hidden)}</td>"
        f"<td>{_quoted(roles.get(letter, ''))}</td></tr>"
        for (letter, kind, matrix), result in zip(PROJECTIONS, results, strict=True)
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


def _quoted(text: str) -> str:
    return f"“{html.escape(text)}”" if text else ""
