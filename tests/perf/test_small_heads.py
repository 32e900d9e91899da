"""Small heads without a mask take a fast path (``qkv.attention._one_small_head``): same results, same
errors, and it steps aside for every call it does not recognise as the usual one.
"""

from __future__ import annotations

import importlib
import math
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qkv._blocked as blocked
from qkv import attention

core = importlib.import_module("qkv.attention")  # the module; qkv.attention is the function

rng = np.random.default_rng(0)
Q32, K32, V32 = (rng.standard_normal((n, 8)).astype(np.float32) for n in (5, 7, 7))


def general(*args: Any, **kwargs: Any) -> np.ndarray:
    """``attention`` with the fast path stepping aside: the checks and layers every other call takes."""
    with mock.patch.object(core, "_one_small_head", return_value=None):
        result: np.ndarray = attention(*args, **kwargs)
    return result


@st.composite
def small_heads(draw: st.DrawFn) -> dict[str, Any]:
    n_q, n_k = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    d_k, d_v = draw(st.integers(1, 70)), draw(st.integers(1, 70))  # d_v on both sides of n_k
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    Q, K, V = (seed.standard_normal(shape).astype(dtype) for shape in ((n_q, d_k), (n_k, d_k), (n_k, d_v)))
    Q *= dtype(draw(st.sampled_from([1.0, 8.0, 40.0])))  # 40: float32 scores past exp's range
    return {
        "Q": Q,
        "K": K,
        "V": V,
        "causal": draw(st.sampled_from([False, True, "top-left", "bottom-right"])),
        "scale": draw(st.sampled_from([None, 0.3, 2.0])),
    }


@settings(max_examples=300, deadline=None)
@given(problem=small_heads())
def test_the_fast_path_gives_the_general_paths_result(problem: dict[str, Any]) -> None:
    got = attention(**problem)
    want = general(**problem)
    plain, _ = attention(**problem, return_weights=True)
    assert got.dtype == want.dtype == problem["Q"].dtype
    tolerance = (1e-5 if got.dtype == np.float32 else 1e-12) * float(np.abs(problem["V"]).max())
    scale = problem["scale"] or 1 / math.sqrt(problem["Q"].shape[1])
    if got.dtype == np.float32 and np.abs(problem["Q"] @ problem["K"].T).max() * scale > 100:
        tolerance *= 10  # float32 scores of a few hundred round by ~1e-5 (in nats or in bits alike)
    for reference in (want, plain):  # bottom-right with n_q > n_k: dead rows, zeros on every path
        np.testing.assert_allclose(got, reference, rtol=0, atol=tolerance)


def test_the_usual_call_is_taken_by_the_fast_path() -> None:
    tile = blocked.one_tile_attention
    with mock.patch.object(core, "one_tile_attention", wraps=tile) as fast:
        O = attention(Q32, K32, V32, causal=True)
    fast.assert_called_once()
    np.testing.assert_allclose(O, general(Q32, K32, V32, causal=True), rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("case", "args"),
    [
        ("lists", (Q32.tolist(), K32, V32)),
        ("mixed dtypes", (Q32, K32.astype(np.float64), V32)),
        ("float16", (Q32.astype(np.float16), K32.astype(np.float16), V32.astype(np.float16))),
        ("ints", (np.ones((5, 8), int), np.ones((7, 8), int), np.ones((7, 8), int))),
        ("a batch", (Q32[None], K32[None], V32[None])),
        ("d_k disagrees", (Q32, K32[:, :4], V32)),
        ("n_k disagrees", (Q32, K32, V32[:6])),
        ("no queries", (Q32[:0], K32, V32)),
        ("no keys", (Q32, K32[:0], V32[:0])),
        ("d_k of 0", (Q32[:, :0], K32[:, :0], V32)),
        ("more keys than a tile", (Q32, *(np.ones((blocked.BLOCK_K + 1, 8), np.float32),) * 2)),
    ],
)
def test_the_fast_path_steps_aside_for_other_inputs(case: str, args: tuple[Any, ...]) -> None:
    assert core._one_small_head(*args, False, None) is None, case


@pytest.mark.parametrize(
    ("causal", "scale"),
    [
        (1, None),
        ("causal", None),
        (np.array(True), None),
        (False, 2),
        (False, np.float32(0.5)),
        (False, "2"),
        (False, math.nan),
        (False, True),
    ],
)
def test_the_fast_path_steps_aside_for_other_options(causal: object, scale: object) -> None:
    assert core._one_small_head(Q32, K32, V32, causal, scale) is None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"scale": "2"}, TypeError, "scale must be a real number, not the str '2'."),
        ({"scale": math.inf}, ValueError, "scale must be a finite number, but it is inf."),
        (
            {"causal": "causal"},
            ValueError,
            "causal must be False, True, 'top-left' or 'bottom-right', not 'causal'.",
        ),
        ({"all_masked": "ignore"}, ValueError, "all_masked must be 'zero', 'nan' or 'raise', not 'ignore'."),
    ],
)
def test_bad_options_on_small_float32_heads_get_the_general_sentences(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        attention(Q32, K32, V32, **kwargs)
    assert str(raised.value) == message


def test_a_valid_scale_of_another_type_is_computed_the_general_way() -> None:
    for scale in (2, np.float32(0.5)):
        np.testing.assert_allclose(
            attention(Q32, K32, V32, scale=scale),
            attention(Q32, K32, V32, scale=float(scale)),
            rtol=0,
            atol=1e-6,
        )
