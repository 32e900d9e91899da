"""Lesson L4.5 as shipped: every number on its page, its named mistakes, its widget, and its PyTorch oracle."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import numpy as np
import pytest

from qkv.lessons import load_catalog
from qkv.lessons.answers import format_number
from qkv.lessons.pyfiles import import_lesson_file
from tests.lesson_contract import grading_module
from tests.lesson_pages import text_of, widget_config, widget_configs

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.5")
GRADING = grading_module(LESSON)
LESSON_PY, _ = import_lesson_file(LESSON.source.parent / "lesson.py")
SEED = LESSON.hooks.namespace(LESSON.variant(None))
STARTER = """import numpy as np

def split_heads(X, h):
    pass

def merge_heads(H):
    pass

def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):
    pass

def mha_param_count(d_model):
    pass
"""


def page(seed: int | None = None) -> dict[str, str]:
    return {section.id: section.html for section in LESSON.render(seed)}


def three(values: list[float]) -> str:
    """A vector as a learner types it to 3 decimals: ``[0.196, 0.804]``."""
    return "[" + ", ".join(f"{value:.3f}" for value in values) + "]"


def softmax(row: np.ndarray) -> np.ndarray:
    e = np.exp(row - row.max())
    return e / e.sum()  # type: ignore[no-any-return]


def test_identity_and_sections() -> None:
    count = len(LESSON.chapter.lesson_ids)
    assert (LESSON.title, LESSON.place) == ("Multi-head attention", f"L4.5 · lesson 5 of {count}")
    assert (
        LESSON.goal
        == "Split d_model into h heads, attend in each head, merge the heads and mix them with W_O."
    )
    assert [s.id for s in LESSON.render()] == ["predict", "idea", "part1", "part2", "quiz", "reference"]
    assert [(p.id, p.counts_toward_done, p.changes_with_variant) for p in LESSON.parts] == [
        ("predict", False, False),
        ("part1", True, True),
        ("part2", True, False),
        ("quiz", True, False),
    ]
    kinds = {ex.id: ex.kind for ex in LESSON.exercises.values()}
    assert kinds == {
        "guess": "choice",
        "d-head": "numeric",
        "split-shape": "numeric",
        "params": "numeric",
        "head-weights": "numeric",
        "head-output": "numeric",
        "functions": "code",
        "quiz": "choice",
        "quiz-transpose": "choice",
    }


def test_the_seed_page_numbers_are_right() -> None:
    """Computed here from the definitions, without the lesson's code or qkv."""
    v = LESSON.variant(None)
    assert (v["d_model"], v["h"], v["n"]) == (512, 8, 10)
    assert (
        (v["d_head"], v["split_shape"], v["params"])
        == (64, [8, 10, 64], 4 * 512**2)
        == (64, [8, 10, 64], 1048576)
    )
    Q, K, V = (np.array(v[name], dtype=float) for name in "QKV")
    q, keys, values = Q[0, 2:], K[:, 2:], V[:, 2:]
    weights = softmax(keys @ q / np.sqrt(2))
    assert np.allclose(v["head_weights"], weights, atol=1e-6)
    assert np.allclose(v["head_output"], weights @ values, atol=1e-6)
    part1 = text_of(page()["part1"])
    for shown in ("d_model = 512 and h = 8 heads", "n = 10 tokens", "Q = " + json.dumps(v["Q"])):
        assert shown in part1


@pytest.mark.parametrize(
    ("exercise", "typed", "expected"),
    [
        ("d-head", "64", "Correct"),
        ("d-head", "512", "That is d_model itself."),
        ("d-head", "8", "That is h, the number of heads."),
        ("d-head", "4096", "You multiplied d_model by h."),
        ("split-shape", "[8, 10, 64]", "Correct"),
        ("split-shape", "(10, 8, 64)", "That is (n, h, d_head)"),
        ("split-shape", "8 10 512", "Each head holds only its own slice"),
        ("params", "1048576", "Correct"),
        ("params", "786432", "you forgot W_O"),
        ("params", "1050624", "That includes biases"),
        ("params", "8388608", "The heads do not bring their own full-size matrices"),
        ("head-weights", three(SEED["head_weights"]), "Correct"),
        ("head-weights", three(SEED["weights_head0"]), "Those are head 0's weights"),
        ("head-weights", three(SEED["weights_sqrt_d_model"]), "You divided by √d_model = 2."),
        ("head-weights", three(SEED["weights_unscaled"]), "You left the scores unscaled"),
        ("head-weights", three(SEED["weights_reshaped"]), "Those numbers come from cutting Q and K"),
        ("head-weights", three(SEED["weights_unscaled"][::-1]), "Not quite"),  # a mistake reversed: not named
        ("head-weights", three(SEED["head_weights"][::-1]), "Close: those are the right numbers"),
        ("head-output", three(SEED["head_output"]), "Correct"),
        ("head-output", three(SEED["head_weights"]), "Those are the weights."),
        ("head-output", three(SEED["output_head0"]), "That is head 0's output."),
        ("head-output", three(SEED["output_unscaled"]), "Your weights come from unscaled scores"),
    ],
)
def test_answers_and_named_mistakes_on_the_seed_page(exercise: str, typed: str, expected: str) -> None:
    feedback = LESSON.check(exercise, typed)
    assert feedback.message.startswith(expected) or expected in feedback.message, feedback.message
    assert feedback.correct == (expected == "Correct")


def test_the_wrong_head_and_the_scale_mistakes_are_what_they_say() -> None:
    namespace = LESSON.hooks.namespace(LESSON.variant(None))
    Q, K = np.array(namespace["Q"], dtype=float), np.array(namespace["K"], dtype=float)
    assert np.allclose(namespace["weights_head0"], softmax(K[:, :2] @ Q[0, :2] / np.sqrt(2)), atol=1e-6)
    assert np.allclose(namespace["weights_sqrt_d_model"], softmax(K[:, 2:] @ Q[0, 2:] / 2), atol=1e-6)
    assert np.allclose(namespace["weights_unscaled"], softmax(K[:, 2:] @ Q[0, 2:]), atol=1e-6)
    # Cut in memory order, "head 1" is the second token's row: [Q[1, 0], Q[1, 1]] and the second rows.
    assert np.allclose(
        namespace["weights_reshaped"], softmax(K[1].reshape(2, 2) @ Q[1, :2] / np.sqrt(2)), atol=1e-6
    )


@pytest.mark.parametrize("seed", range(12))
def test_every_variant_tells_each_named_mistake_apart(seed: int) -> None:
    namespace = LESSON.hooks.namespace(LESSON.variant(seed))
    for exercise in LESSON.exercises.values():
        if exercise.kind != "numeric":
            continue
        answer = json.dumps(namespace[exercise.answer])
        assert LESSON.check(exercise.id, answer, variant_seed=seed).correct
        for name, message in exercise.mistakes.items():
            feedback = LESSON.check(exercise.id, json.dumps(namespace[name]), variant_seed=seed)
            assert (feedback.correct, feedback.message) == (False, message), (seed, exercise.id, name)


@pytest.mark.parametrize("seed", [None, 3, 7])
def test_no_part1_answer_is_given_before_part1(seed: int | None) -> None:
    """The predict-first question (its choices and every feedback) and the idea hold none of Part 1's answers."""
    v = LESSON.variant(seed)
    sections = page(seed)
    earlier = text_of(sections["predict"]) + text_of(sections["idea"])
    earlier += " ".join(choice.feedback for choice in LESSON.exercises["guess"].choices)
    earlier = " ".join(earlier.split())
    for number in (v["d_head"], v["params"]):
        assert not re.search(rf"(?<![\d.]){number}(?![\d.])", earlier), number
    assert "d_model²" not in earlier and "d_model^2" not in earlier
    h, n, d_head = v["split_shape"]
    assert not re.search(rf"{h}\D+{n}\D+{d_head}\b", earlier)


def written(value: float) -> set[str]:
    """A number as the page writes it (qkv's format, 6 decimals) and as it reads to 3 and to 2 decimals."""
    value = abs(value)
    forms = {format_number(round(value, decimals)) for decimals in (6, 3, 2)}
    return {form for form in forms | {f"{value:.3f}", f"{value:.2f}"} if "." in form}


def found(form: str, fragment: str) -> bool:
    """Whether ``form`` stands in ``fragment`` as a number of its own (not part of a longer one)."""
    return re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", fragment) is not None


@pytest.mark.parametrize("seed", [None, *range(20)])
def test_no_part1_answer_is_anywhere_on_the_page(seed: int | None) -> None:
    """No answer of Part 1, in either order, is in the rendered page: not in the chapter reference's
    worked example, the idea's heatmaps (their JSON included), nor Part 1's own text."""
    v = LESSON.variant(seed)
    whole_page = " ".join(section.html for section in LESSON.render(seed))
    for key in ("head_weights", "head_output"):
        for value in v[key]:  # each number on its own, so either order
            assert not float(value).is_integer(), (seed, key, v[key])
            shown = [form for form in written(value) if found(form, whole_page)]
            assert shown == [], (seed, key, v[key])
    for key in ("d_head", "params"):
        assert not re.search(rf"(?<![\d.]){v[key]}(?![\d.])", whole_page), (seed, key, v[key])
    for shape in (v["split_shape"], v["split_shape"][::-1]):
        assert not re.search(r"(?<![\d.])" + r"[\s,×x]+".join(map(str, shape)) + r"(?![\d.])", whole_page)


def worked_example() -> list[float]:
    """The numbers of the chapter reference's worked example, from its widget's q, K and V (numpy only)."""
    config = widget_configs(page()["reference"], "attention-explorer")[0]
    q, K, V = (np.array(config[name], dtype=float) for name in ("q", "K", "V"))
    scores = K @ q / np.sqrt(len(q))
    weights = softmax(scores)
    return [*scores, *weights, *(weights @ V)]


def test_the_seed_page_passes_the_variant_filter_and_the_filter_rejects_the_worked_example() -> None:
    """The seed page's numbers pass the checks every drawn variant passes, and those checks turn away a
    head whose scores differ by 1, as in the worked example: its weights would be the reference's."""
    assert LESSON_PY is not None
    assert LESSON_PY._distinguishable(LESSON_PY.SEED_PAGE)
    like_the_worked_example = {
        **LESSON_PY.SEED_PAGE,
        "Q": [[2, 1, 0, 1], [0, 0, 0, 1]],  # head 1: q = [0, 1], keys [2, 1] and [1, 2]: scores 1 and 2
    }
    data = {**like_the_worked_example, **LESSON_PY._answers(like_the_worked_example)}
    assert np.allclose(sorted(data["head_weights"]), sorted(worked_example()[2:4]), atol=1e-6)
    assert not LESSON_PY._distinguishable(like_the_worked_example)


def test_no_drawn_head_answer_is_a_number_of_the_worked_example() -> None:
    worked = worked_example()
    assert np.allclose(worked, [1 / np.sqrt(2), 0, 0.669762, 0.330238, 1.339523, 0.660477], atol=1e-6)
    for seed in range(200):
        v = LESSON.variant(seed)
        for value in v["head_weights"] + v["head_output"]:
            assert not np.isclose(abs(value), worked, atol=5e-7).any(), (
                seed,
                v["head_weights"],
                v["head_output"],
            )


def test_the_numbers_kept_off_part1_are_every_number_the_page_shows_elsewhere() -> None:
    """lesson.py's shown_elsewhere() follows the page: every number outside Part 1 is one of them."""
    assert LESSON_PY is not None
    known = {round(abs(number), 6) for number in LESSON_PY.shown_elsewhere()}
    sections = page()
    elsewhere = " ".join(fragment for name, fragment in sections.items() if name != "part1")
    numbers = re.findall(r"(?<![\d.])\d+\.\d+(?![\d.]|em)", elsewhere)  # 0.167em: a MathML space
    assert len(numbers) > 100
    assert {number for number in numbers if round(float(number), 6) not in known} == set()


def test_the_variant_renders_its_own_numbers() -> None:
    v = LESSON.variant(7)
    part1 = text_of(page(7)["part1"])
    assert f"d_model = {v['d_model']} and h = {v['h']} heads" in part1
    assert f"n = {v['n']} tokens" in part1
    assert "Q = " + json.dumps(v["Q"]) in part1


def test_the_code_exercise_and_its_starter() -> None:
    code = LESSON.exercises["functions"]
    assert code.starter_code == STARTER
    assert code.functions == ("split_heads", "merge_heads", "multi_head_attention", "mha_param_count")
    assert html.escape(STARTER) in page()["part2"]


def test_the_heatmaps_show_each_heads_own_weights() -> None:
    idea = page()["idea"]
    config = widget_config(idea, "head-heatmaps")
    assert config["tokens"] == ["the", "cat", "sat", "down"] and config["initial"] == 2
    assert [(view["h"], view["causal"]) for view in config["views"]] == [
        (h, causal) for h in (1, 2, 4) for causal in (False, True)
    ]
    X = 2 * np.eye(4)
    Wq = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [-1, 0, -1, 0], [0, -1, 0, -1]], dtype=float)
    Wk = np.array([[1, 0, 0, 1], [0, 1, -1, 0], [-1, 0, 0, -1], [0, -1, 1, 0]], dtype=float)
    for view in config["views"]:
        h, d_head = view["h"], 4 // view["h"]
        for i, shown in enumerate(view["weights"]):
            cols = slice(i * d_head, (i + 1) * d_head)
            S = (X @ Wq[:, cols]) @ (X @ Wk[:, cols]).T / np.sqrt(d_head)
            if view["causal"]:
                S = np.where(np.tri(4, dtype=bool), S, -np.inf)
            assert np.allclose(shown, np.apply_along_axis(softmax, 1, S), atol=1e-6)
        assert view["shapes"][1] == ["Q = X·Wq, split", [h, 4, d_head]]
    two = next(view for view in config["views"] if view["h"] == 2 and not view["causal"])
    # Head 0 attends to the token itself, head 1 to the token before it.
    assert all(row[i] > 0.85 for i, row in enumerate(two["weights"][0]))
    assert all(row[i - 1] > 0.85 for i, row in enumerate(two["weights"][1]))
    # The text under the widget says what the first token does, which has no token before it.
    causal = next(view for view in config["views"] if view["h"] == 2 and view["causal"])
    assert two["weights"][1][0][3] > 0.85 and causal["weights"][1][0] == [1.0, 0.0, 0.0, 0.0]
    assert all(row[i] > 0.85 for i, row in enumerate(causal["weights"][0]))
    assert all(row[i - 1] > 0.85 for i, row in enumerate(causal["weights"][1]) if i > 0)
    prose = " ".join(text_of(idea).split())
    assert (
        "unticked, head 1 sends it round to the last token instead; with the box ticked, it can only look at itself"
        in prose
    )
    fallback = text_of(idea)
    assert "head 0: weights (rows: queries)" in fallback and "head 1: weights (rows: queries)" in fallback
    assert "0.8915" in fallback and "X (4, 4) → Q = X·Wq, split (2, 4, 2)" in fallback


def test_the_reference_functions_on_a_small_example() -> None:
    assert GRADING is not None
    X = np.arange(8).reshape(2, 4)
    assert GRADING.split_heads(X, 2).tolist() == [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]
    assert GRADING.merge_heads(GRADING.split_heads(X, 2)).tolist() == X.tolist()
    with pytest.raises(ValueError, match="h = 3 does not divide d_model = 4"):
        GRADING.split_heads(X, 3)
    assert GRADING.mha_param_count(512) == 1048576


def test_two_mistakes_at_once_are_both_named() -> None:
    """Each pair rule is the first that matches its own result, on every test of multi_head_attention."""
    from qkv.grading.feedback.hints import Outcome, first_hint

    assert GRADING is not None
    pairs = [rule for rule in GRADING.MHA_HINTS if rule.message.startswith("Two mistakes at once.")]
    assert len(pairs) == 19  # 7 mistakes: 21 pairs, less the two scales together and split with merge
    assert GRADING.SCALED_BY_D_MODEL_AND_WO_FORGOTTEN in {rule.message for rule in pairs}
    cases = [case for case in GRADING.SUITES["functions"].cases(5) if case.function == "multi_head_attention"]
    for rule in pairs:
        named = 0
        for case in cases:
            if GRADING.CAUSAL_IGNORED in rule.message and case.args[6:] != (True,):
                continue  # no mask asked for: only the other mistake shows, and its own rule names it
            if "huge scores" in case.name or "one token" in case.name:
                continue  # one key dominates (or is alone in) every row: a scale or axis slip leaves no trace
            got = rule.compute(*case.args)
            outcome = Outcome(case.args, case.expected, case.compare, returned=got)
            assert first_hint(case.hints, outcome) == rule.message, (rule.message, case.name)
            named += 1
        assert named >= 2, rule.message


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("d_model", "h", "n"), [(4, 2, 3), (6, 3, 5), (8, 4, 7), (8, 1, 4), (16, 8, 6)])
def test_multi_head_attention_matches_pytorch(d_model: int, h: int, n: int, causal: bool) -> None:
    torch = pytest.importorskip("torch")
    assert GRADING is not None
    rng = np.random.default_rng(d_model * 100 + h * 10 + n)
    X = rng.normal(size=(n, d_model)).astype(np.float32)
    Wq, Wk, Wv, Wo = (rng.normal(size=(d_model, d_model)).astype(np.float32) for _ in range(4))
    layer = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True)
    with torch.no_grad():
        # PyTorch multiplies by weight.T; our matrices act as X @ W, so they go in transposed.
        layer.in_proj_weight.copy_(torch.from_numpy(np.concatenate([Wq.T, Wk.T, Wv.T])))
        layer.out_proj.weight.copy_(torch.from_numpy(Wo.T))
        x = torch.from_numpy(X)[None]
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n) if causal else None
        expected, _ = layer(x, x, x, need_weights=False, attn_mask=mask, is_causal=causal)
    ours = GRADING.multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=causal)
    np.testing.assert_allclose(ours, expected[0].numpy(), rtol=1e-5, atol=1e-5)
    if causal:  # and the mask matters: without it the result differs
        assert not np.allclose(
            GRADING.multi_head_attention(X, Wq, Wk, Wv, Wo, h), expected[0].numpy(), atol=1e-3
        )


@pytest.mark.parametrize("seed", [1, 7])
def test_dividing_by_root_d_model_is_named_by_the_first_failing_test(grader: Any, seed: int) -> None:
    """The first test of multi_head_attention has d_head ≠ √d_model, so the learner's first message names
    the slip itself, not "one of two mistakes"."""
    from pathlib import Path

    program = Path(__file__).parents[1] / "corpus/functions/wrong/scaled_by_d_model.py"
    entry = CATALOG.code_exercise("L4.5/functions")
    result = grader.grade(program.read_text(), entry.suite, seed=seed)
    first = next(test for test in result.tests if test.status != "pass")
    assert first.function == "multi_head_attention"
    assert first.hint == GRADING.SCALED_BY_D_MODEL
