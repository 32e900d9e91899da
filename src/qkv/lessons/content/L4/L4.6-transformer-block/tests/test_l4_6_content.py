"""Lesson L4.6 as shipped: every number on its page, its named mistakes, its widget, and its PyTorch oracle."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from qkv.lessons import load_catalog
from qkv.lessons.pyfiles import import_lesson_file
from tests.lesson_contract import grading_module
from tests.lesson_pages import text_of, widget_config

CATALOG = load_catalog()
LESSON = CATALOG.lesson("L4.6")
GRADING = grading_module(LESSON)


def page(seed: int | None = None) -> dict[str, str]:
    return {section.id: section.html for section in LESSON.render(seed)}


def test_identity_and_sections() -> None:
    count = len(LESSON.chapter.lesson_ids)
    assert (LESSON.title, LESSON.place) == (
        "Attention inside a transformer block",
        f"L4.6 · lesson 6 of {count}",
    )
    assert LESSON.goal.startswith("Put attention where it lives: a pre-norm residual block")
    assert [s.id for s in LESSON.render()] == ["predict", "idea", "part1", "part2", "quiz", "reference"]
    assert [(p.id, p.counts_toward_done) for p in LESSON.parts] == [
        ("predict", False),
        ("part1", True),
        ("part2", True),
        ("quiz", True),
    ]
    assert list(LESSON.exercises) == [
        "guess",
        "hidden-shape",
        "block-shape",
        "block-params",
        "row-mean",
        "row-var",
        "row-normed",
        "functions",
        "quiz",
        "quiz-norm",
    ]
    assert LESSON.exercises["functions"].functions == ("layer_norm", "gelu", "transformer_block")


def test_the_seed_page_numbers_are_right() -> None:
    """Computed here from the definitions, without the lesson's code."""
    v = LESSON.variant(None)
    d, n = 512, 10
    assert (v["d_model"], v["n"]) == (d, n)
    assert v["hidden_shape"] == [10, 2048] and v["block_shape"] == [10, 512]
    assert v["block_params"] == 4 * d * d + 2 * d * 4 * d + 4 * d + d + 2 * 2 * d == 3150336
    row = [1, 2, 3, 6]
    assert (v["row_mean"], v["row_var"]) == (3.0, 3.5)  # deviations -2, -1, 0, 3: (4 + 1 + 0 + 9) / 4
    expected = [(x - 3) / math.sqrt(3.5 + 1e-5) for x in row]
    assert np.allclose(v["row_normed"], expected, atol=1e-6)
    assert np.allclose(v["row_normed"], [-1.069, -0.5345, 0.0, 1.6036], atol=1e-3)
    part1 = text_of(page()["part1"])
    assert (
        "d_model = 512" in part1 and "n = 10 tokens" in part1 and "X = [[1, 2, 3, 6], [3, 2, 1, 2]]" in part1
    )


@pytest.mark.parametrize(
    ("exercise", "typed", "expected"),
    [
        ("hidden-shape", "[10, 2048]", "Correct"),
        ("hidden-shape", "[10, 512]", "That is the shape of the block's input and output."),
        ("hidden-shape", "[2048, 10]", "One row per token"),
        ("hidden-shape", "[512, 2048]", "That is the shape of W1, the weight matrix."),
        ("block-shape", "[10, 512]", "Correct"),
        ("block-shape", "[10, 2048]", "That is the MLP's hidden layer"),
        ("block-params", "3150336", "Correct"),
        ("block-params", "3148288", "You left out the two layer norms"),
        ("block-params", "3147776", "You left out the MLP's biases"),
        ("block-params", "2888192", "You left out W_O"),
        ("block-params", "3149312", "There are two layer norms"),
        ("row-mean", "3", "Correct"),
        ("row-mean", "12", "That is the sum of the row."),  # 1 + 2 + 3 + 6
        ("row-var", "3.5", "Correct"),
        ("row-var", "14", "That is the sum of the squared deviations."),  # 4 + 1 + 0 + 9
        ("row-var", "4.6667", "You divided by d − 1 = 3"),
        ("row-var", "1.8708", "That is the standard deviation"),
        ("row-normed", "[-1.069, -0.535, 0, 1.604]", "Correct"),
        (
            "row-normed",
            "[-0.926, -0.463, 0, 1.389]",
            "You divided by the square root of the variance with d − 1.",
        ),
        ("row-normed", "[-1, 0, 1, 1]", "You normalised over the tokens"),
        ("row-normed", "[-2, -1, 0, 3]", "You subtracted μ but did not divide"),
        (
            "row-normed",
            "[-0.571, -0.286, 0, 0.857]",
            "You divided by the variance σ² itself.",
        ),  # [-2, -1, 0, 3] / 3.5
    ],
)
def test_answers_and_named_mistakes_on_the_seed_page(exercise: str, typed: str, expected: str) -> None:
    feedback = LESSON.check(exercise, typed)
    assert expected in feedback.message, feedback.message
    assert feedback.correct == (expected == "Correct")


@pytest.mark.parametrize("seed", range(12))
def test_every_variant_tells_each_named_mistake_apart(seed: int) -> None:
    namespace = LESSON.hooks.namespace(LESSON.variant(seed))
    for exercise in LESSON.exercises.values():
        if exercise.kind != "numeric":
            continue
        assert LESSON.check(exercise.id, json.dumps(namespace[exercise.answer]), variant_seed=seed).correct
        for name, message in exercise.mistakes.items():
            feedback = LESSON.check(exercise.id, json.dumps(namespace[name]), variant_seed=seed)
            assert (feedback.correct, feedback.message) == (False, message), (seed, exercise.id, name)


def test_a_variant_renders_its_own_numbers() -> None:
    v = LESSON.variant(5)
    part1 = text_of(page(5)["part1"])
    assert f"d_model = {v['d_model']}" in part1 and f"n = {v['n']} tokens" in part1
    assert "X = " + json.dumps(v["X"]) in part1


def test_the_block_widget_shows_what_the_residual_and_the_norms_change() -> None:
    assert GRADING is not None
    residual_block = load_catalog().widgets.get("residual-block")
    assert residual_block is not None
    block_params = import_lesson_file(residual_block.source)[0].block_params  # type: ignore[union-attr]

    idea = page()["idea"]
    config = widget_config(idea, "residual-block")
    X = np.array([[3, 0, 2, -1], [0, 2, 1, 0], [2, -1, 0, 3], [1, 2, -2, 2]], dtype=float)
    assert (config["n"], config["d"], config["heads"]) == (4, 4, 2)
    assert len(config["views"]) == 8
    params = block_params(4, 1)
    for view in config["views"]:
        if view["residual"] and view["norm"]:  # the full block is the lesson's reference block
            out = GRADING.transformer_block(X * view["scale"], params, 2)
            assert np.allclose(view["output"], out, atol=1e-4)
        assert np.allclose(view["input_norms"], np.linalg.norm(X * view["scale"], axis=1), atol=1e-4)
        out = np.array(view["output"])
        assert np.allclose(view["row_norms"], np.linalg.norm(out, axis=1), atol=2e-4)
    by = {(v["scale"], v["residual"], v["norm"]): v for v in config["views"]}
    # With the residual, every output row still points like its input row; without it, not.
    assert min(by[1, True, True]["cosines"]) > 0.9 and max(by[1, False, True]["cosines"]) < 0.8
    # With the norms, a ten times larger X gets the same update; without them, a much larger one.
    assert np.allclose(by[1, True, True]["update_norms"], by[10, True, True]["update_norms"], atol=0.02)
    assert min(np.array(by[10, True, False]["update_norms"]) / by[1, True, False]["update_norms"]) > 5
    fallback = text_of(idea)
    assert "X (4, 4) → LN₁ → attention (4, 4) → + → LN₂ → MLP (4, 16)" in fallback


def test_the_reference_functions_on_small_examples() -> None:
    assert GRADING is not None
    assert np.allclose(GRADING.layer_norm([[1.0, 3.0]], [1, 1], [0, 0], eps=0.0), [[-1, 1]])
    assert np.allclose(GRADING.layer_norm([[1.0, 3.0]], [2, 1], [1, 0], eps=0.0), [[-1, 1]])
    assert round(float(GRADING.gelu(1.0)), 6) == 0.841192  # the exact GELU gives 0.841345


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("n", "d", "h"), [(4, 4, 2), (5, 8, 2), (6, 16, 4), (3, 6, 3), (1, 4, 1)])
def test_transformer_block_matches_pytorch(n: int, d: int, h: int, causal: bool) -> None:
    torch = pytest.importorskip("torch")
    assert GRADING is not None
    rng = np.random.default_rng(n * 100 + d * 10 + h)
    X = rng.normal(size=(n, d)).astype(np.float32)
    P = {key: value.astype(np.float32) for key, value in GRADING._params(rng, d, 4 * d).items()}
    layer = torch.nn.TransformerEncoderLayer(
        d,
        h,
        dim_feedforward=4 * d,
        dropout=0.0,
        activation=lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        batch_first=True,
        norm_first=True,
    ).eval()

    def t(array: np.ndarray) -> Any:
        return torch.from_numpy(np.ascontiguousarray(array))

    with torch.no_grad():
        layer.norm1.weight.copy_(t(P["ln1_g"]))
        layer.norm1.bias.copy_(t(P["ln1_b"]))
        layer.norm2.weight.copy_(t(P["ln2_g"]))
        layer.norm2.bias.copy_(t(P["ln2_b"]))
        # PyTorch multiplies by weight.T; the lesson's matrices act as X @ W, so they go in transposed.
        layer.self_attn.in_proj_weight.copy_(t(np.concatenate([P["Wq"].T, P["Wk"].T, P["Wv"].T])))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(t(P["Wo"].T))
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(t(P["W1"].T))
        layer.linear1.bias.copy_(t(P["b1"]))
        layer.linear2.weight.copy_(t(P["W2"].T))
        layer.linear2.bias.copy_(t(P["b2"]))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(n) if causal else None
        expected = layer(t(X)[None], src_mask=mask, is_causal=causal)[0].numpy()
    ours = GRADING.transformer_block(X, P, h, causal=causal)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    if causal and n > 1:  # the mask matters
        assert not np.allclose(GRADING.transformer_block(X, P, h, causal=False), expected, atol=1e-3)


def test_the_starter_has_the_three_stubs_and_gives_no_earlier_answer_away() -> None:
    starter = LESSON.exercises["functions"].starter_code or ""
    for signature in (
        "def layer_norm(X, gamma, beta, eps=1e-5):\n    pass",
        "def gelu(x):\n    pass",
        "def transformer_block(X, params, h, causal=True):\n    pass",
        "def multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal=False):\n",
    ):
        assert signature in starter
    assert "np.exp" not in starter and "transpose" not in starter  # the previous lesson's answer is not here
