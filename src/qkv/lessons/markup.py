"""The Markdown dialect of lesson files, and LaTeX to MathML.

A lesson file is CommonMark plus four extensions, all parsed by markdown-it-py and its plugins:

* a front matter block between ``---`` lines, written in TOML;
* ``::::section ID`` … ``::::`` containers, one per page section (the first ``##`` heading is its title);
* ``$…$`` and ``$$…$$`` math, turned into native MathML by latex2mathml;
* fenced directives ```` ```{exercise} ID ```` and ```` ```{widget} NAME ```` whose body is TOML.

Text anywhere may hold ``{{name}}`` placeholders, filled from the lesson's variant.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from qkv.lessons.answers import format_value


@functools.cache
def _latex_converter() -> ModuleType:
    """latex2mathml, imported on the first formula: loading lessons (and ``qkv check``) needs none."""
    import latex2mathml.converter

    return latex2mathml.converter


__all__ = [
    "ID_PATTERN",
    "PLACEHOLDER",
    "DirectiveInfo",
    "directive_of",
    "display_math_html",
    "fill",
    "latex_to_mathml",
    "new_parser",
    "placeholders_in",
    "toml_error",
    "unknown_placeholder",
]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_DIRECTIVE = re.compile(r"\{([a-z][a-z0-9-]*)\}\s*(.*)")
_DOUBLE_STRUCK = re.compile(r"\\mathbb\s*\{?\s*R\s*\}?")
_WORD_OPERATOR = re.compile(r"<mo>([A-Za-z]{2,})</mo>")

DirectiveInfo = tuple[str, str]


def new_parser(fence_renderer: Callable[..., str] | None = None) -> MarkdownIt:
    """A markdown-it parser for lesson files; raw HTML in a lesson is escaped, never passed through.

    Parameters
    ----------
    fence_renderer : callable, optional
        Render rule for fences (markdown-it's ``(self, tokens, idx, options, env)`` signature);
        directives are rendered through it.

    Returns
    -------
    MarkdownIt

    Examples
    --------
    >>> [t.type for t in new_parser().parse("::::section idea\\n## The idea\\n::::\\n")][:2]
    ['container_section_open', 'heading_open']
    """
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")
    md.use(front_matter_plugin)
    md.use(container_plugin, name="section")
    md.use(dollarmath_plugin, allow_space=True, allow_digits=False, double_inline=True)
    md.add_render_rule("math_inline", _render_inline_math)
    md.add_render_rule("math_inline_double", _render_display_math)
    md.add_render_rule("math_block", _render_display_math)
    md.add_render_rule("math_block_label", _render_display_math)
    if fence_renderer is not None:
        md.add_render_rule("fence", fence_renderer)
    return md


def directive_of(token: Token) -> DirectiveInfo | None:
    """The ``(name, argument)`` of a ```` ```{name} argument ```` fence, or None for plain code.

    Examples
    --------
    >>> from markdown_it.token import Token
    >>> directive_of(Token("fence", "code", 0, info="{exercise} q"))
    ('exercise', 'q')
    >>> directive_of(Token("fence", "code", 0, info="python")) is None
    True
    """
    match = _DIRECTIVE.fullmatch(token.info.strip())
    return (match.group(1), match.group(2).strip()) if match else None


def latex_to_mathml(latex: str, *, display: bool = False) -> str:
    """Convert LaTeX to native MathML that Chromium renders well.

    ``\\mathbb R`` becomes the letter ℝ (MathML Core ignores double-struck variants) and word
    operators such as ``\\operatorname{argmax}`` become upright identifiers, which read tighter.

    Parameters
    ----------
    latex : str
        The formula, without ``$`` delimiters.
    display : bool, default False
        A display (block) formula instead of an inline one.

    Returns
    -------
    str
        A ``<math>`` element.

    Raises
    ------
    ValueError
        If latex2mathml cannot read the formula; the message quotes it.

    Examples
    --------
    >>> latex_to_mathml(r"x\\in\\mathbb R")  # doctest: +ELLIPSIS
    '<math ... display="inline"><mrow><mi>x</mi><mo>&#x02208;</mo><mi>ℝ</mi></mrow></math>'
    >>> "<mi>argmax</mi>" in latex_to_mathml(r"\\operatorname{argmax}(S)")
    True
    """
    prepared = _DOUBLE_STRUCK.sub("ℝ", latex.strip())
    try:
        mathml = _latex_converter().convert(prepared, display="block" if display else "inline")
    except Exception as error:  # latex2mathml raises a variety of its own exception types
        reason = str(error) or type(error).__name__
        raise ValueError(
            f"The formula '{latex.strip()}' could not be converted to MathML ({reason})."
        ) from None
    return _WORD_OPERATOR.sub(r"<mi>\1</mi>", str(mathml))


ID_PATTERN = re.compile(r"[a-z][a-z0-9-]*")
"""Ids of sections, parts and exercises: lowercase letters, digits and dashes, starting with a letter."""

_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)")


def toml_error(error: tomllib.TOMLDecodeError, first_line: int) -> tuple[int, str]:
    """The file line and the reason of a TOML error, for TOML text that starts on ``first_line`` of its file.

    Examples
    --------
    >>> try:
    ...     tomllib.loads("a = 1\\nb = \\nc = 2")
    ... except tomllib.TOMLDecodeError as error:
    ...     toml_error(error, first_line=10)
    (11, 'Invalid value')
    """
    found = _TOML_AT.search(str(error))
    line = first_line + int(found.group(1)) - 1 if found else first_line
    return line, _TOML_AT.sub("", str(error)).strip()


def unknown_placeholder(name: str) -> str:
    """The sentence for a ``{{name}}`` that the lesson's variant does not define.

    Examples
    --------
    >>> unknown_placeholder("y")
    "The placeholder {{y}} names nothing in the lesson's variant."
    """
    return f"The placeholder {{{{{name}}}}} names nothing in the lesson's variant."


def placeholders_in(text: str) -> list[str]:
    """The names of the ``{{name}}`` placeholders in ``text``, in order.

    Examples
    --------
    >>> placeholders_in("x = {{x}}, q = {{ q }}")
    ['x', 'q']
    """
    return PLACEHOLDER.findall(text)


# Private-use characters put around a vector or matrix filled into a lesson's text: ``render_sections``
# turns them into a span that never breaks inside the brackets, and removes them wherever the text is
# not prose (math, directives, code blocks).
LITERAL_START, LITERAL_END = "\ue000", "\ue001"


def fill(text: str, values: Mapping[str, Any], *, mark_lists: bool = False) -> str:
    """Replace every ``{{name}}`` by its value, written as the lesson writes numbers.

    Unknown names are left as they are (validation reports them). With ``mark_lists``, a list value is
    put between ``LITERAL_START`` and ``LITERAL_END``.

    Examples
    --------
    >>> fill("q = {{q}} for x = {{x}}", {"q": [3, 2], "x": [1, 2]})
    'q = [3, 2] for x = [1, 2]'
    >>> marked = fill("{{q}}, {{n}}", {"q": [3, 2], "n": 4}, mark_lists=True)
    >>> marked == LITERAL_START + "[3, 2]" + LITERAL_END + ", 4", unmarked(marked)
    (True, '[3, 2], 4')
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        shown = format_value(values[name])
        if mark_lists and isinstance(values[name], list | tuple):
            return f"{LITERAL_START}{shown}{LITERAL_END}"
        return shown

    return PLACEHOLDER.sub(replace, text)


def unmarked(text: str) -> str:
    """``text`` without the marks that ``fill(..., mark_lists=True)`` puts around lists."""
    return text.replace(LITERAL_START, "").replace(LITERAL_END, "")


def _render_inline_math(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return latex_to_mathml(tokens[idx].content)


def _render_display_math(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return display_math_html(tokens[idx].content)


def display_math_html(latex: str) -> str:
    """A display formula as HTML; a top-level ``\\quad`` separates formulas that may wrap.

    MathML never breaks a line by itself, so a row of formulas such as
    ``S=QK^T,\\quad O=AV,\\quad Y=XW`` would be wider than a phone. Each part between
    top-level ``\\quad`` s becomes its own ``<math>`` in a ``math-row`` that wraps like words do.

    Parameters
    ----------
    latex : str
        The formula, without ``$$`` delimiters.

    Returns
    -------
    str
        A ``<div class="math-display">`` element and a newline.

    Raises
    ------
    ValueError
        If a part cannot be converted (see `latex_to_mathml`).

    Examples
    --------
    >>> display_math_html("x=1").count("<math")
    1
    >>> row = display_math_html(r"x=1,\\quad y=\\frac{1}{2\\quad 3}")
    >>> row.startswith('<div class="math-display math-row">'), row.count("<math")
    (True, 2)
    """
    parts = _top_level_parts(latex, r"\quad")
    formulas = "".join(latex_to_mathml(part, display=True) for part in parts)
    row = " math-row" if len(parts) > 1 else ""
    return f'<div class="math-display{row}">{formulas}</div>\n'


_OPENERS = ("\\left", "\\begin")
_CLOSERS = ("\\right", "\\end")


def _top_level_parts(latex: str, separator: str) -> list[str]:
    """Split at ``separator`` outside every ``{…}``, ``\\left…\\right`` and ``\\begin…\\end``."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(latex):
        char = latex[i]
        if char == "\\":
            command = re.match(r"\\[A-Za-z]+", latex[i:])
            word = command.group(0) if command else latex[i : i + 2]  # \{ never opens a group
            if word == separator and depth == 0:
                parts.append(latex[start:i])
                start = i + len(word)
            depth += (word in _OPENERS) - (word in _CLOSERS)
            i += len(word)
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        i += 1
    parts.append(latex[start:])
    return [part.strip() for part in parts if part.strip()] or [latex]
