"""Lesson L4.4 as shipped: every number on its page against qkv, its named mistakes, its variants, its widget."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import numpy as np
import pytest

from qkv import attention, attention_scores, causal_mask, softmax
from qkv.lessons import LessonPart, RenderedSection, load_catalog
from qkv.lessons.answers import format_value
from tests.lesson_pages import assert_tags_balanced, text_of, widget_config

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


def page(seed: int | None = None) -> dict[str, RenderedSection]:
    return {section.id: section for section in LESSON.render(seed)}


def vector(values: Any) -> str:
    return "[" + ", ".join(f"{float(v):.6f}" for v in np.ravel(values)) + "]"


def check(exercise: str, answer: str, seed: int | None = None) -> Any:
    return LESSON.check(exercise, answer, variant_seed=seed)


def test_identity_place_goal_and_parts() -> None:
    assert (LESSON.id, LESSON.title, LESSON.chapter_id) == ("L4.4", "Masks and causal attention", "L4")
    assert LESSON.place == f"L4.4 · lesson 4 of {len(LESSON.chapter.lesson_ids)}"
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
    # predict first: the idea's text would give the prediction away
    assert [s.id for s in sections] == ["predict", "idea", "part1", "part2", "quiz", "reference"]
    assert [s.title for s in sections][:5] == [
        "Predict first",
        "The idea",
        "Part 1. Do it hands-on",
        "Part 2. Do it in code",
        "Check your understanding",
    ]
    assert sections[-1] is CATALOG.chapter_reference("L4")
    for section in sections:
        assert_tags_balanced(section.html, section.id)
    idea = text_of(page()["idea"].html)
    assert "S = np.where(mask, Q @ K.T / np.sqrt(K.shape[-1]), -np.inf)" in idea  # the NumPy one-liner
    assert "Chapter context" in idea
    assert "np.where" not in text_of(page()["predict"].html)  # the prediction is asked on its own


def test_the_idea_table_is_qkvs_causal_mask_for_four_tokens() -> None:
    idea = page()["idea"].html
    rows = re.findall(r"<tr>\s*<td>query (\d)</td>(.*?)</tr>", idea, re.S)
    cells = [re.findall(r"<td>(.*?)</td>", row) for _, row in rows]
    additive = np.where(causal_mask(4, 4), "0", "−∞")
    assert [int(i) for i, _ in rows] == [0, 1, 2, 3]
    assert cells == additive.tolist()


def _lesson_py() -> Any:
    from qkv.lessons.pyfiles import import_lesson_file

    module, problems = import_lesson_file(LESSON.source.parent / "lesson.py")
    assert module is not None, problems
    return module


LESSON_PY = _lesson_py()
SEED = LESSON.variant(None)
# The chapter's worked example, which the chapter reference on the same page works out.
WORKED_Q, WORKED_K, WORKED_V = [[1, 0]], [[1, 0], [0, 1]], [[2, 0], [0, 2]]


def _causal_row_weights(data: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Query 1 of the causal sequence of three tokens: qkv's weights and output."""
    Q = np.zeros((3, len(data["q"])))
    Q[1] = data["q"]  # only query 1's row is read
    O, A = attention(Q, data["K"], data["V"], causal=True, return_weights=True)  # (3, d_v), (3, 3)
    return A[1], O[1]


def test_part1_seed_numbers_are_qkvs() -> None:
    A, O = _causal_row_weights(SEED)
    assert SEED["position"] == 1 and len(SEED["K"]) == len(SEED["V"]) == 3
    np.testing.assert_allclose(SEED["weights_causal"], A, rtol=1e-12)
    np.testing.assert_allclose(SEED["output_causal"], O, rtol=1e-12)
    scaled = attention_scores([SEED["q"]], SEED["K"])[0]  # (3,)
    np.testing.assert_allclose(A[:2], softmax(scaled[:2]))  # a real softmax over keys 0 and 1
    assert check("weights", vector(A)).correct and check("output", vector(O)).correct
    assert check("weights", vector(A)).message == f"Correct: {format_value(A.tolist())}. " + (
        "Query 1 sees keys 0 and 1, which share the whole weight of 1; key 2 gets exactly 0."
    )
    n, i = SEED["seq_n"], SEED["seq_i"]
    row = causal_mask(n, n)[i]
    feedback = check("causal-row", vector(row))
    assert feedback.correct and f"query {i} sees {row.sum()} keys" in feedback.message
    scores = np.asarray(SEED["score_row"], dtype=float)
    keep = np.arange(3) != SEED["masked_key"]
    masked = check("masked-scores", "b")
    assert masked.correct and masked.message.startswith(f"Correct: {_row(np.where(keep, scores, -np.inf))}.")
    dead = attention([SEED["q"]], SEED["K"], SEED["V"], mask=[[False] * 3], all_masked="zero")
    assert check("fully-masked", vector(dead[0])).correct
    prompts = {ex.id: ex.prompt for ex in LESSON.exercises.values()}
    assert (
        f"q = {_listed(SEED['q'])} sits at position 1 of the causal sequence whose keys are "
        f"K = {_listed(SEED['K'])}" in prompts["weights"]
    )
    assert "(d_k = 4)" in prompts["weights"] and f"V = {_listed(SEED['V'])}" in prompts["output"]
    assert f"A causal sequence has {n} tokens. Write query {i}'s row" in prompts["causal-row"]
    assert f"(keys 0 to {n - 1}, in order)" in prompts["causal-row"]
    assert prompts["masked-scores"].startswith(
        f"Another query's scaled scores against three keys are {_row(scores)}, and key "
        f"{SEED['masked_key']} is masked."
    )
    options = [scores * keep, np.where(keep, scores, -np.inf), softmax(scores) * keep]
    options.append(np.where(keep, -np.inf, scores))
    letters = ", ".join(f"{letter} = {_row(option)}" for letter, option in zip("ABCD", options, strict=True))
    assert letters + "." in prompts["masked-scores"]


def _row(values: Any) -> str:
    return "[" + ", ".join("−∞" if v == -np.inf else _num(v) for v in values) + "]"


def test_part1_default_numbers_are_not_the_worked_example() -> None:
    """The first page's numbers are numbers of their own, and Part 1 no longer says they are the example's."""
    assert (SEED["q"], SEED["K"][:2], SEED["V"][:2]) != (WORKED_Q[0], WORKED_K, WORKED_V)
    worked = attention(WORKED_Q, WORKED_K, WORKED_V, mask=[[True, False]])[0]  # the reference's [2, 0]
    assert not np.allclose(SEED["output_causal"], worked)
    for seed in (None, 3):
        part1 = text_of(page(seed)["part1"].html)
        assert "worked example" not in part1 and "first numbers" not in part1


def _page_numbers(seed: int | None) -> set[float]:
    """Every number anywhere in the rendered page (text, attributes, widget configs), to 6 decimals."""
    whole = html.unescape("".join(section.html for section in LESSON.render(seed)))
    return {round(float(x), 6) + 0.0 for x in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", whole)}


@pytest.mark.parametrize("seed", [None, *range(20)])
def test_no_part1_answer_is_on_the_page_before_it_is_answered(seed: int | None) -> None:
    """No number a Part 1 answer needs is printed anywhere on the page (the chapter reference's worked example,
    its attention explorer and the mask grid's configuration included). Whole numbers such as a weight of 0
    appear everywhere, so the fractions are what a learner could copy. The causal row is of more tokens than
    the idea's table of four shows. The zero policy's output is what the idea teaches, so it is not looked for."""
    data = LESSON.variant(seed)
    shown = _page_numbers(seed)
    for key in ("weights_causal", "output_causal"):
        fractions = {v for v in (round(float(v), 6) + 0.0 for v in data[key]) if v % 1}
        assert fractions, key  # a real softmax: no answer is made of whole numbers alone
        assert fractions & shown == set(), (key, fractions & shown)
    idea = page(seed)["idea"].html
    assert data["seq_n"] > 4 and "key 4" not in idea  # the table's rows are of 4 tokens
    assert _row(data["causal_row"]) not in text_of("".join(s.html for s in LESSON.render(seed)))


def test_the_default_numbers_pass_the_variant_filter() -> None:
    """The first page goes through the same checks as every drawn variant: no score of 0 in the masked-scores
    row (then scores × mask would equal the scores), every answer and named mistake told apart."""
    assert LESSON_PY._distinguishable({key: SEED[key] for key in LESSON_PY.SEED_PAGE})
    assert 0 not in SEED["score_row"]
    assert SEED["multiplied_text"] != SEED["score_row_text"]
    masked = int(SEED["masked_key"])
    # Option A keeps a weight for the masked key: e^0 is not 0.
    weight = softmax(np.asarray(SEED["score_row"], dtype=float) * (np.arange(3) != masked))[masked]
    assert 0 < weight < 1 and SEED["masked_weight"] == _num(weight)
    assert f"({_num(weight)} of it here" in check("masked-scores", "A").message


def test_the_filter_rejects_a_zero_score_and_the_worked_example() -> None:
    zero = {**LESSON_PY.SEED_PAGE, "score_row": [1.5, 0, 1]}
    assert not LESSON_PY._distinguishable(zero)
    # Keys 0 and 1 scored as in the worked example ([1/√2, 0], scaled): its weights 0.669762 and 0.330238.
    worked = {
        **LESSON_PY.SEED_PAGE,
        "q": [1, 0],
        "K": [[1, 0], [0, 1], [1, 1]],
        "V": [[2, 0], [0, 2], [1, 1]],
    }
    assert not LESSON_PY._distinguishable(worked)


@pytest.mark.parametrize("seed", [None, *range(40)])
def test_weights_are_a_softmax_over_two_allowed_keys(seed: int | None) -> None:
    """Query 1 sees keys 0 and 1: two nonzero weights below 1 and a 0 for key 2; its output is no row of V."""
    data = LESSON.variant(seed)
    weights = np.asarray(data["weights_causal"])
    assert weights[2] == 0 and (weights[:2] > 0).all() and (weights[:2] < 1).all()
    assert not any(np.allclose(data["output_causal"], row) for row in data["V"])


# Every named mistake of the issue, typed by a learner on the seed page, and the words its message must hold.
SEED_MISTAKES = [
    ("weights", "weights_after_softmax", "after the softmax"),
    ("weights", "weights_unmasked", "with no mask at all"),
    ("weights", "weights_transposed", "transposed mask"),
    ("weights", "weights_inverted", "as if True meant masked"),
    ("weights", "weights_no_diagonal", "diagonal were excluded"),
    ("weights", "weights_even", "evenly"),
    ("weights", "weights_unscaled", "unscaled scores"),
    ("output", "output_after_softmax", "masked after the softmax"),
    ("output", "output_unmasked", "with no mask"),
    ("output", "output_transposed", "transposed mask"),
    ("output", "output_inverted", "read the wrong way round"),
    ("output", "output_no_diagonal", "diagonal were excluded"),
    ("output", "output_even", "plain mean"),
    ("output", "output_unscaled", "unscaled scores"),
    ("causal-row", "row_no_diagonal", "the diagonal was excluded"),
    ("causal-row", "row_transposed", "transposed mask"),
    ("causal-row", "row_inverted", "the reverse of what was asked"),
    ("causal-row", "row_all", "the later ones too"),
    ("causal-row", "row_from_end", "at the wrong end of the sequence"),
    ("fully-masked", "dead_uniform", "uniform weights"),
    ("fully-masked", "dead_unmasked", "no mask at all"),
    ("fully-masked", "dead_causal", "under the causal mask, from above"),
    ("fully-masked", "dead_first", "as if key 0 were still allowed"),
]


@pytest.mark.parametrize(("exercise", "mistake", "words"), SEED_MISTAKES)
def test_every_named_mistake_gets_its_message(exercise: str, mistake: str, words: str) -> None:
    feedback = check(exercise, vector(_wrong(None)[mistake]))
    assert not feedback.correct and feedback.counted_as_attempt and feedback.mistake == mistake
    assert words in feedback.message, feedback.message


def test_the_letter_mistakes_get_their_messages() -> None:
    for letter, words in (
        ("A", "multiplies the scores by the mask"),
        ("C", "after the softmax"),
        ("D", "True"),
    ):
        feedback = check("masked-scores", letter)
        assert not feedback.correct and words in feedback.message, feedback.message


def test_a_causal_row_at_the_wrong_end_is_named_not_called_reversed() -> None:
    """The right count of keys at the end of the row is a mask mistake, not a slip in the order of typing."""
    for seed in (None, *range(10)):
        data = LESSON.variant(seed)
        backwards = data["causal_row"][::-1]
        feedback = check("causal-row", vector(backwards), seed)
        assert feedback.mistake == "row_from_end", (seed, feedback)
        assert "reverse order" not in feedback.message
        assert f"the right number of keys, {sum(backwards)}, but at the wrong end" in feedback.message


def test_fully_masked_asks_for_the_zero_policy_in_numbers() -> None:
    """NaN cannot be typed into a numeric answer (the generic reader refuses it without counting an attempt),
    so the question itself says that the NaN policy is not the one asked for."""
    prompt = LESSON.exercises["fully-masked"].prompt
    assert "under the zero policy" in prompt and "the NaN policy is not the one asked for here" in prompt
    feedback = check("fully-masked", "[nan, nan]")
    assert not feedback.correct and not feedback.counted_as_attempt


def test_the_seed_mistakes_are_what_qkv_computes() -> None:
    wrong = _wrong(None)
    q, K, V = [SEED["q"]], SEED["K"], np.asarray(SEED["V"])
    plain = softmax(attention_scores(q, K))[0]  # (3,)
    causal = np.arange(3) <= 1
    np.testing.assert_allclose(wrong["weights_after_softmax"], plain * causal)
    np.testing.assert_allclose(wrong["weights_unmasked"], plain)
    np.testing.assert_allclose(wrong["output_unmasked"], attention(q, K, V)[0])
    transposed = causal_mask(3, 3).T[1]  # query 1's row of the upper triangle
    np.testing.assert_allclose(
        wrong["weights_transposed"], attention(q, K, V, mask=transposed, return_weights=True)[1][0]
    )
    assert wrong["weights_inverted"] == [0.0, 0.0, 1.0] and wrong["output_inverted"] == V[2].tolist()
    assert wrong["weights_no_diagonal"] == [1.0, 0.0, 0.0] and wrong["output_no_diagonal"] == V[0].tolist()
    np.testing.assert_allclose(wrong["output_even"], V[:2].mean(axis=0))
    unscaled = softmax((np.asarray(q) @ np.asarray(K).T)[0][:2])
    np.testing.assert_allclose(wrong["weights_unscaled"][:2], unscaled)
    # Filling a fully-masked row with -1e9 (not -inf) does give it uniform weights, the mean of V.
    filled = softmax(np.where([[False] * 3], attention_scores(q, K), -1e9))
    np.testing.assert_allclose(filled, [[1 / 3] * 3])
    np.testing.assert_allclose(wrong["dead_uniform"], (filled @ V)[0])
    np.testing.assert_allclose(wrong["dead_causal"], SEED["output_causal"])


def _wrong(seed: int | None) -> dict[str, Any]:
    return LESSON_PY.wrong_answers(LESSON.variant(seed))  # type: ignore[no-any-return]


NUMERIC = {
    "weights": "weights_causal",
    "output": "output_causal",
    "causal-row": "causal_row",
    "fully-masked": "dead_output",
}


@pytest.mark.parametrize("seed", [None, *range(40)])
def test_variants_are_qkvs_numbers_and_every_mistake_is_told_apart(seed: int | None) -> None:
    data = LESSON.variant(seed)
    A, O = _causal_row_weights(data)
    np.testing.assert_allclose(data["weights_causal"], A, rtol=1e-12)
    np.testing.assert_allclose(data["output_causal"], O, rtol=1e-12)
    assert data["causal_row"] == causal_mask(data["seq_n"], data["seq_n"])[data["seq_i"]].astype(int).tolist()
    assert data["dead_output"] == [0.0, 0.0]
    assert all(abs(v) <= 2 for v in (*data["q"], *np.ravel(data["K"]), *np.ravel(data["V"])))  # by hand
    scaled = attention_scores([data["q"]], data["K"])[0]
    assert 0 < abs(scaled[0] - scaled[1]) <= 2
    wrong = _wrong(seed)
    for exercise_id, answer_key in NUMERIC.items():
        exercise = LESSON.exercises[exercise_id]
        assert check(exercise_id, vector(data[answer_key]), seed).correct
        for mistake, message in exercise.mistakes.items():
            feedback = check(exercise_id, vector(wrong[mistake]), seed)
            assert not feedback.correct, (exercise_id, mistake, seed)
            assert feedback.mistake == mistake, (exercise_id, mistake, seed, feedback)
            assert feedback.message.startswith(message.split("{{")[0][:30]), (exercise_id, mistake, feedback)
    texts = [data[k] for k in ("multiplied_text", "masked_row_text", "after_softmax_text", "inverted_text")]
    assert len(set(texts)) == 4 and "−∞" in data["masked_row_text"] and 0 not in data["score_row"]
    scores = np.asarray(data["score_row"], dtype=float)
    masked = np.where(np.arange(3) != data["masked_key"], scores, -np.inf)
    assert data["masked_row_text"] == _row(masked)


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


def test_the_widget_numbers_are_qkvs_for_every_row_of_every_mask() -> None:
    config = widget_config(page()["idea"].html, "mask-grid")
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
    config = widget_config(page()["idea"].html, "mask-grid")
    O, A = attention(config["Q"], config["K"], config["V"], causal=True, return_weights=True)
    first = config["V"][0]
    assert f"query 01−∞ (masked)−∞ (masked)−∞ (masked)[{_num(first[0])}, {_num(first[1])}]" in fallback
    # The widget's numbers are not Part 1's: query 0's output under the causal mask is not an answer.
    assert first != LESSON.variant(None)["output_causal"]
    assert f"query 1{_num(A[1, 0])}{_num(A[1, 1])}" in fallback
    assert f"[{_num(O[3, 0])}, {_num(O[3, 1])}]" in fallback


def test_the_widget_settings_are_checked_with_sentences() -> None:
    from qkv.lessons import load_catalog
    from qkv.lessons.widgets import check_widget

    widgets = load_catalog().widgets

    good = {"Q": [[1, 0]], "K": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}
    assert check_widget("mask-grid", good, {}, widgets) == []
    assert check_widget("mask-grid", {"Q": [[1, 0]]}, {}, widgets) == [
        "The mask grid needs 'K'.",
        "The mask grid needs 'V'.",
    ]
    assert check_widget("mask-grid", {**good, "colour": "red"}, {}, widgets) == [
        "Unknown setting 'colour' (known: Q, K, V, padding_length)."
    ]
    assert check_widget("mask-grid", {**good, "padding_length": 3}, {}, widgets) == [
        "padding_length must be a whole number from 1 to 2, not 3."
    ]
    (shapes,) = check_widget("mask-grid", {**good, "V": [[2, 0]]}, {}, widgets)
    assert shapes.startswith("Q, K and V do not fit together: V has 1 rows but K has 2")
    (size,) = check_widget("mask-grid", {**good, "Q": [[1, 0]] * 6}, {}, widgets)
    assert size == "The mask grid shows 1 to 5 queries and 2 to 5 keys, not 6 and 2."


def test_the_widget_presets_show_no_worked_example_numbers() -> None:
    """The grid's presets never show a number that an exercise of the chapter asks for (the worked example's
    weights and output, scaled score, and their doubled or unscaled forms)."""
    config = widget_config(page()["idea"].html, "mask-grid")
    answers = {0.669762, 0.330238, 1.339523, 0.660477, 0.80443, 0.19557, 0.731059, 0.268941, 0.707107}
    for name, mask in config["presets"].items():
        O, A = attention(config["Q"], config["K"], config["V"], mask=mask, return_weights=True)
        shown = {round(float(v), 6) for v in np.concatenate([A.ravel(), O.ravel()])}
        assert shown & answers == set(), name
