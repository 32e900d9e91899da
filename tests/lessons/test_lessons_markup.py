"""Display math: a row of formulas separated by a top-level \\quad wraps on narrow screens; every lesson's
sections are well-formed."""

from __future__ import annotations

import re

import pytest

from qkv.lessons import Lesson
from qkv.lessons.markup import display_math_html, latex_to_mathml
from tests import lesson_contract as contract
from tests.lesson_pages import assert_tags_balanced


def formulas(html_text: str) -> list[str]:
    return re.findall(r"<math [^>]*display=\"block\">.*?</math>", html_text)


def test_a_single_formula_is_one_block() -> None:
    html_text = display_math_html(r"O=AV")
    assert html_text == f'<div class="math-display">{latex_to_mathml("O=AV", display=True)}</div>\n'


def test_top_level_quads_separate_formulas_in_a_row() -> None:
    html_text = display_math_html(r"S=QK^T,\quad A=\operatorname{softmax}(S),\quad O=AV.")
    assert html_text.startswith('<div class="math-display math-row">')
    assert formulas(html_text) == [
        latex_to_mathml("S=QK^T,", display=True),
        latex_to_mathml(r"A=\operatorname{softmax}(S),", display=True),
        latex_to_mathml("O=AV.", display=True),
    ]


@pytest.mark.parametrize(
    "latex",
    [
        r"x_{a\quad b}",  # inside braces
        r"\left(a\quad b\right)",  # inside \left … \right
        r"\begin{matrix}a\quad b\end{matrix}",  # inside an environment
        r"a\qquad b",  # a longer command is not the separator
        r"\quad",  # nothing on either side
    ],
)
def test_quads_that_do_not_separate_formulas(latex: str) -> None:
    html_text = display_math_html(latex)
    assert html_text.startswith('<div class="math-display">')
    assert len(formulas(html_text)) == 1


def test_a_bad_part_is_quoted_in_the_error() -> None:
    with pytest.raises(ValueError, match=r"^The formula 'y=\\left\(x' could not be converted to MathML"):
        display_math_html(r"x=1,\quad y=\left(x")


@pytest.mark.content
@pytest.mark.parametrize("lesson", contract.catalog().lessons, ids=lambda lesson: lesson.id)
def test_every_lesson_section_closes_the_tags_it_opens(lesson: Lesson) -> None:
    for seed in (None, 7):  # the default variant and another
        for section in lesson.render(seed):
            assert_tags_balanced(section.html, f"{lesson.id} {section.id}")


@pytest.mark.content
@pytest.mark.parametrize("lesson", contract.catalog().lessons, ids=lambda lesson: lesson.id)
def test_every_answer_box_shows_as_many_components_as_its_answer_has(lesson: Lesson) -> None:
    html = "".join(section.html for section in lesson.render(None))
    variant = lesson.variant(None)
    exercises = [lesson.exercise(exercise_id) for exercise_id in lesson.exercises]
    numeric = [exercise for exercise in exercises if exercise.kind == "numeric"]
    assert numeric, lesson.id
    for exercise in numeric:
        box = re.search(rf'id="answer-{re.escape(exercise.id)}"[^>]*placeholder="([^"]*)"', html)
        assert box is not None, exercise.id
        answer = variant[exercise.answer]
        if isinstance(answer, list):
            assert box.group(1).count(",") == len(answer) - 1, (exercise.id, box.group(1), answer)
        else:
            assert box.group(1) == "a number", (exercise.id, box.group(1))


def test_a_matrix_filled_into_prose_never_breaks_inside_its_brackets() -> None:
    from qkv.lessons.render import render_sections

    text = (
        "::::section idea\n## For V = {{V}}\n"
        "The values V = {{V}}, $d_k = {{d}}$, code `{{V}}` and d = {{d}}.\n\n"
        "```python\nV = {{V}}\n```\n::::\n"
    )
    (section,) = render_sections(text, {"V": [[1, 3], [2, -1]], "d": 2}, {})
    html = section.html
    assert '<p>The values V = <span class="literal">[[1, 3], [2, -1]]</span>, ' in html
    assert '<code><span class="literal">[[1, 3], [2, -1]]</span></code> and d = 2.' in html
    assert "V = [[1, 3], [2, -1]]\n</code></pre>" in html  # a code block keeps the text as it is
    assert section.title == "For V = [[1, 3], [2, -1]]"
    assert "\ue000" not in html and "\ue001" not in html
    assert "<mn>2</mn>" in html  # the formula got the number, not a mark
