"""The reference solution of every L4 code exercise after L4.1, run as a learner's file, against PyTorch.

The contract grades each solution with the lesson's hidden tests (whose references are checked against
PyTorch in each lesson's own tests); here the solutions themselves meet PyTorch directly.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from qkv.lessons import load_catalog

torch = pytest.importorskip("torch")
F = torch.nn.functional
CATALOG = load_catalog()
RNG = np.random.default_rng(27)


def solution(lesson_id: str) -> types.ModuleType:
    text = CATALOG.lesson(lesson_id).exercises["functions"].solution
    assert text is not None
    module = types.ModuleType(f"solution_{lesson_id.replace('.', '_')}")
    exec(compile(text, f"{lesson_id} solution", "exec"), module.__dict__)
    return module


def t(array: Any) -> Any:
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float64))


def test_scores() -> None:
    module = solution("L4.2")
    Q, K = RNG.normal(size=(3, 5)), RNG.normal(size=(4, 5))
    np.testing.assert_allclose(module.dot_scores(Q, K), (t(Q) @ t(K).T).numpy())
    np.testing.assert_allclose(module.scaled_scores(Q, K), (t(Q) @ t(K).T / 5**0.5).numpy())


def test_softmax_and_attention() -> None:
    module = solution("L4.3")
    S = RNG.normal(scale=300, size=(2, 3, 4))
    np.testing.assert_allclose(module.softmax(S), torch.softmax(t(S), dim=-1).numpy(), atol=1e-15)
    Q, K, V = RNG.normal(size=(3, 4)), RNG.normal(size=(5, 4)), RNG.normal(size=(5, 2))
    O, A = module.attend(Q, K, V)
    np.testing.assert_allclose(O, F.scaled_dot_product_attention(t(Q), t(K), t(V)).numpy(), atol=1e-12)
    np.testing.assert_allclose(
        A, F.scaled_dot_product_attention(t(Q), t(K), t(np.eye(5))).numpy(), atol=1e-12
    )


def test_masks_and_masked_attention() -> None:
    module = solution("L4.4")
    Q, K, V = RNG.normal(size=(4, 3)), RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=True).numpy()
    np.testing.assert_allclose(
        module.masked_attention(Q, K, V, module.causal_mask(4, 6))[0], expected, atol=1e-12
    )
    mask = module.padding_mask([2, 6, 1, 4], 6)
    expected = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(module.masked_attention(Q, K, V, mask)[0], expected, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_multi_head_attention(causal: bool) -> None:
    module = solution("L4.5")
    n, d, h = 5, 6, 3
    X = RNG.normal(size=(n, d))
    Wq, Wk, Wv, Wo = (RNG.normal(size=(d, d)) for _ in range(4))
    layer = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        layer.in_proj_weight.copy_(t(np.concatenate([Wq.T, Wk.T, Wv.T])))
        layer.out_proj.weight.copy_(t(Wo.T))
        mask = (
            torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64) if causal else None
        )
        expected = layer(t(X)[None], t(X)[None], t(X)[None], attn_mask=mask, need_weights=False)[0][0].numpy()
    np.testing.assert_allclose(
        module.multi_head_attention(X, Wq, Wk, Wv, Wo, h, causal), expected, atol=1e-10
    )
    assert module.mha_param_count(d) == sum(p.numel() for p in layer.parameters())


def test_layer_norm_gelu_and_block() -> None:
    module = solution("L4.6")
    X, g, b = RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=4)
    expected = F.layer_norm(t(X), (4,), t(g), t(b), eps=0.5).numpy()
    np.testing.assert_allclose(module.layer_norm(X, g, b, eps=0.5), expected, atol=1e-12)
    np.testing.assert_allclose(module.gelu(X), F.gelu(t(X), approximate="tanh").numpy(), atol=1e-12)
    grading = CATALOG.lesson("L4.6").exercises["functions"].suite
    assert grading is not None
    for case in grading.cases(27):  # the block itself: the same inputs as the hidden tests
        if case.function == "transformer_block":
            # float32 tests: the grading's reference keeps float32, the lesson's solution works in float64
            tight = np.asarray(case.expected).dtype == np.float64
            np.testing.assert_allclose(
                module.transformer_block(*case.args),
                case.expected,
                rtol=1e-9 if tight else 1e-5,
                atol=1e-9 if tight else 1e-5,
            )
