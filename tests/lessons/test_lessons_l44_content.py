"""Lesson L4.4 as shipped: every number on its page against qkv, its named mistakes, its variants, its widget."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import numpy as np
import pytest

from lesson_pages import assert_tags_balanced, text_of
from qkv import attention, attention_scores, causal_mask, softmax
from qkv.lessons import LessonPart, RenderedSection, load_catalog

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.4")
STARTER = """import numpy as np

def causal_mask(n_q, n_k):
    pass

def masked_attention(Q, K, V, mask):
    pass

def padding_mask(lengths, n_k):
    pass
"""
# The seed numbers: the chapter's worked example.
q, K, V = [[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]]


def page(seed: int | None = None) -> dict[str, RenderedSection]:
    return {section.id: section for section in LESSON.render(seed)}


def vector(values: Any) -> str:
    return "[" + ", ".join(f"{float(v):.6f}" for v in np.ravel(values)) + "]"


def check(exercise: str, answer: str, seed: int | None = None) -> Any:
    return LESSON.check(exercise, answer, variant_seed=seed)


def test_identity_place_goal_and_parts() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.4", "Masks and causal attention", "L4")
    assert LESSON.place == "L4.4 · lesson 4 of 6"
    assert LESSON.goal.startswith("Let each query see only the keys it is allowed to, by adding a mask M")
    assert "before the softmax" in LESSON.goal and "all masked" in LESSON.goal
    assert LESSON.parts == (
        LessonPart("predict", "Predict first", counts_toward_done=False),
        LessonPart("part1", "Part 1: by hand", changes_with_variant=True),
        LessonPart("part2", "Part 2: in code"),
        LessonPart("quiz", "Check your understanding"),
    )
    assert LESSON.variant_section_ids() == ["part1"]


def test_exercises_in_page_order() -> None:
    kinds = {ex.id: (ex.kind, ex.part) for ex in LESSON.exercises.values()}
    assert list(kinds.items()) == [
        ("predict", ("choice", "predict")),
        ("weights", ("numeric", "part1")),
        ("output", ("numeric", "part1")),
        ("causal-row", ("numeric", "part1")),
        ("masked-scores", ("letter", "part1")),
        ("fully-masked", ("numeric", "part1")),
        ("functions", ("code", "part2")),
        ("quiz-order", ("choice", "quiz")),
        ("quiz-policy", ("choice", "quiz")),
        ("quiz-large-negative", ("choice", "quiz")),
    ]


def test_sections_titles_and_balanced_html() -> None:
    sections = LESSON.render()
    assert [s.id for s in sections] == ["idea", "predict", "part1", "part2", "quiz", "reference"]
    assert [s.title for s in sections][:5] == [
        "The idea",
        "Predict first",
        "Part 1. Do it hands-on",
        "Part 2. Do it in code",
        "Check your understanding",
    ]
    assert sections[-1] is CATALOG.chapter_reference("L4")
    for section in sections:
        assert_tags_balanced(section.html, section.id)
    predict = text_of(page()["predict"].html)
    assert "S = np.where(mask, Q @ K.T / np.sqrt(K.shape[-1]), -np.inf)" in predict  # the NumPy one-liner
    assert "Chapter context" in predict


def test_the_idea_table_is_qkvs_causal_mask_for_four_tokens() -> None:
    idea = page()["idea"].html
    rows = re.findall(r"<tr>\s*<td>query (\d)</td>(.*?)</tr>", idea, re.S)
    cells = [re.findall(r"<td>(.*?)</td>", row) for _, row in rows]
    additive = np.where(causal_mask(4, 4), "0", "−∞")
    assert [int(i) for i, _ in rows] == [0, 1, 2, 3]
    assert cells == additive.tolist()


def test_part1_seed_numbers_are_qkvs() -> None:
    O, A = attention(q, K, V, causal=True, return_weights=True)
    assert (A.tolist(), O.tolist()) == ([[1.0, 0.0]], [[2.0, 0.0]])
    assert check("weights", vector(A)).correct and check("output", "[2, 0]").correct
    assert (
        check("weights", "1, 0").message
        == "Correct: query 0 may see only key 0, so all of its weight goes there: [1, 0]."
    )
    row = causal_mask(4, 4)[2]
    assert row.sum() == 3 and np.flatnonzero(row).tolist() == [0, 1, 2]
    feedback = check("causal-row", "[1, 1, 1, 0]")
    assert feedback.correct and "query 2 sees 3 keys, 0, 1 and 2" in feedback.message
    scores = attention_scores(q, K)[0]
    assert vector(scores) == "[0.707107, 0.000000]"
    masked = check("masked-scores", "b")
    assert masked.correct and masked.message.startswith("Correct: [0.707107, −∞].")
    dead = attention(q, K, V, mask=[[False, False]], all_masked="zero")
    assert dead.tolist() == [[0.0, 0.0]] and check("fully-masked", "[0, 0]").correct
    prompts = {ex.id: ex.prompt for ex in LESSON.exercises.values()}
    assert (
        "q = [1, 0] sits at position 0 of the sequence whose keys are K = [[1, 0], [0, 1]]"
        in prompts["weights"]
    )
    assert "V = [[2, 0], [0, 2]]" in prompts["output"]
    assert "A causal sequence has 4 tokens. Write query 2's row" in prompts["causal-row"]
    assert "(keys 0 to 3, in order)" in prompts["causal-row"]
    assert prompts["masked-scores"].startswith(
        "Query 0's scaled scores are [0.707107, 0], and key 1 is masked."
    )
    assert (
        "A = [0.707107, 0], B = [0.707107, −∞], C = [0.669762, 0], D = [−∞, 0]." in prompts["masked-scores"]
    )


# Every named mistake of the issue, typed by a learner on the seed page, and the words its message must hold.
SEED_MISTAKES = [
    ("weights", "[0.669762, 0]", "applied after the softmax"),  # masked after the softmax
    ("weights", "[0.669762, 0.330238]", "transposed mask"),  # the upper triangle: query 0 sees the last key
    ("weights", "[0, 1]", "as if True meant masked"),
    ("weights", "[0, 0]", "diagonal were excluded"),
    ("weights", "[0.5, 0.5]", "−1e9 stands in for −∞"),  # uniform weights
    ("output", "[1.339523, 0]", "masked after the softmax"),
    ("output", "[1.339523, 0.660477]", "with no mask"),
    ("output", "[0, 2]", "read the wrong way round"),
    ("output", "[0, 0]", "diagonal were excluded"),
    ("output", "[1, 1]", "mean of the values"),
    ("causal-row", "[1, 1, 0, 0]", "the diagonal was excluded"),
    ("causal-row", "[0, 0, 1, 1]", "transposed mask"),
    ("causal-row", "[0, 0, 0, 1]", "the reverse of what was asked"),
    ("causal-row", "[1, 1, 1, 1]", "the later ones too"),
    ("masked-scores", "A", "multiplies the scores by the mask"),
    ("masked-scores", "C", "mask applied after the softmax"),
    ("masked-scores", "D", "as if True meant masked"),
    ("fully-masked", "[1, 1]", "uniform weights"),
    ("fully-masked", "[1.339523, 0.660477]", "no mask at all"),
    ("fully-masked", "[2, 0]", "as if key 0 were still allowed"),
]


@pytest.mark.parametrize(("exercise", "answer", "words"), SEED_MISTAKES)
def test_every_named_mistake_gets_its_message(exercise: str, answer: str, words: str) -> None:
    feedback = check(exercise, answer)
    assert not feedback.correct and feedback.counted_as_attempt
    assert words in feedback.message, feedback.message


def test_the_seed_mistakes_are_what_qkv_computes() -> None:
    wrong = {**LESSON.variant(None), **_wrong(None)}
    plain = softmax(attention_scores(q, K))  # (1, 2)
    np.testing.assert_allclose(wrong["weights_after_softmax"], (plain * causal_mask(1, 2))[0])
    np.testing.assert_allclose(wrong["weights_unmasked"], plain[0])
    np.testing.assert_allclose(wrong["output_unmasked"], attention(q, K, V)[0])
    np.testing.assert_allclose(wrong["weights_uniform"], [0.5, 0.5])
    # Filling a fully-masked row with -1e9 (not -inf) does give it uniform weights, the mean of V.
    filled = softmax(np.where([[False, False]], attention_scores(q, K), -1e9))
    np.testing.assert_allclose(filled, [[0.5, 0.5]])
    np.testing.assert_allclose(wrong["dead_uniform"], (filled @ np.asarray(V))[0])
    assert wrong["masked_weight"] == pytest.approx(softmax(attention_scores(q, K) * [[1, 0]])[0, 1])


def _wrong(seed: int | None) -> dict[str, Any]:
    names = LESSON.variant(seed)
    module = LESSON.source.parent / "lesson.py"
    from qkv.lessons.pyfiles import import_lesson_file

    lesson_py, _ = import_lesson_file(module)
    assert lesson_py is not None
    return {**lesson_py.wrong_answers(names), "masked_weight": names["masked_weight"]}


NUMERIC = {
    "weights": "weights_causal",
    "output": "output_causal",
    "causal-row": "causal_row",
    "fully-masked": "dead_output",
}


@pytest.mark.parametrize("seed", [None, *range(40)])
def test_variants_are_qkvs_numbers_and_every_mistake_is_told_apart(seed: int | None) -> None:
    data = LESSON.variant(seed)
    Qv, Kv, Vv = [data["q"]], data["K"], data["V"]
    O, A = attention(Qv, Kv, Vv, causal=True, return_weights=True)
    assert data["weights_causal"] == A[0].tolist() and data["output_causal"] == O[0].tolist()
    assert data["causal_row"] == causal_mask(data["seq_n"], data["seq_n"])[data["seq_i"]].astype(int).tolist()
    assert data["dead_output"] == [0.0, 0.0]
    np.testing.assert_allclose(data["scores"], attention_scores(Qv, Kv)[0])
    assert all(abs(v) <= 2 for v in (*data["q"], *np.ravel(data["K"]), *np.ravel(data["V"])))  # by hand
    for exercise_id, answer_key in NUMERIC.items():
        exercise = LESSON.exercises[exercise_id]
        assert check(exercise_id, vector(data[answer_key]), seed).correct
        for mistake, message in exercise.mistakes.items():
            feedback = check(exercise_id, vector(_wrong(seed)[mistake]), seed)
            assert not feedback.correct, (exercise_id, mistake, seed)
            assert feedback.message.startswith(message.split("{{")[0][:30]), (exercise_id, mistake, feedback)
    texts = [data[k] for k in ("multiplied_text", "masked_row_text", "after_softmax_text", "inverted_text")]
    assert len(set(texts)) == 4 and "−∞" in data["masked_row_text"]
    masked = np.where(np.arange(2) != data["masked_key"], attention_scores(Qv, Kv)[0], -np.inf)
    assert data["masked_row_text"] == "[" + ", ".join("−∞" if v == -np.inf else _num(v) for v in masked) + "]"


def _num(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def test_a_variant_changes_the_numbers_of_part1() -> None:
    data = LESSON.variant(11)
    part1 = text_of(page(11)["part1"].html)
    assert f"K = {_listed(data['K'])}" in part1 and f"A causal sequence has {data['seq_n']} tokens" in part1
    assert data["masked_row_text"] in part1


def _listed(value: Any) -> str:
    return json.dumps(value).replace(",", ", ").replace(",  ", ", ")


def test_the_code_exercise() -> None:
    code = LESSON.exercises["functions"]
    assert code.starter_code == STARTER
    assert code.functions == ("causal_mask", "masked_attention", "padding_mask")
    assert code.suite is not None and tuple(code.suite.functions) == code.functions
    spec = text_of(page()["part2"].html)
    for words in (
        "True where j ≤ i",
        "PyTorch's is_causal",
        "return (O, A)",
        "zero output row: no\nNaN",
        "lengths[b] − 1",
    ):
        assert words in spec, words


@pytest.mark.parametrize(
    ("exercise", "right"),
    [("predict", "B"), ("quiz-order", "C"), ("quiz-policy", "A"), ("quiz-large-negative", "B")],
)
def test_choices_have_one_right_answer_and_a_teaching_reply_for_each(exercise: str, right: str) -> None:
    choices = LESSON.exercises[exercise].choices
    for choice in choices:
        feedback = check(exercise, choice.letter)
        assert feedback.correct == (choice.letter == right)
        assert feedback.message.startswith("Right." if feedback.correct else "Not quite.")
        assert right not in re.findall(r"\b[A-D]\b", feedback.message) or feedback.correct
    assert "before the softmax" in check("quiz-order", "C").message


# -- the widget -------------------------------------------------------------------------------------------


def widget_config(fragment: str) -> dict[str, Any]:
    (raw,) = re.findall(r"<div class=\"widget\" data-widget=\"mask-grid\" data-config='([^']*)'>", fragment)
    return json.loads(html.unescape(raw))  # type: ignore[no-any-return]


def test_the_widget_numbers_are_qkvs_for_every_row_of_every_mask() -> None:
    config = widget_config(page()["idea"].html)
    Q, Kw, Vw = (np.asarray(config[name]) for name in ("Q", "K", "V"))
    assert Q.shape == (4, 2) and Kw.shape == (4, 2) and config["padding_length"] == 3
    np.testing.assert_allclose(config["scores"], attention_scores(Q, Kw))
    for i, entries in enumerate(config["rows"]):
        assert entries[0] is None and len(entries) == 16
        for bits in range(1, 16):
            allowed = [[bool(bits >> j & 1) for j in range(4)]]
            O, A = attention(Q[i : i + 1], Kw, Vw, mask=allowed, return_weights=True)
            np.testing.assert_allclose(entries[bits]["weights"], A[0], rtol=1e-12)
            np.testing.assert_allclose(entries[bits]["output"], O[0], rtol=1e-12)
            # Where the row keeps a key, a -1e9 fill gives exactly the -inf weights.
            filled = softmax(np.where(allowed, attention_scores(Q[i : i + 1], Kw), -1e9))
            np.testing.assert_array_equal(filled[0], A[0])
    assert config["dead"]["zero"] == [{"weights": [0.0] * 4, "output": [0.0, 0.0]}] * 4
    assert config["dead"]["nan"] == [{"weights": [None] * 4, "output": [None, None]}] * 4
    for dead in config["dead"]["fill"]:
        np.testing.assert_allclose(dead["weights"], [0.25] * 4)
        np.testing.assert_allclose(dead["output"], Vw.mean(axis=0))
    assert len(config["errors"]) == 15
    with pytest.raises(ValueError) as raised:
        attention(Q, Kw, Vw, mask=np.tril(np.ones((4, 4), dtype=bool), k=-1), all_masked="raise")
    assert config["errors"]["1"] == str(raised.value)  # the diagonal excluded: row 0 has no key
    assert config["presets"]["causal"] == causal_mask(4, 4).tolist()
    assert config["presets"]["padding"] == [[True, True, True, False]] * 4
    assert config["presets"]["no-diagonal"] == np.tril(np.ones((4, 4), dtype=bool), k=-1).tolist()


def test_the_widget_fallback_shows_the_causal_weights() -> None:
    fallback = text_of(page()["idea"].html)
    config = widget_config(page()["idea"].html)
    O, A = attention(config["Q"], config["K"], config["V"], causal=True, return_weights=True)
    first = config["V"][0]
    assert f"query 01−∞ (masked)−∞ (masked)−∞ (masked)[{_num(first[0])}, {_num(first[1])}]" in fallback
    # The widget's numbers are not Part 1's: query 0's output under the causal mask is not an answer.
    assert first != LESSON.variant(None)["output_causal"]
    assert f"query 1{_num(A[1, 0])}{_num(A[1, 1])}" in fallback
    assert f"[{_num(O[3, 0])}, {_num(O[3, 1])}]" in fallback


def test_the_widget_settings_are_checked_with_sentences() -> None:
    from qkv.lessons.widgets import check_widget

    good = {"Q": [[1, 0]], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
    assert check_widget("mask-grid", good, {}) == []
    assert check_widget("mask-grid", {"Q": [[1, 0]]}, {}) == [
        "The mask grid needs 'K'.",
        "The mask grid needs 'V'.",
    ]
    assert check_widget("mask-grid", {**good, "colour": "red"}, {}) == [
        "Unknown setting 'colour' (known: Q, K, V, padding_length)."
    ]
    assert check_widget("mask-grid", {**good, "padding_length": 3}, {}) == [
        "padding_length must be a whole number from 1 to 2, not 3."
    ]
    (shapes,) = check_widget("mask-grid", {**good, "V": [[2, 0]]}, {})
    assert shapes.startswith("Q, K and V do not fit together: V has 1 rows but K has 2")
    (size,) = check_widget("mask-grid", {**good, "Q": [[1, 0]] * 6}, {})
    assert size == "The mask grid shows 1 to 5 queries and 2 to 5 keys, not 6 and 2."


def test_the_widget_presets_show_no_worked_example_numbers() -> None:
    """The grid's presets never show a number that an exercise of the chapter asks for (the worked example's
    weights and output, scaled score, and their doubled or unscaled forms)."""
    config = widget_config(page()["idea"].html)
    answers = {0.669762, 0.330238, 1.339523, 0.660477, 0.80443, 0.19557, 0.731059, 0.268941, 0.707107}
    for name, mask in config["presets"].items():
        O, A = attention(config["Q"], config["K"], config["V"], mask=mask, return_weights=True)
        shown = {round(float(v), 6) for v in np.concatenate([A.ravel(), O.ravel()])}
        assert shown & answers == set(), name
