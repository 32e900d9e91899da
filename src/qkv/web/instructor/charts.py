"""Bar charts for the instructor's dashboard, drawn on the server as SVG, each with its table.

No chart library and no JavaScript: a chart is plain SVG whose colours come from the page's CSS
(so dark mode recolours it), hidden from screen readers, and followed by a table that holds the
same numbers (visually hidden: screen readers read the table, sighted readers the chart).

    >>> html = bar_chart("c1", "Solved", [Bar("q", 0.5, "1 of 2")], ["Exercise", "Solved"], [["q", "1 of 2"]])
    >>> "<svg" in html and "<table" in html and "1 of 2" in html
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

WIDTH = 340  # the viewBox width; the SVG scales to its container (about 1:1 on a phone)
BAR_WIDTH = 250
ROW_HEIGHT = 38
LABEL_CHARS = 52


@dataclass(frozen=True)
class Bar:
    """One bar: its label, its length as a fraction of the full width (0 to 1) and the text after it."""

    label: str
    fraction: float
    text: str


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def bar_chart(
    chart_id: str,
    title: str,
    bars: Sequence[Bar],
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    table_visible: bool = False,
) -> Markup:
    """A ``<figure>``: a horizontal bar chart (label above each bar) and a table with its numbers.

    Parameters
    ----------
    chart_id : str
        A page-unique id (used for the caption's id).
    title : str
        The chart's caption; also the table's caption.
    bars : sequence of Bar
        What to draw, top to bottom.
    headers, rows
        The table: column headings and one row of cells per bar (or more detail than the bars show).
    table_visible : bool
        Show the table under the chart too (when it holds text the bars cut short, such as whole
        messages); otherwise only screen readers read it.

    Returns
    -------
    markupsafe.Markup
        HTML safe to insert into a template; every text is escaped.
    """
    height = max(1, len(bars)) * ROW_HEIGHT + 6
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        'aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg">'
    ]
    if not bars:
        parts.append('<text class="chart-label" x="0" y="20">No data yet.</text>')
    for index, bar in enumerate(bars):
        top = index * ROW_HEIGHT
        length = max(0.0, min(1.0, bar.fraction)) * BAR_WIDTH
        parts.append(
            f"<g><title>{escape(bar.label)}: {escape(bar.text)}</title>"
            f'<text class="chart-label" x="0" y="{top + 13}">{escape(_short(bar.label))}</text>'
            f'<rect class="chart-track" x="0" y="{top + 18}" width="{BAR_WIDTH}" height="14" rx="2"></rect>'
            f'<rect class="chart-bar" x="0" y="{top + 18}" width="{length:.1f}" height="14" rx="2"></rect>'
            f'<text class="chart-value" x="{BAR_WIDTH + 6}" y="{top + 30}">{escape(bar.text)}</text></g>'
        )
    parts.append("</svg>")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            (
                f'<th scope="row">{escape(str(cell))}</th>'
                if i == 0
                else f'<td data-label="{escape(headers[i])}">{escape(str(cell))}</td>'
            )
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    caption_id = f"{chart_id}-caption"
    return Markup(
        f'<figure class="chart-figure" id="{escape(chart_id)}" aria-labelledby="{escape(caption_id)}">'
        f'<figcaption id="{escape(caption_id)}">{escape(title)}</figcaption>'
        + "".join(parts)
        + (
            f'<div class="table-scroll" tabindex="0" role="region" aria-label="{escape(title)}">'
            '<table class="chart-table numbers stacks-when-narrow">'
            if table_visible
            else '<div class="visually-hidden"><table class="chart-table">'
        )
        + f"<caption>{escape(title)}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div></figure>"
    )


def plural(count: int, word: str) -> str:
    """``1 learner``, ``2 learners``.

    Examples
    --------
    >>> plural(1, "learner"), plural(0, "time")
    ('1 learner', '0 times')
    """
    return f"{count} {word}{'' if count == 1 else 's'}"


def percent(rate: float | None) -> str:
    """A rate as a whole percentage, or a dash when there is nothing to divide.

    Examples
    --------
    >>> percent(0.5), percent(None), percent(2 / 3)
    ('50%', '–', '67%')
    """
    return "–" if rate is None else f"{round(rate * 100)}%"
