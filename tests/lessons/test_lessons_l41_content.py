"""Lesson L4.1 as shipped: its facts, its page HTML (the web app's contract), and the chapter reference."""

from __future__ import annotations

import html
import json
import math
import re
import threading
from html.parser import HTMLParser

import pytest

from qkv.lessons import RenderedSection, load_catalog
from qkv.lessons.markup import directive_of, new_parser

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.1")
SEED_STARTER = """import numpy as np

def project_qkv(X, Wq, Wk, Wv):
    pass

def qkv_shapes(n, d_model, d_k, d_v):
    pass

def output_shape(n_q, n_k, d_v):
    pass

def param_count(d_model, d_k, d_v):
    pass
"""


def page(seed: int | None = None) -> dict[str, RenderedSection]:
    return {section.id: section for section in LESSON.render(seed)}


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_identity_of_the_lesson_and_chapter() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.1", "Queries, keys and values", "L4")
    assert LESSON.place == "L4.1 · lesson 1 of 6"
    assert LESSON.goal == (
        "Calculate query-key scores, scaled softmax weights and the weighted value output for one attention head."
    )
    chapter = CATALOG.chapter("L4")
    assert chapter.lesson_ids == ["L4.1", "L4.2", "L4.3", "L4.4", "L4.5", "L4.6"]
    assert CATALOG.lessons[0].id == "L4.1"


def test_exercises_in_page_order() -> None:
    kinds = {ex.id: (ex.kind, ex.part) for ex in LESSON.exercises.values()}
    assert kinds == {
        "q": ("numeric", "part1"),
        "k": ("numeric", "part1"),
        "v": ("numeric", "part1"),
        "averaged": ("letter", "part1"),
        "functions": ("code", "part2"),
        "quiz": ("choice", "quiz"),
    }
    assert list(kinds) == ["q", "k", "v", "averaged", "functions", "quiz"]
    assert LESSON.exercises["q"].prompt == (
        "A token's hidden vector is x = [1, 2]. Its query is x @ Wq with Wq = [[1, 0], [1, 1]] (rows). Type q."
    )
    assert LESSON.exercises["k"].prompt == "The key is x @ Wk with Wk = [[0, 1], [1, 0]]. Type k."
    assert LESSON.exercises["v"].prompt == "The value is x @ Wv with Wv = [[2, 0], [0, 2]]. Type v."


def test_the_code_exercise_is_exactly_the_seeds() -> None:
    code = LESSON.exercises["functions"]
    assert code.starter_code == SEED_STARTER
    assert code.suite is not None and code.suite.functions == code.functions
    assert code.functions == ("project_qkv", "qkv_shapes", "output_shape", "param_count")
    part2 = page()["part2"].html
    assert (
        f'<textarea id="code-functions" name="code" spellcheck="false">{html.escape(SEED_STARTER)}</textarea>'
        in part2
    )
    assert (
        '<div class="code-exercise" data-exercise-id="functions" '
        'data-functions="project_qkv qkv_shapes output_shape param_count">'
    ) in part2
    assert (
        '<button type="button" class="run-code" aria-keyshortcuts="Control+Enter Meta+Enter">Run the tests</button>'
    ) in part2
    assert '<div class="grade-results" aria-live="polite"></div></div>' in part2
    for spec in (
        "X has shape (n, d_model). Return (Q, K, V) = (X @ Wq, X @ Wk, X @ Wv).",
        'the shapes of Q, K and V as a dict with keys "Q", "K", "V".',
        "(It has one row per query and\nd_v columns.)",
        "the number of weights in Wq, Wk and Wv together (no biases).",
    ):
        assert spec in text_of(part2)


def test_sections_follow_the_html_contract() -> None:
    sections = LESSON.render()
    assert [s.id for s in sections] == ["idea", "part1", "part2", "quiz", "reference"]
    assert [s.title for s in sections] == [
        "The idea",
        "Part 1. Do it hands-on",
        "Part 2. Do it in code",
        "Check your understanding",
        "Chapter reference: math, worked example & code",
    ]
    for section in sections:
        assert section.html.startswith(
            f'<section class="lesson-section" id="{section.id}" aria-labelledby="{section.id}-title">'
            f'<h2 id="{section.id}-title">'
        )
        assert section.html.endswith("</section>")
        checker = _Balance()
        checker.feed(section.html)
        assert checker.stack == [], f"unclosed tags in {section.id}: {checker.stack}"


def test_answer_forms_follow_the_contract() -> None:
    part1 = page()["part1"].html
    for ex, kind in (("q", "numeric"), ("k", "numeric"), ("v", "numeric"), ("averaged", "letter")):
        form = re.search(
            rf'<form class="exercise" data-exercise-id="{ex}" data-kind="{kind}">.*?</form>', part1, re.S
        )
        assert form, ex
        assert f'<label for="answer-{ex}">' in form.group(0)
        assert re.search(rf'<input id="answer-{ex}" name="answer" [^>]*autocomplete="off"', form.group(0))
        assert '<button type="submit">Check</button>' in form.group(0)
        assert f'<p class="feedback" id="feedback-{ex}" aria-live="polite"></p></form>' in form.group(0)
    quiz = page()["quiz"].html
    assert '<form class="exercise" data-exercise-id="quiz" data-kind="choice"><fieldset><legend>' in quiz
    assert "<legend>Which vectors are averaged to produce the attention output?</legend>" in quiz
    for letter in "ABC":
        assert f'<label><input type="radio" name="answer" value="{letter}">' in quiz
    assert "The keys, because they are matched against each other." in quiz
    assert "The queries, because they carry what each position is looking for." in quiz


def widget_configs(fragment: str, name: str) -> list[dict[str, object]]:
    found = re.findall(rf"<div class=\"widget\" data-widget=\"{name}\" data-config='([^']*)'>", fragment)
    return [json.loads(html.unescape(raw)) for raw in found]


def test_the_projection_widget_shows_the_seed_table() -> None:
    sections = page()
    for section_id in ("idea", "part1"):
        (config,) = widget_configs(sections[section_id].html, "projection-sliders")
        assert config["x"] == [1, 2] and config["Wq"] == [[1, 0], [1, 1]]
        assert config["Wk"] == [[0, 1], [1, 0]] and config["Wv"] == [[2, 0], [0, 2]]
        assert (config["q"], config["k"], config["v"]) == ([3, 2], [2, 1], [2, 4])
        assert config["slider"] == {"min": -5, "max": 5, "step": 1}
        table = text_of(sections[section_id].html)
        for row in (
            "query q = x·Wq[[1, 0], [1, 1]][3, 2]“what am I looking for?”",
            "key k = x·Wk[[0, 1], [1, 0]][2, 1]“what do I offer to be matched?”",
            "value v = x·Wv[[2, 0], [0, 2]][2, 4]“what do I pass along if chosen?”",
        ):
            assert row in table
        assert "result for x = [1, 2]" in table
    assert "Predict first. Which vectors are averaged to produce the attention output?" in text_of(
        sections["idea"].html
    )
    assert "Q, K, V = X @ Wq, X @ Wk, X @ Wv  # X is (tokens, d_model)" in text_of(sections["idea"].html)


def test_a_variant_changes_every_number_on_the_page() -> None:
    variant = LESSON.variant(11)
    part1 = page(11)["part1"].html
    (config,) = widget_configs(part1, "projection-sliders")
    assert {key: config[key] for key in ("x", "Wq", "Wk", "Wv", "q", "k", "v")} == {
        key: variant[key] for key in ("x", "Wq", "Wk", "Wv", "q", "k", "v")
    }
    x_text = "[" + ", ".join(str(c) for c in variant["x"]) + "]"
    assert f"A token&#x27;s hidden vector is x = {x_text}." in part1
    assert "x = [1, 2]" not in text_of(part1) or variant["x"] == [1, 2]


def test_the_reference_math_is_native_mathml() -> None:
    reference = page()["reference"].html
    # Two rows of three formulas each, so that a phone can wrap them (a <math> never breaks a line).
    rows = re.findall(r'<div class="math-display math-row">(.*?)</div>', reference)
    assert [
        row.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') for row in rows
    ] == [3, 3]
    assert "<mo>&#x0002C;</mo></mrow></math><math" in rows[1]  # each comma stays with its formula
    assert "<mi>ℝ</mi>" in reference and "double-struck" not in reference
    assert "<msub><mi>softmax</mi><mrow><mtext>rows</mtext></mrow></msub>" in reference
    assert "<msqrt><mrow><msub><mi>d</mi><mi>k</mi></msub></mrow></msqrt>" in reference
    assert "$" not in text_of(reference)


def test_the_worked_example_numbers() -> None:
    reference = page()["reference"].html
    for number in ("0.669762", "0.330238", "1.339523", "0.660477"):
        assert f"<mn>{number}</mn>" in reference
    (config,) = widget_configs(reference, "attention-explorer")
    assert config == {"q": [1, 0], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
    fallback = text_of(reference)
    assert "output = [1.339523, 0.660477]; with only the first key allowed: [2, 0]" in fallback
    assert "0[1, 0]0.7071070.669762[2, 0]" in fallback  # key 0 (numbered as the explorer does): 1/√2, weight
    for sentence in (
        "Scores are not yet weights: only normalization (the softmax) turns them into weights.",
        "A causal mask is applied to the scores before the softmax, not to the weights after it.",
        "Attention weights on their own do not explain why a model made a decision; they are not a causal\n"
        "account of it.",
    ):
        assert sentence in fallback


def test_the_chapter_reference_code_runs_and_its_asserts_pass() -> None:
    chapter = CATALOG.chapter("L4")
    blocks = [
        token.content
        for token in new_parser().parse(chapter.reference_text)
        if token.type == "fence" and token.info.strip() == "python" and directive_of(token) is None
    ]
    assert len(blocks) == 1
    code = blocks[0]
    assert code.count("assert ") == 4 and "import" in code and "requests" not in code
    namespace: dict[str, object] = {}
    exec(compile(code, "reference.md", "exec"), namespace)
    assert math.isclose(namespace["weights"][0], 0.6697615493266569)  # type: ignore[index]
    # The same block, broken, must fail: the asserts really check something.
    with pytest.raises(AssertionError):
        exec(compile(code.replace("sqrt(2)", "sqrt(3)"), "reference.md", "exec"), {})


def test_the_reference_is_rendered_once_and_shared() -> None:
    assert LESSON.render()[-1] is CATALOG.chapter_reference("L4")
    assert LESSON.render(5)[-1] is LESSON.render(None)[-1]


def test_rendering_from_many_threads_gives_the_same_page() -> None:
    expected = [s.html for s in LESSON.render(3)]
    results: list[list[str]] = []

    def work() -> None:
        for _ in range(5):
            results.append([s.html for s in LESSON.render(3)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 20 and all(result == expected for result in results)


class _Balance(HTMLParser):
    VOID = frozenset({"input", "br", "img", "hr", "mspace", "meta", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def test_part1_opens_with_the_seeds_try_it_yourself() -> None:
    assert text_of(page()["part1"].html).startswith("Part 1. Do it hands-on\nTry it yourself.")
