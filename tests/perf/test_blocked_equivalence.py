"""The blocked (streaming) path gives the plain path's result: same values, same dtypes, same errors.

``attention(..., return_weights=True)`` always takes the plain path, so it is the reference; without
weights every call takes the blocked path. Tiny blocks make Hypothesis's small shapes cross many block
edges (and they are rarely multiples of the block size).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qkv._blocked as blocked
from qkv import attention

core = importlib.import_module("qkv.attention")  # the module; qkv.attention is the function


@pytest.fixture(autouse=True, params=["exp", "exp2"])
def exponential(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs with scores in nats (exp) and in bits (exp2), whichever this machine prefers."""
    with mock.patch.object(blocked, "exp2_is_faster", lambda dtype: request.param == "exp2"):
        yield request.param


# Relative to the largest |V|: the output is a weighted average of V's rows, so that is its scale.
TOLERANCE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


@contextmanager
def forced_blocks(
    block_q: int, block_k: int, threads: int, heads_per_task: int | None = None
) -> Iterator[None]:
    """Send every call through the blocked path with these block sizes and this many threads (and, if
    given, runs of this many heads of the last batch axis per task)."""
    with (
        mock.patch.object(blocked, "MIN_THREADED_SCORES", 0),
        mock.patch.object(blocked, "BLOCK_Q", block_q),
        mock.patch.object(blocked, "BLOCK_K", block_k),
        mock.patch.object(blocked, "worker_count", lambda: threads),
        mock.patch.object(
            blocked,
            "_heads_per_task",
            blocked._heads_per_task if heads_per_task is None else lambda *args: heads_per_task,
        ),
    ):
        yield


def plain(*args: Any, **kwargs: Any) -> np.ndarray:
    O, _ = attention(*args, return_weights=True, **kwargs)
    return O


def assert_same_result(got: np.ndarray, want: np.ndarray, V: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    compute = np.dtype(np.float32) if got.dtype.itemsize <= 4 else np.dtype(np.float64)
    tolerance = TOLERANCE[compute] * max(1.0, float(np.abs(V).max()))
    if got.dtype == np.float16:
        tolerance = 1e-3 * max(1.0, float(np.abs(V).max()))  # float16 itself rounds at ~5e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=0, atol=tolerance)


@st.composite
def problems(draw: st.DrawFn) -> dict[str, Any]:
    n_q, n_k = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    d_k, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 6))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    # Batch shapes that broadcast: Q, K and V may each have the batch, a size-1 stand-in, or none.
    batch = draw(st.sampled_from([(), (2,), (3, 2)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    def part(rows: int, cols: int) -> np.ndarray:
        lead = draw(st.sampled_from([batch, (1,) * len(batch), ()]))
        return rng.standard_normal((*lead, rows, cols)).astype(dtype)

    problem: dict[str, Any] = {"Q": part(n_q, d_k), "K": part(n_k, d_k), "V": part(n_k, d_v)}
    if dtype == np.float64:
        # Large scores move the blocked path's reference scores (float32 would round them too coarsely
        # for the 1e-6 comparison: an error of 1e-7 relative in a score of 300 is 3e-5 in a weight).
        problem["Q"] = problem["Q"] * draw(st.sampled_from([1.0, 20.0, 300.0]))
        # Huge values leave no headroom above the reference: the textbook online softmax runs.
        problem["V"] = problem["V"] * draw(st.sampled_from([1.0, 1e306]))
    kinds = ["none", "bool", "float", "key padding"] + (["far below"] if dtype == np.float64 else [])
    mask_kind = draw(st.sampled_from(kinds))
    if mask_kind == "bool":
        problem["mask"] = rng.random((*batch, n_q, n_k)) < draw(st.sampled_from([0.05, 0.5, 0.95]))
    elif mask_kind == "float":
        bias = rng.standard_normal((n_q, n_k)).astype(dtype)
        bias[rng.random((n_q, n_k)) < 0.3] = -np.inf
        problem["mask"] = bias
    elif mask_kind == "far below":  # every score far below 0: the reference must move down first
        # (float64 only: float32 rounds a score near -200 by ~1e-5, beyond the 1e-6 comparison)
        problem["mask"] = (rng.standard_normal((n_q, n_k)) * 5 - 200).astype(dtype)
    elif mask_kind == "key padding":  # (n_k,): whole key columns, so whole tiles, are masked
        problem["mask"] = np.arange(n_k) < draw(st.integers(0, n_k))
    problem["causal"] = draw(st.sampled_from([False, True, "top-left", "bottom-right"]))
    problem["all_masked"] = draw(st.sampled_from(["zero", "nan", "raise"]))
    return problem


@settings(max_examples=300, deadline=None)
@given(
    problem=problems(),
    block_q=st.integers(1, 9),
    block_k=st.integers(1, 9),
    threads=st.sampled_from([1, 2]),
    heads_per_task=st.sampled_from([1, 2, 3]),  # runs that split the last batch axis evenly or not
)
def test_blocked_equals_plain(
    problem: dict[str, Any], block_q: int, block_k: int, threads: int, heads_per_task: int
) -> None:
    forced = forced_blocks(block_q, block_k, threads, heads_per_task)
    try:
        want = plain(**problem)
    except ValueError as error:  # all_masked="raise" with a dead row: the same sentence must come back
        with forced, pytest.raises(ValueError) as raised:
            attention(**problem)
        assert str(raised.value) == str(error)
        return
    with forced:
        got = attention(**problem)
    assert_same_result(got, want, problem["V"])


@pytest.mark.parametrize("policy", ["zero", "nan"])
@pytest.mark.parametrize("align", ["top-left", "bottom-right"])
def test_queries_with_no_visible_key_follow_the_policy(policy: str, align: str) -> None:
    # n_q > n_k with bottom-right alignment leaves the first queries with no key at all, and the
    # mask below removes every key of query 5; key block 1 (keys 4..7) is masked for every query.
    rng = np.random.default_rng(1)
    Q, K, V = rng.standard_normal((12, 3)), rng.standard_normal((10, 3)), rng.standard_normal((10, 2))
    mask = np.ones((12, 10), bool)
    mask[:, 4:8] = False
    mask[5] = False
    want = plain(Q, K, V, mask=mask, causal=align, all_masked=policy)
    with forced_blocks(block_q=4, block_k=4, threads=2):
        got = attention(Q, K, V, mask=mask, causal=align, all_masked=policy)
    assert_same_result(got, want, V)
    dead = np.isnan(want).all(axis=1) if policy == "nan" else (want == 0).all(axis=1)
    assert dead[5]
    assert dead[:2].all() == (align == "bottom-right")


def test_raise_policy_names_the_same_rows_in_a_batch() -> None:
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    mask = np.ones((2, 6, 5), bool)
    mask[1, 3] = False
    with pytest.raises(ValueError) as plain_error:
        plain(Q, K, V, mask=mask, all_masked="raise")
    with forced_blocks(block_q=2, block_k=2, threads=2), pytest.raises(ValueError) as blocked_error:
        attention(Q, K, V, mask=mask, all_masked="raise")
    assert str(blocked_error.value) == str(plain_error.value)
    assert str(blocked_error.value) == (
        "Every key is masked for query row (1, 3); such a query has no defined attention "
        "(pass all_masked='zero' or 'nan' to allow it)."
    )


@pytest.mark.parametrize(
    ("dtype", "result"),
    [(np.float16, np.float16), (np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64)],
)
def test_dtype_rules_match_the_plain_path(dtype: type, result: type) -> None:
    rng = np.random.default_rng(3)
    Q, K, V = ((rng.standard_normal((9, 4)) * 3).astype(dtype) for _ in range(3))
    want = plain(Q, K, V, causal=True)
    with forced_blocks(block_q=4, block_k=3, threads=2):
        got = attention(Q, K, V, causal=True)
    assert got.dtype == result
    assert_same_result(got, want, V)


def test_single_query_and_single_key() -> None:
    Q, K, V = np.array([[0.5, -1.0]]), np.array([[2.0, 1.0]]), np.array([[3.0, 4.0, 5.0]])
    with forced_blocks(block_q=1, block_k=1, threads=2):
        np.testing.assert_array_equal(attention(Q, K, V), [[3.0, 4.0, 5.0]])
        np.testing.assert_array_equal(attention(Q, K, V, causal="bottom-right"), [[3.0, 4.0, 5.0]])


def test_calls_without_weights_take_the_blocked_path_and_return_weights_takes_the_plain_one() -> None:
    rng = np.random.default_rng(4)
    n_q, n_k = 300, blocked.BLOCK_K + 1  # more keys than one tile holds: the general blocked path
    assert not blocked.fits_one_tile(n_q, n_k)
    Q, K, V = (rng.standard_normal((n, 16)).astype(np.float32) for n in (n_q, n_k, n_k))
    with mock.patch.object(core, "blocked_attention", wraps=blocked.blocked_attention) as spy:
        O = attention(Q, K, V, causal="bottom-right")
        assert spy.call_count == 1
        O_plain, A = attention(Q, K, V, causal="bottom-right", return_weights=True)
        assert spy.call_count == 1
    assert A.shape == (n_q, n_k)
    assert_same_result(O, O_plain, V)


@pytest.mark.parametrize(
    ("query_scale", "mask_kind", "follows"),
    [
        (1.0, None, False),  # typical scores: every reference stays at 0, no tile needs its top scores
        (1.0, "bool", False),  # a mask only removes weights; every query keeps some
        (1.0, "float", False),  # so does a bias of 0 and -inf
        (1.0, "far below", True),  # every weight would underflow: the references must move down
        (1.0, "dead row", True),  # a query with no key at all sums to 0 and is summed again
        (40.0, None, True),  # scores beyond exp's float32 range: the references must move up
    ],
)
def test_references_follow_the_scores_only_when_the_weights_leave_the_float_range(
    query_scale: float, mask_kind: str | None, follows: bool
) -> None:
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((n, 16)).astype(np.float32) for n in (40, 30, 30))
    Q *= np.float32(query_scale)
    keep = rng.random((40, 30)) < 0.7
    keep[:, 0] = True  # with causal=True, key 0 is every query's one key in common
    mask = {
        None: None,
        "bool": keep,
        "float": np.where(keep, 0.0, -np.inf).astype(np.float32),
        "far below": np.where(keep, -150.0, -np.inf).astype(np.float32),
        "dead row": keep & (np.arange(40) != 7)[:, None],
    }[mask_kind]
    want = plain(Q, K, V, mask=mask, causal=True)
    with (
        forced_blocks(block_q=8, block_k=8, threads=1),
        mock.patch.object(blocked, "_follow", wraps=blocked._follow) as spy,
    ):
        got = attention(Q, K, V, mask=mask, causal=True)
    assert spy.called == follows
    # Scores of about ±150 round by ~1e-5 in float32 on either path.
    tolerance = 1e-6 if query_scale == 1.0 and mask_kind != "far below" else 1e-4
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance * float(np.abs(V).max()))


@pytest.mark.parametrize("all_masked", ["zero", "nan"])
def test_heads_taken_together_are_each_summed_exactly_when_one_of_them_leaves_the_float_range(
    all_masked: str,
) -> None:
    """Four small heads make one task. Head 1's scores overflow exp and head 3 has a query with no key:
    the task is summed again, and each head gets its own answer and its own dead query."""
    rng = np.random.default_rng(8)
    Q, K, V = (rng.standard_normal((4, 20, 8)).astype(np.float32) for _ in range(3))
    Q[1] *= np.float32(40.0)
    mask = np.ones((4, 20, 20), bool)
    mask[3, 5] = False
    want = plain(Q, K, V, mask=mask, all_masked=all_masked)
    tasks: list[tuple[Any, ...]] = []
    original = blocked._run_query_block
    with (
        mock.patch.object(
            blocked, "_run_query_block", lambda p, *task: tasks.append(task) or original(p, *task)
        ),
        mock.patch.object(blocked, "_follow", wraps=blocked._follow) as spy,
    ):
        got = attention(Q, K, V, mask=mask, all_masked=all_masked)
    assert tasks == [((slice(0, 4),), 0, 20)]
    assert spy.called
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[3, 5]).all() == (all_masked == "nan")
    # Scores of about ±1000 round by ~1e-4 in float32 on either path.
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * float(np.abs(V).max()))


def test_weights_whose_sum_alone_leaves_the_float_range_are_summed_again() -> None:
    """Every weight fits in float32 (e^86) but 30 of them do not, while V is small enough that the
    weighted values still do: the sums, not the values, show the overflow."""
    Q = np.full((8, 16), np.sqrt(344 / 16), np.float32)  # every score 344 · 16^-0.5 = 86 nats
    V = np.random.default_rng(6).uniform(1e-3, 2e-3, (30, 16)).astype(np.float32)
    with (
        forced_blocks(block_q=8, block_k=8, threads=1),
        mock.patch.object(blocked, "_follow", wraps=blocked._follow) as spy,
    ):
        got = attention(Q, np.full((30, 16), Q[0, 0]), V)
    assert spy.called
    np.testing.assert_allclose(got, np.broadcast_to(V.mean(axis=0), got.shape), rtol=1e-5)


@settings(max_examples=300, deadline=None)
@given(problem=problems())
def test_one_tile_equals_plain(problem: dict[str, Any]) -> None:
    try:
        want = plain(**problem)
    except ValueError as error:
        with pytest.raises(ValueError) as raised:
            attention(**problem)
        assert str(raised.value) == str(error)
        return
    got = attention(**problem)  # heads of up to 40 × 40 scores: one tile, with the machine's block sizes
    assert_same_result(got, want, problem["V"])


@pytest.mark.parametrize("overflow", [False, True])
def test_small_heads_with_batch_dimensions_are_one_tile_together(overflow: bool) -> None:
    """Three heads of 5 × 6 scores, the batch from V and the mask alone: one tile of shape (3, 5, 6),
    unless a head's scores pass exp's range, which hands all three to the general path."""
    rng = np.random.default_rng(9)
    Q, K, V = rng.standard_normal((5, 8)), rng.standard_normal((6, 8)), rng.standard_normal((3, 6, 4))
    Q, K, V = (x.astype(np.float32) for x in (Q, K, V))
    if overflow:
        Q *= np.float32(200.0)
    mask = rng.random((3, 5, 6)) < 0.8
    mask[..., 0] = True  # every query keeps a key
    want = plain(Q, K, V, mask=mask)
    tile = blocked.one_tile_attention
    with (
        mock.patch.object(blocked, "one_tile_attention", wraps=tile) as one_tile,
        mock.patch.object(blocked, "_query_blocks", wraps=blocked._query_blocks) as general,
    ):
        got = attention(Q, K, V, mask=mask)
    assert (one_tile.call_count, general.call_count) == (1, int(overflow))
    assert got.shape == (3, 5, 4)
    np.testing.assert_allclose(got, want, rtol=0, atol=(1e-4 if overflow else 1e-6) * float(np.abs(V).max()))


@pytest.mark.parametrize(
    ("case", "used"),
    [
        ("typical", True),  # small scores, no mask: one tile, nothing more
        ("causal", True),  # the mask is applied to the one tile
        ("future overflow", False),  # only future scores pass exp's range: the top counts them
        ("overflow", False),  # scores past exp's float32 range: summed again by the general path
        ("far below", False),  # every weight underflows with the reference at 0
        ("dead row", False),  # a query with no key: the general path reports it to the policy
    ],
)
def test_one_tile_hands_what_it_cannot_sum_exactly_to_the_general_path(case: str, used: bool) -> None:
    rng = np.random.default_rng(6)
    Q, K, V = (rng.standard_normal((n, 8)).astype(np.float32) for n in (20, 24, 24))
    mask = None
    if case == "overflow":
        Q *= np.float32(60.0)
    elif case == "far below":
        mask = np.full((20, 24), -150.0, np.float32)
    elif case == "dead row":
        mask = np.ones((20, 24), bool)
        mask[3] = False
    elif case == "future overflow":  # queries 0-9 would score ~1000 on keys 16-23, all in their future
        Q[:10], K[16:], Q[10:, 0] = 0, 0, 0
        Q[:10, 0], K[16:, 0] = 1, 3000
    causal = case in ("causal", "future overflow")
    want = plain(Q, K, V, mask=mask, causal=causal)
    tile = blocked.one_tile_attention
    with (
        mock.patch.object(blocked, "one_tile_attention", wraps=tile) as in_blocked,
        mock.patch.object(core, "one_tile_attention", wraps=tile) as in_fast_path,
        mock.patch.object(blocked, "_query_blocks", wraps=blocked._query_blocks) as general,
    ):
        got = attention(Q, K, V, mask=mask, causal=causal)
    # Without a mask the fast path tries the tile; a head it hands on is tried once more by
    # blocked_attention (the general way, which masked heads take from the start).
    tries = {
        "typical": (1, 0),
        "causal": (1, 0),
        "future overflow": (1, 1),
        "overflow": (1, 1),
        "far below": (0, 1),
        "dead row": (0, 1),
    }
    assert (in_fast_path.call_count, in_blocked.call_count) == tries[case]
    assert general.called != used
    tolerance = (
        1e-6 if case in ("typical", "causal", "future overflow", "dead row") else 1e-4
    )  # scores of ±150 round by ~1e-5
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance * float(np.abs(V).max()))


@pytest.mark.parametrize("causal", [False, True])
def test_scores_in_bits_take_exp2_on_every_tile_and_give_exps_result(exponential: str, causal: bool) -> None:
    rng = np.random.default_rng(8)
    Q, K, V = (rng.standard_normal((n, 16)).astype(np.float32) for n in (50, 50, 50))
    want = plain(Q, K, V, causal=causal)
    with (
        forced_blocks(block_q=16, block_k=16, threads=1),
        mock.patch.object(blocked, "_tile_exp2", wraps=blocked._tile_exp2) as in_bits,
        mock.patch.object(blocked, "_tile_exp", wraps=blocked._tile_exp) as in_nats,
    ):
        got = attention(Q, K, V, causal=causal)
    assert (in_bits.called, in_nats.called) == (exponential == "exp2", exponential == "exp")
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * float(np.abs(V).max()))


def test_an_additive_bias_keeps_scores_in_nats(exponential: str) -> None:
    rng = np.random.default_rng(9)
    Q, K, V = (rng.standard_normal((30, 8)) for _ in range(3))
    bias = rng.standard_normal((30, 30))
    with (
        forced_blocks(block_q=8, block_k=8, threads=1),
        mock.patch.object(blocked, "_tile_exp2", wraps=blocked._tile_exp2) as in_bits,
    ):
        got = attention(Q, K, V, mask=bias)
    assert not in_bits.called
    np.testing.assert_allclose(got, plain(Q, K, V, mask=bias), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("n_k", "causal", "height"),
    [
        (1024, False, None),
        (1024, True, blocked.CAUSAL_BLOCK_Q),
        (blocked.CAUSAL_LONG_KEYS - 1, True, blocked.CAUSAL_BLOCK_Q),
        (blocked.CAUSAL_LONG_KEYS, True, blocked.CAUSAL_BLOCK_Q_LONG),
    ],
)
def test_causal_calls_take_shorter_query_blocks_and_the_same_result(
    dtype: type, n_k: int, causal: bool, height: int | None
) -> None:
    rng = np.random.default_rng(n_k)
    Q = rng.standard_normal((1000, 8)).astype(dtype)
    K, V = (rng.standard_normal((n_k, 8)).astype(dtype) for _ in range(2))
    align = "bottom-right" if causal else False  # every query sees keys up to its own, past the first 1000
    with mock.patch.object(blocked, "_run_query_block", wraps=blocked._run_query_block) as blocks:
        got = attention(Q, K, V, causal=align)
    heights = {call.args[3] - call.args[2] for call in blocks.call_args_list}
    if causal:
        assert max(heights) == height
    else:  # a tile's height, or half the queries each where two workers share them
        assert blocked.CAUSAL_BLOCK_Q_LONG < max(heights) <= blocked.BLOCK_Q
    assert_same_result(got, plain(Q, K, V, causal=align), V)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_future_score_past_the_floats_range_costs_the_first_pass_nothing(
    exponential: str, dtype: type
) -> None:
    """The first pass zeroes the future after the exponential (exp of -inf takes NumPy's slow path), so
    future scores that overflow must still leave no trace and need no second pass."""
    n, big = 96, 2000.0  # scores of ~1400: past exp's range in float32 and float64
    Q = np.zeros((n, 2), dtype)
    K = np.zeros((n, 2), dtype)
    V = np.random.default_rng(9).standard_normal((n, 3)).astype(dtype)
    Q[:40, 1] = 1.0  # queries 0-39 ...
    K[40:48, 1] = big  # ... would score ~1400 on keys 40-47, all in their future,
    Q[40:, 0] = 1.0  # while the queries that may see those keys score 0 on them.
    K[:, 0] = np.linspace(-1, 1, n)
    want = plain(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64), causal=True)
    with (
        forced_blocks(block_q=64, block_k=64, threads=1),  # block 0-63 crosses keys 40-47
        mock.patch.object(blocked, "_follow", wraps=blocked._follow) as second_pass,
        np.errstate(all="raise"),  # nothing may leak past the pass's own error state
    ):
        got = attention(Q, K, V, causal=True)
    assert not second_pass.called
    np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE[np.dtype(dtype)] * float(np.abs(V).max()))
