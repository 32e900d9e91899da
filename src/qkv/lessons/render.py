"""Lesson Markdown to the page's HTML: one ``<section>`` per ``::::section``, exercises as forms.

The element structure (classes, ids, data attributes) is the contract with the web app's CSS and
JavaScript; see ``docs/lessons.md``.
"""

from __future__ import annotations

import html
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from markdown_it.token import Token

from qkv.grading import Limits
from qkv.lessons.answers import example_vector, format_value
from qkv.lessons.feedback import precision_note
from qkv.lessons.markup import (
    LITERAL_END,
    LITERAL_START,
    PLACEHOLDER,
    directive_of,
    fill,
    new_parser,
    unmarked,
)
from qkv.lessons.model import SOLUTION_AFTER_FAILED_RUNS, Exercise, RenderedSection
from qkv.lessons.widgets import WidgetSet

__all__ = ["exercise_html", "hint_html", "render_reference", "render_sections", "section_html"]


def _render_fence(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    directive = directive_of(token)
    if directive is None:
        # A code block scrolls sideways on a phone: focusable, so the keyboard can scroll it too.
        return str(self.fence(tokens, idx, options, env)).replace("<pre>", '<pre tabindex="0">', 1)
    kind, argument = directive
    if kind == "exercise":
        return exercise_html(env["exercises"][argument], env["names"])
    settings = tomllib.loads(token.content)
    widgets: WidgetSet = env["widgets"]
    return widgets.html(argument, settings, env["names"])


_PARSER = new_parser(_render_fence)


# Every run is graded on newly drawn inputs (the replay of shown expected values is useless), so a failure
# is repeated from its call, never by running the same test again.
FRESH_INPUTS_NOTE = (
    "Every run draws new random inputs for the tests. A failing test shows its whole call: paste it into "
    "your own Python, beside your functions, to see the same result."
)


def _run_notes(exercise: Exercise) -> str:
    """The sentences under the Run button: fresh inputs, and how long one run may take."""
    limit = exercise.suite.time_limit_s if exercise.suite is not None else None
    grader_bound = Limits().wall_s  # no exercise runs longer than the grader allows
    seconds = grader_bound if limit is None else min(limit, grader_bound)
    notes = f"{FRESH_INPUTS_NOTE} Each run may take up to {seconds:g} s; a longer one is stopped."
    return f'<p class="code-limit">{html.escape(notes)}</p>'


def exercise_html(exercise: Exercise, names: Mapping[str, Any]) -> str:
    """The form (or code editor block) for one exercise, with the variant's numbers filled in.

    Parameters
    ----------
    exercise : Exercise
    names : mapping
        The variant's values, for ``{{placeholders}}`` in the prompt.

    Returns
    -------
    str
        Safe HTML.

    Examples
    --------
    >>> ex = Exercise(id="q", kind="numeric", part="drill", prompt="", prompt_template="x = {{x}}. Type q.")
    >>> print(exercise_html(ex, {"x": [1, 2]}))  # doctest: +ELLIPSIS
    <form class="exercise" ...><label for="answer-q">x = <span class="literal">[1, 2]</span>. Type q...
    """
    ex_id = html.escape(exercise.id, quote=True)
    prompt = prompt_html(exercise.prompt_template, names)
    feedback = f'<p class="feedback" id="feedback-{ex_id}" aria-live="polite"></p>'
    if exercise.kind == "code":
        starter = html.escape(exercise.starter_code or "")
        # The page groups the test results by these functions (each result names its function).
        functions = html.escape(" ".join(exercise.functions), quote=True)
        return (
            f'<div class="code-exercise" data-exercise-id="{ex_id}" data-functions="{functions}">'
            f'<label for="code-{ex_id}">{html.escape(exercise.label or exercise.prompt)}</label>\n'
            f'<textarea id="code-{ex_id}" name="code" spellcheck="false">{starter}</textarea>\n'
            '<button type="button" class="run-code" aria-keyshortcuts="Control+Enter Meta+Enter">'
            "Run the tests</button>"
            f"{_run_notes(exercise)}"
            '<div class="grade-results" aria-live="polite"></div>'
            f"{_help_html(exercise)}</div>\n"
        )
    if exercise.kind == "choice":
        options = "".join(
            f'<label><input type="radio" name="answer" value="{html.escape(choice.letter, quote=True)}"> '
            f'<span class="choice-letter">{html.escape(choice.letter)}</span> '
            f"{html.escape(fill(choice.text, names))}</label>\n"
            for choice in exercise.choices
        )
        return (
            f'<form class="exercise" data-exercise-id="{ex_id}" data-kind="choice"><fieldset>'
            f"<legend>{prompt}</legend>\n{options}</fieldset>"
            f'<button type="submit">Check</button> {feedback}</form>\n'
        )
    name = f'<span class="answer-name">{html.escape(exercise.label)}</span> ' if exercise.label else ""
    placeholder = "letter"
    if exercise.kind == "numeric":
        placeholder = _numeric_placeholder(names.get(exercise.answer))
        note = precision_note(exercise, names[exercise.answer]) if exercise.answer in names else ""
        if note:  # every numeric prompt says how precisely it is checked (computed from its tolerance)
            prompt += f' <span class="precision-note">{html.escape(note)}</span>'
    return (
        f'<form class="exercise" data-exercise-id="{ex_id}" data-kind="{exercise.kind}">'
        f'<label for="answer-{ex_id}">{prompt}</label> {name}'
        f'<input id="answer-{ex_id}" name="answer" type="text" autocomplete="off" spellcheck="false" '
        f'maxlength="200" placeholder="{placeholder}" aria-describedby="feedback-{ex_id}"> '
        f'<button type="submit">Check</button> {feedback}</form>\n'
    )


def _numeric_placeholder(answer: object) -> str:
    """What the answer box shows while empty: "a number", or a vector with as many components as
    the answer has ([a, b, c] for three), so the box says the answer's length before it is typed."""
    return example_vector(len(answer)) if isinstance(answer, list | tuple) else "a number"


# What earns a hint, said before any is earned (the page's script then says what opens the next one).
_HINT_NOTE = (
    "Hints open as you work: the first after a run of your own code that does not pass all the tests, each "
    "next one after one more such run, and every one once you have solved the exercise."
)


def _help_html(exercise: Exercise) -> str:
    """The "Stuck?" box of a code exercise: how many hints it has (the page asks for each when the learner
    does: no hint's text is in the page) and, when the lesson has a reference solution, when it opens. The
    solution itself is never in the page."""
    if not exercise.hints and exercise.solution is None:
        return ""
    total = len(exercise.hints)
    solution = ""
    if exercise.solution is not None:
        runs = SOLUTION_AFTER_FAILED_RUNS
        solution = (
            '<p class="solution-note">The reference solution opens here once you have solved this exercise, '
            f"or after {runs} runs of your own code that did not pass all the tests (the starter code, a "
            "program that does not define the functions or run their tests, or one you ran before, does not "
            "count).</p>"
        )
    listed = ""
    if total:
        listed = f'<p class="hint-note">{_HINT_NOTE}</p><ol class="code-hints" aria-live="polite"></ol>'
    summary = "<summary>Stuck?</summary>"
    return f'<details class="code-help" data-hints="{total}">{summary}{listed}{solution}</details>'


def hint_html(exercise: Exercise, number: int) -> str:
    """The HTML of a code exercise's hint ``number`` (from 1), for the moment the learner asks for it.

    Raises
    ------
    ValueError
        If the exercise has no such hint, in a sentence.

    Examples
    --------
    >>> code = Exercise(id="c", kind="code", part="p", prompt="", prompt_template="", hints=("Use `@`.",))
    >>> hint_html(code, 1)
    'Use <code>@</code>.'
    """
    if not 1 <= number <= len(exercise.hints):
        raise ValueError(
            f"The exercise {exercise.id!r} has {len(exercise.hints)} hints, so there is no hint {number}."
        )
    return str(_PARSER.renderInline(exercise.hints[number - 1]).strip())


def prompt_html(template: str, names: Mapping[str, Any]) -> str:
    """The prompt with each placeholder's value in a ``span.literal``, which never breaks inside a matrix.

    Examples
    --------
    >>> prompt_html("W = {{W}} & {{nope}}", {"W": [[1, 0], [0, 1]]})
    'W = <span class="literal">[[1, 0], [0, 1]]</span> &amp; {{nope}}'
    """
    pieces, last = [], 0
    for match in PLACEHOLDER.finditer(template):
        pieces.append(html.escape(template[last : match.start()]))
        name = match.group(1)
        if name in names:
            pieces.append(f'<span class="literal">{html.escape(format_value(names[name]))}</span>')
        else:
            pieces.append(html.escape(match.group(0)))
        last = match.end()
    pieces.append(html.escape(template[last:]))
    return "".join(pieces)


def section_html(section_id: str, title_html: str, body_html: str) -> str:
    """Wrap a section's body in the page's ``<section>`` element.

    Examples
    --------
    >>> print(section_html("check", "Check", "<p>…</p>"))
    <section class="lesson-section" id="check" aria-labelledby="check-title"><h2 id="check-title">Check</h2>
    <p>…</p></section>
    """
    sid = html.escape(section_id, quote=True)
    return (
        f'<section class="lesson-section" id="{sid}" aria-labelledby="{sid}-title">'
        f'<h2 id="{sid}-title">{title_html}</h2>\n{body_html}</section>'
    )


def _split_title(tokens: Sequence[Token]) -> tuple[Token | None, list[Token]]:
    # The section's first token run `heading_open(h2) inline heading_close` is its title.
    if len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h2":
        return tokens[1], list(tokens[3:])
    return None, list(tokens)


def _render_section(section_id: str, tokens: Sequence[Token], env: dict[str, Any]) -> RenderedSection:
    title_token, body = _split_title(tokens)
    renderer: Any = _PARSER.renderer  # RendererHTML; its protocol type lacks renderInline
    title_html = (
        renderer.renderInline(title_token.children or [], _PARSER.options, env) if title_token else ""
    )
    title = unmarked(title_token.content) if title_token else section_id
    body_html = _literal_spans(renderer.render(body, _PARSER.options, env))
    return RenderedSection(section_id, title, section_html(section_id, _literal_spans(title_html), body_html))


def _keep_list_marks_in_prose(tokens: Sequence[Token]) -> None:
    """Remove the marks around filled-in lists from every token but prose and inline code, whose HTML
    gets a span for them (math, directives and code blocks read their text as it is)."""
    for token in tokens:
        token.content = unmarked(token.content)
        token.info = unmarked(token.info)
        for child in token.children or []:
            if child.type not in ("text", "code_inline"):
                child.content = unmarked(child.content)
            child.attrs = {key: unmarked(str(value)) for key, value in child.attrs.items()}


def _literal_spans(html_text: str) -> str:
    """A filled-in vector or matrix as a ``span.literal``, which never breaks inside its brackets."""
    return html_text.replace(LITERAL_START, '<span class="literal">').replace(LITERAL_END, "</span>")


def render_sections(
    text: str,
    names: Mapping[str, Any],
    exercises: Mapping[str, Exercise],
    widgets: WidgetSet | None = None,
) -> list[RenderedSection]:
    """Render every ``::::section`` of a (validated) lesson file, filled with one variant's values.

    Parameters
    ----------
    text : str
        The lesson's Markdown.
    names : mapping
        The variant's values (and named wrong answers) for ``{{placeholders}}``.
    exercises : mapping of str to Exercise
        The lesson's exercises, by id.
    widgets : WidgetSet, optional
        The widgets its ``{widget}`` blocks may name (those of its chapter); none by default.

    Returns
    -------
    list of RenderedSection
        In page order.

    Examples
    --------
    >>> sections = render_sections("::::section idea\\n## The idea\\nHi {{x}}.\\n::::\\n", {"x": [1]}, {})
    >>> [(s.id, s.title) for s in sections], 'Hi <span class="literal">[1]</span>.' in sections[0].html
    ([('idea', 'The idea')], True)
    """
    tokens = _PARSER.parse(fill(text, names, mark_lists=True))
    _keep_list_marks_in_prose(tokens)
    env: dict[str, Any] = {"names": names, "exercises": exercises, "widgets": widgets or WidgetSet()}
    sections: list[RenderedSection] = []
    depth, start, section_id = 0, 0, ""
    for index, token in enumerate(tokens):
        if token.type == "container_section_open":
            if depth == 0:
                start, section_id = index + 1, token.info.strip().removeprefix("section").strip()
            depth += 1
        elif token.type == "container_section_close":
            depth -= 1
            if depth == 0:
                sections.append(_render_section(section_id, tokens[start:index], env))
    return sections


def render_reference(text: str, widgets: WidgetSet | None = None) -> RenderedSection:
    """Render a chapter reference (plain Markdown whose first ``##`` heading is its title).

    Its ``{widget}`` blocks may name the ``widgets`` of its chapter.

    Examples
    --------
    >>> section = render_reference("## Chapter reference\\n\\n$x$\\n")
    >>> section.id, section.title, "<math" in section.html
    ('reference', 'Chapter reference', True)
    """
    env: dict[str, Any] = {"names": {}, "exercises": {}, "widgets": widgets or WidgetSet()}
    tokens = [token for token in _PARSER.parse(text) if token.type != "front_matter"]
    return _render_section("reference", tokens, env)
