"""Lesson L4.1 as shipped: its facts, its page HTML (the web app's contract), and the chapter reference."""

from __future__ import annotations

import html
import json
import math
import re
import threading

import numpy as np
import pytest

from qkv import attention, attention_scores, project_qkv, softmax
from qkv.grading import Mistake, Outcome
from qkv.grading.feedback.hints import first_hint
from qkv.grading.suite import Case
from qkv.lessons import RenderedSection, load_catalog
from qkv.lessons.answers import format_value
from qkv.lessons.markup import directive_of, new_parser
from qkv.lessons.render import FRESH_INPUTS_NOTE
from tests.lesson_pages import assert_tags_balanced, text_of, widget_configs

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


def test_identity_of_the_lesson_and_chapter() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.1", "Queries, keys and values", "L4")
    assert LESSON.place == f"L4.1 · lesson 1 of {len(CATALOG.chapter('L4').lesson_ids)}"
    assert LESSON.goal == (
        "Calculate query-key scores, scaled softmax weights and the weighted value output for one attention head."
    )
    chapter = CATALOG.chapter("L4")
    assert chapter.lesson_ids[:2] == ["L4.1", "L4.2"]  # the chapter opens with this lesson
    assert CATALOG.lessons[0].id == "L4.1"


def test_exercises_in_page_order() -> None:
    kinds = {ex.id: (ex.kind, ex.part) for ex in LESSON.exercises.values()}
    assert kinds == {
        "predict": ("choice", "predict-first"),
        "q": ("numeric", "part1"),
        "k": ("numeric", "part1"),
        "v": ("numeric", "part1"),
        "averaged": ("letter", "part1"),
        "scores": ("numeric", "one-query"),
        "weights": ("numeric", "one-query"),
        "output": ("numeric", "one-query"),
        "functions": ("code", "part2"),
        "quiz": ("choice", "quiz"),
        "doubled": ("choice", "quiz"),
        "shifted": ("choice", "quiz"),
    }
    assert list(kinds) == [
        "predict",
        *("q", "k", "v", "averaged"),
        *("scores", "weights", "output"),
        "functions",
        *("quiz", "doubled", "shifted"),
    ]
    # Predicting is not graded: the idea's part shows its progress but does not count toward done.
    assert [(part.id, part.counts_toward_done) for part in LESSON.parts] == [
        ("predict-first", False),
        ("part1", True),
        ("one-query", True),
        ("part2", True),
        ("quiz", True),
    ]
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
    assert (
        f'<p class="code-limit">{FRESH_INPUTS_NOTE} Each run may take up to 4 s; a longer one is stopped.</p>'
        '<div class="grade-results" aria-live="polite"></div><details class="code-help" data-hints="3">'
    ) in part2
    for spec in (
        "X has shape (n, d_model). Return (Q, K, V) = (X @ Wq, X @ Wk, X @ Wv).",
        'the shapes of Q, K and V as a dict with keys "Q", "K", "V".',
        "(It has one row per query and\nd_v columns.)",
        "the number of weights in Wq, Wk and Wv together (no biases).",
    ):
        assert spec in text_of(part2)


def test_sections_follow_the_html_contract() -> None:
    sections = LESSON.render()
    assert [s.id for s in sections] == [
        "predict-first",
        "idea",
        "part1",
        "one-query",
        "part2",
        "quiz",
        "reference",
    ]
    assert [s.title for s in sections] == [
        "Predict first",
        "The idea",
        "Part 1. Do it hands-on",
        "Part 1, continued. One query, all the way to the output",
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
        assert_tags_balanced(section.html, section.id)


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
    assert "<legend>Two positions have exactly the same key but different values." in quiz
    for letter in "ABC":
        assert f'<label><input type="radio" name="answer" value="{letter}">' in quiz
    assert "The position whose value is larger gets more weight." in quiz
    assert "It depends on the query: one query may prefer the first of the two" in quiz


def test_the_idea_illustrates_with_numbers_of_its_own() -> None:
    idea = page()["idea"].html
    (config,) = widget_configs(idea, "projection-sliders")
    variant = LESSON.variant(None)
    numbers = variant["idea"]
    assert {key: config[key] for key in ("x", "Wq", "Wk", "Wv", "q", "k", "v")} == numbers
    # The results come from qkv, and none of the illustration's matrices is Part 1's.
    q, k, v = project_qkv([numbers["x"]], numbers["Wq"], numbers["Wk"], numbers["Wv"])
    assert (config["q"], config["k"], config["v"]) == (q[0].tolist(), k[0].tolist(), v[0].tolist())
    assert not {json.dumps(numbers[m]) for m in ("Wq", "Wk", "Wv")} & {
        json.dumps(variant[m]) for m in ("Wq", "Wk", "Wv")
    }
    assert config["slider"] == {"min": -5, "max": 5, "step": 1} and config["solved_by"] == {}
    table = text_of(idea)
    assert "query q = x·Wq[[1, 1], [0, 1]][3, 4]“what am I looking for?”" in table
    assert "result for x = [3, 1]" in table
    assert "Part 1 gives you other numbers to work out yourself." in " ".join(table.split())
    assert "Q, K, V = X @ Wq, X @ Wk, X @ Wv  # X is (tokens, d_model)" in table


@pytest.mark.parametrize("seed", [None, 1, 11, 397129570])
def test_part1_hides_every_result_it_asks_for(seed: int | None) -> None:
    """Nothing above a question gives its answer away: not the table, not its JSON, not the idea."""
    variant = LESSON.variant(seed)
    sections = page(seed)
    part1 = sections["part1"].html
    (config,) = widget_configs(part1, "projection-sliders")
    assert config["solved_by"] == {"q": "q", "k": "k", "v": "v"}
    assert "q" not in config and "k" not in config and "v" not in config
    assert {key: config[key] for key in ("x", "Wq", "Wk", "Wv")} == {
        key: variant[key] for key in ("x", "Wq", "Wk", "Wv")
    }
    table = text_of(part1.split("<form")[0])
    for letter, matrix in (("q", "Wq"), ("k", "Wk"), ("v", "Wv")):
        assert f"x·{matrix}{_written(variant[matrix])}? ({letter} not shown until you type it" in table
    above_the_questions = text_of(sections["predict-first"].html + sections["idea"].html) + table
    for matrix in ("Wq", "Wk", "Wv"):  # a row of a matrix may look like an answer; the matrices are given
        above_the_questions = above_the_questions.replace(_written(variant[matrix]), "")
    for letter in ("q", "k", "v"):
        assert _written(variant[letter]) not in above_the_questions, letter
    # Nor are the answers of "one query to its output" above its questions.
    above_attend = (
        above_the_questions + text_of(part1) + text_of(sections["one-query"].html.split("<form")[0])
    )
    for name in ("one_scores", "one_weights", "one_output"):
        assert _written(variant[name]) not in above_attend
        assert _written(variant[name])[1:6] not in above_attend  # not even the first decimals


def _written(value: object) -> str:
    return format_value(value)


def test_a_variant_changes_every_number_on_the_page() -> None:
    variant = LESSON.variant(11)
    part1 = page(11)["part1"].html
    (config,) = widget_configs(part1, "projection-sliders")
    assert {key: config[key] for key in ("x", "Wq", "Wk", "Wv")} == {
        key: variant[key] for key in ("x", "Wq", "Wk", "Wv")
    }
    x_text = "[" + ", ".join(str(c) for c in variant["x"]) + "]"
    assert f"A token's hidden vector is x = {x_text}." in text_of(part1)
    # Each vector or matrix of a prompt is one unbreakable literal, so a phone never wraps it mid-way.
    assert f'x = <span class="literal">{x_text}</span>.' in part1
    assert f'Wq = <span class="literal">{_written(variant["Wq"])}</span> (rows)' in part1
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


def test_part1_opens_with_the_seeds_try_it_yourself() -> None:
    assert text_of(page()["part1"].html).startswith("Part 1. Do it hands-on\nTry it yourself.")


# ------------------------------------------------------------------ named mistakes, on every variant
SEEDS = range(400)
SCANNED = 200


@pytest.mark.parametrize("letter", ["q", "k", "v"])
def test_typing_x_itself_is_named_on_every_variant(letter: str) -> None:
    matrix = "W" + letter
    for seed in (None, *range(60)):
        variant = LESSON.variant(seed)
        feedback = LESSON.check(letter, _written(variant["x"]), variant_seed=seed)
        assert not feedback.correct and feedback.counted_as_attempt
        assert feedback.message.startswith("You typed the hidden vector x itself."), (seed, feedback)
        assert f"{matrix} = {_written(variant[matrix])}" in feedback.message


def test_variants_keep_answers_and_named_mistakes_apart() -> None:
    """No projection equals x, another projection, a mistake of its own or zero; no matrix is the idea's."""
    idea = LESSON.variant(None)["idea"]
    for seed in SEEDS:
        variant = LESSON.variant(seed)
        names = LESSON.hooks.namespace(variant)
        vectors = {key: tuple(names[key]) for key in ("x", "q", "k", "v")}
        vectors |= {f"{key}_by_columns": tuple(names[f"{key}_by_columns"]) for key in ("q", "k", "v")}
        assert len(set(vectors.values())) == len(vectors), (seed, vectors)
        assert all(any(value != 0 for value in vectors[key]) for key in "qkv"), seed
        assert not any(variant[m] == idea[n] for m in ("Wq", "Wk", "Wv") for n in ("Wq", "Wk", "Wv")), seed
        for letter in "qkv":  # and so every named mistake of the exercise gets its own sentence
            for mistake in LESSON.exercises[letter].mistakes:
                feedback = LESSON.check(letter, _written(names[mistake]), variant_seed=seed)
                assert not feedback.correct, (seed, letter, mistake)


# -------------------------------------------------------------- the goal: one query to its output
ONE_QUERY = ("scores", "weights", "output")
ONE_QUERY_SEEDS = [None, *range(20)]
SLIPS = {
    "scores": ("one_raw_scores", "one_scores_over_d_k"),
    "weights": ("one_unscaled_weights", "one_scores", "one_raw_scores", "one_normalized_scores"),
    "output": ("one_keys_mixed", "one_unscaled_output", "one_plain_average"),
}
# The chapter reference's worked example, which the quiz's feedback quotes.
WORKED_Q, WORKED_K, WORKED_V = [[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]]


def _one_query(seed: int | None) -> dict[str, np.ndarray]:
    """The three answers of "one query to its output" for a variant, computed here with qkv."""
    variant = LESSON.variant(seed)
    q, K, V = [variant["one_q"]], variant["one_K"], variant["one_V"]
    output, weights = attention(q, K, V, return_weights=True)
    return {"scores": attention_scores(q, K)[0], "weights": weights[0], "output": output[0]}


def _decimals(value: list[float], decimals: int) -> str:
    return ", ".join(f"{component:.{decimals}f}" for component in value)


def test_one_query_has_numbers_of_its_own_on_the_seed_page() -> None:
    variant = LESSON.variant(None)
    assert (variant["one_q"], variant["one_K"], variant["one_V"]) == (
        [1, 2],
        [[1, 1], [1, 2]],
        [[0, 3], [3, 1]],
    )
    assert variant["one_d_k"] == 2
    answers = _one_query(None)
    assert np.allclose(answers["scores"], [3 / math.sqrt(2), 5 / math.sqrt(2)])
    assert np.allclose(answers["weights"], [0.19557, 0.80443], atol=5e-6)
    assert np.allclose(answers["output"], [2.413289, 1.391141], atol=5e-7)
    text = text_of(page()["one-query"].html)
    assert "The query q = [1, 2] meets two keys, K = [[1, 1], [1, 2]] (one key per row), so d_k = 2." in text
    assert "The values are V = [[0, 3], [3, 1]] (one value per row)." in text
    assert "the chapter's worked example" not in text


@pytest.mark.parametrize("seed", ONE_QUERY_SEEDS)
def test_one_query_is_graded_with_the_variants_qkv_numbers(seed: int | None) -> None:
    variant = LESSON.variant(seed)
    for exercise, from_qkv in _one_query(seed).items():
        assert np.allclose(variant[f"one_{exercise}"], from_qkv)
        assert LESSON.check(exercise, _written(from_qkv.tolist()), variant_seed=seed).correct
        assert LESSON.check(exercise, _decimals(from_qkv.tolist(), 3), variant_seed=seed).correct
        # The worked example's answer is not this variant's.
        assert not LESSON.check(exercise, _written(variant[f"ex_{exercise}"]), variant_seed=seed).correct
        assert not LESSON.check(exercise, "0.5, 0.5", variant_seed=seed).correct
    assert "one-query" in LESSON.variant_section_ids()


def test_variants_draw_other_numbers_for_one_query() -> None:
    drawn = {json.dumps([LESSON.variant(seed)[k] for k in ("one_q", "one_K", "one_V")]) for seed in range(20)}
    assert len(drawn) >= 10


@pytest.mark.parametrize("seed", ONE_QUERY_SEEDS)
def test_no_answer_of_one_query_is_on_the_page(seed: int | None) -> None:
    """Not in any section, the chapter reference included, in any format a learner might look for."""
    whole = "".join(section.html for section in LESSON.render(seed))
    assert "attention-explorer" in whole  # the chapter reference is part of what is searched
    texts = (text_of(whole), html.unescape(whole))
    for exercise, answer in _one_query(seed).items():
        values = answer.tolist()
        forms = [_written(values)]
        for decimals in (6, 3, 2):
            forms += [_decimals(values, decimals), f"[{_decimals(values, decimals)}]"]
        # Each component (the whole numbers aside), with either sign, to six and to three decimals.
        forms += [
            f"{abs(value):.{decimals}f}"
            for value in values
            if not float(value).is_integer()
            for decimals in (6, 3)
        ]
        for text in texts:
            for form in forms:
                assert form not in text, (seed, exercise, form)


@pytest.mark.parametrize("seed", ONE_QUERY_SEEDS)
def test_every_slip_of_one_query_is_apart_and_named(seed: int | None) -> None:
    variant = LESSON.variant(seed)
    names = LESSON.hooks.namespace(variant)
    worked = [np.asarray(variant[f"ex_{exercise}"]) for exercise in ONE_QUERY]
    for exercise in ONE_QUERY:
        mistakes = LESSON.exercises[exercise].mistakes
        assert tuple(mistakes) == SLIPS[exercise]
        right = np.asarray(names[f"one_{exercise}"])
        slips = [np.asarray(names[key]) for key in mistakes]
        for i, slip in enumerate(slips):
            assert np.abs(slip - right).max() > 0.02, (seed, exercise, i)
            for other in slips[i + 1 :] + worked:
                assert np.abs(slip - other).max() > 0.02, (seed, exercise, i)
        for key in mistakes:
            for typed in (_written(names[key]), _decimals(names[key], 3)):
                feedback = LESSON.check(exercise, typed, variant_seed=seed)
                assert not feedback.correct and feedback.counted_as_attempt, (seed, exercise, key)
                assert feedback.mistake == key, (seed, exercise, key, typed, feedback.message)


@pytest.mark.parametrize(
    ("exercise", "slip", "says"),
    [
        (
            "scores",
            "one_raw_scores",
            "raw dot products q·k. Scaled scores are also divided by √d_k, here √2.",
        ),
        ("scores", "one_scores_over_d_k", "You divided by d_k itself"),
        ("weights", "one_unscaled_weights", "you forgot to divide by √d_k before the softmax."),
        ("weights", "one_scores", "Scores are not weights before normalization"),
        ("weights", "one_raw_scores", "Those are the raw scores."),
        ("weights", "one_normalized_scores", "Those are the raw scores divided by their sum."),
        ("output", "one_keys_mixed", "the weights applied to the keys"),
        ("output", "one_unscaled_output", "unscaled weights"),
        ("output", "one_plain_average", "plain average of the values"),
    ],
)
def test_one_querys_mistakes_are_named(exercise: str, slip: str, says: str) -> None:
    typed = _written(LESSON.hooks.namespace(LESSON.variant(None))[slip])
    feedback = LESSON.check(exercise, typed)
    assert not feedback.correct and feedback.counted_as_attempt
    assert says in feedback.message


def test_one_querys_slips_come_from_qkv() -> None:
    slips = LESSON.hooks.namespace(LESSON.variant(None))
    q, K, V = [[1, 2]], [[1, 1], [1, 2]], [[0, 3], [3, 1]]
    raw = attention_scores(q, K, scale=1.0)
    assert np.allclose(slips["one_raw_scores"], [3, 5])
    assert np.allclose(slips["one_scores_over_d_k"], [1.5, 2.5])
    assert np.allclose(slips["one_normalized_scores"], [0.375, 0.625])
    assert np.allclose(slips["one_unscaled_weights"], softmax(raw)[0])
    assert np.allclose(slips["one_unscaled_weights"], [0.119203, 0.880797], atol=5e-7)
    assert np.allclose(slips["one_keys_mixed"], _one_query(None)["weights"] @ np.asarray(K))
    assert np.allclose(slips["one_unscaled_output"], softmax(raw)[0] @ np.asarray(V))
    assert np.allclose(slips["one_plain_average"], [1.5, 2])


def test_predict_first_is_a_choice_whose_explanation_comes_after_committing() -> None:
    sections = page()
    idea = sections["predict-first"].html
    form = re.search(
        r'<form class="exercise" data-exercise-id="predict" data-kind="choice">.*?</form>', idea, re.S
    )
    assert form and "<legend>Your guess: which vectors are averaged" in form.group(0)
    # The explanations are not in the page: the server sends the one for the learner's choice.
    for letter in "ABC":
        assert LESSON.exercises["predict"].choices[ord(letter) - 65].feedback not in html.unescape(idea)
    assert LESSON.check("predict", "C").correct
    for letter in "AB":
        feedback = LESSON.check("predict", letter)
        assert not feedback.correct and "value" not in feedback.message.lower()
    # Nothing above the question answers it: it opens the page, and the idea that explains it follows.
    assert LESSON.render()[0].id == "predict-first"
    assert "average" not in text_of(idea.split("<form")[0])
    assert "the output averages the values" in text_of(sections["idea"].html)


def test_the_quiz_keeps_the_seeds_question_and_adds_two_a_memoriser_gets_wrong() -> None:
    assert LESSON.exercises["quiz"].answer == "A"
    assert (LESSON.exercises["doubled"].answer, LESSON.exercises["shifted"].answer) == ("B", "C")
    for exercise in ("quiz", "doubled", "shifted"):
        right = LESSON.exercises[exercise].answer
        right_text = next(c.text for c in LESSON.exercises[exercise].choices if c.letter == right)
        for choice in LESSON.exercises[exercise].choices:
            if choice.letter == right:
                continue
            message = LESSON.check(exercise, choice.letter).message
            # A wrong choice's explanation teaches without handing over the right choice.
            assert message.startswith("Not quite.") and right_text.lower().rstrip(".") not in message.lower()
            assert "the values" not in message.lower() and "stay" not in message.lower()
    doubled = LESSON.check("doubled", "B").message
    shifted = LESSON.check("shifted", "C").message
    weights = _written(softmax(attention_scores(WORKED_Q, WORKED_K))[0].tolist())
    doubled_output = attention(WORKED_Q, WORKED_K, 2 * np.asarray(WORKED_V))[0]
    assert f"they stay {weights}, while the output doubles" in doubled
    assert _written(doubled_output.tolist()) in doubled
    shifted_weights = softmax(attention_scores(WORKED_Q, WORKED_K) + 1)[0]
    assert f"the weights stay {_written(shifted_weights.tolist())} after adding 1" in shifted


# ------------------------------------------------- the code exercise: every named mistake keeps its hint
def _as_made_by(hint: Mistake, case: Case) -> object:
    """What a learner who makes exactly this mistake returns for the case (only the hint's item wrong)."""
    try:
        wrong = hint.compute(*case.args)
    except (ArithmeticError, LookupError, TypeError, ValueError):
        return None  # the mistake cannot even be made with these inputs (shapes that do not fit)
    if hint.at is None:
        return wrong
    found = case.compare.item(hint.at)
    assert found is not None
    _, key = found
    if isinstance(case.expected, dict):
        return {**case.expected, key: wrong}
    items = list(case.expected)
    items[key] = wrong
    return tuple(items)


def test_every_named_mistake_of_the_code_exercise_gets_its_own_hint_for_many_seeds() -> None:
    """A hint never depends on the random sizes: the mistake it names is recognised on every seed.

    A mistake that gives the right result for a case is not a failure there (for example 3·d_model·d_k
    when d_v = d_k, on purpose); every other named mistake must be shown with its own sentence.
    """
    suite = LESSON.exercises["functions"].suite
    assert suite is not None
    # Sizes are drawn from a few dozen whole numbers, so collisions are likely: scan many seeds. The
    # projections take random real matrices, where two mistakes cannot agree by chance: a few seeds.
    for seed in [397129570, *range(SCANNED)]:
        cases = suite.cases(seed)
        for case in cases if seed < 5 else [c for c in cases if c.function != "project_qkv"]:
            for hint in case.hints:
                if not isinstance(hint, Mistake):
                    continue
                got = _as_made_by(hint, case)
                if got is None or case.compare.mismatch(got, case.expected) is None:
                    continue  # this mistake happens to give the right result here
                outcome = Outcome(case.args, case.expected, case.compare, returned=got)
                assert first_hint(case.hints, outcome) == hint.message, (seed, case.call, hint.message)


def test_hints_are_plain_sentences_without_markdown() -> None:
    """The page shows hints as text, so a backtick would be shown as it is."""
    import ast

    from qkv.grading import STUB
    from qkv.lessons import BUILTIN_CONTENT

    (grading,) = BUILTIN_CONTENT.glob("L4/L4.1-*/grading.py")
    tree = ast.parse(grading.read_text(encoding="utf-8"))
    sentences = [STUB] + [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
    ]
    assert len(sentences) > 10
    assert [sentence for sentence in sentences if "`" in sentence] == []


def test_the_projection_widgets_new_settings_are_checked() -> None:
    from qkv.lessons import load_catalog
    from qkv.lessons.widgets import check_widget

    widgets = load_catalog().widgets

    names = LESSON.variant(None)
    assert (
        check_widget("projection-sliders", {"numbers": "idea", "solved_by": {"q": "q"}}, names, widgets) == []
    )
    assert check_widget("projection-sliders", {"numbers": "nope"}, names, widgets) == [
        "numbers must name a table of the variant (such as \"example\"), not 'nope'."
    ]
    assert check_widget("projection-sliders", {"solved_by": {"w": "q"}}, names, widgets) == [
        "solved_by must be a table from q, k or v to the id of the exercise that asks for it, "
        'such as q = "q".'
    ]
    assert check_widget("projection-sliders", {"numbers": "idea"}, {"idea": {"x": [1, 2]}}, widgets) == [
        "The variant's table 'idea' has no 'Wq', which this widget shows.",
        "The variant's table 'idea' has no 'Wk', which this widget shows.",
        "The variant's table 'idea' has no 'Wv', which this widget shows.",
    ]
