"""Streaming attention: the plain path's result without ever holding the ``n_q × n_k`` scores.

The queries are cut into blocks of ``BLOCK_Q`` rows and the keys into blocks of ``BLOCK_K`` rows.
For one query block we walk through the key blocks and keep two running sums per query (the
"online softmax" of FlashAttention and of Rabe & Staats, 2021):

    l    the sum of exp(score - ref) over the keys seen so far
    acc  the sum of exp(score - ref) · v over the keys seen so far

where ``ref`` is a reference score of that query. After the last block ``acc / l`` is exactly
``softmax(S) V``, whatever ``ref`` is, yet only one ``BLOCK_Q × BLOCK_K`` tile of ``S`` existed at
any time. The reference only has to keep ``exp`` in range: the textbook choice is the largest
score so far, which costs a pass over every tile to find it, a subtraction and a rescaling of the
sums whenever it grows. Here every query block is first summed with ``ref = 0``: no tile looks
for its top scores. That is exact unless an ``exp`` overflowed or all of a query's weights
underflowed, and the sums show both (as ``inf``/``nan`` or a sum below the square root of the
smallest normal float); only then is the block summed again with references that move (to the
query's current top score, multiplying ``l`` and ``acc`` by ``exp(ref - ref')``) when a score
rises more than ``HEADROOM`` above them or a query's first scores all lie far below them.

``l`` is a tile's product with a column of ones (a tenth of the time of a row sum), beside its
product with ``V``; a single product with ``[V | 1]``, which needed a copy of ``V`` per call, took
longer than the two (65 columns are a 64-wide kernel pass and a narrow one). Each thread keeps its
scratch arrays (the tile, the sums, the scaled queries) between calls, because fresh buffers of that
size come from ``mmap`` and are page-faulted in on every call.

Where NumPy's ``exp2`` is the faster exponential (its AVX-512 kernels; see ``qkv._hardware``), the
scores are measured in bits rather than nats: ``log2(e)`` is folded into the factor on the queries, so
``2 ** (score · log2 e) = e ** score`` and every weight, sum and result is the same, while each tile's
exponential costs about half. The references and their headroom are then in bits too. A call with an
additive bias keeps nats (the bias would have to be rescaled tile by tile).

Query blocks are independent, so they run on a small thread pool: NumPy's matmul and ``exp`` release
the GIL, and BLAS is held to one thread per worker (through threadpoolctl, when it is installed) so
the two kinds of threading do not fight over the cores. Without threadpoolctl the blocks run one
after another and BLAS keeps its own threads. Where one head's block is shorter than a tile (under a
causal mask, or for short heads), a task takes the same block of several consecutive heads, and each
NumPy call does its step for all of them: fewer calls, and fewer hand-overs of the GIL between the
threads.

This module only computes; ``qkv.attention.attention`` validates the inputs and applies the
fully-masked-row policy to the rows this module reports as ``dead``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from qkv._hardware import exp2_is_faster, l2_cache_bytes, tile_scores
from qkv._scratch import scratch
from qkv._workers import run_on_threads, worker_count

__all__ = [
    "BLOCK_K",
    "BLOCK_Q",
    "MIN_THREADED_SCORES",
    "blocked_attention",
    "fits_one_tile",
    "one_tile_attention",
    "worker_count",
]

FloatArray = npt.NDArray[np.floating[Any]]
BoolArray = npt.NDArray[np.bool_]

# Keys per tile. Measured with OpenBLAS's AVX-512 and its AVX2 kernels alike (docs/performance.md),
# 256 keys and taller query blocks beat 512 or 1024 keys in tiles of the same size.
BLOCK_K = 256
# Queries per tile: as many as keep a tile of float32 scores within half of this machine's L2 cache
# (512 rows for an L2 of 1-2 MiB).
BLOCK_Q = tile_scores(l2_cache_bytes()) // BLOCK_K
# When references follow the scores: how far (in nats) scores may lie above or below a query's
# reference before it moves. exp(±20) is far from float32's overflow and underflow
# (blocked_attention checks the sums against the values' size).
HEADROOM = 20.0
LOG2_E = 1 / math.log(2)  # bits per nat: e ** x = 2 ** (x · LOG2_E)
LN_2 = math.log(2)  # nats per bit
# From this many float32 scores in all on (a float64 score counts twice: twice the arithmetic per
# hand-over), the blocks go to the thread pool; below it BLAS's own threads do better. Quiet 2-core
# AMD EPYC, AVX2 kernels, against PyTorch in the same rounds (docs/performance.md), BLAS's threads and
# the pool: one float32 head of 384 0.90 / 0.86, 448 1.03 / 1.03, 512 0.96 / 0.96, causal 384 0.98 /
# 0.79, 512 1.10 / 1.21-1.24; float64 384 0.94 / 1.02, causal 1.15 / 1.29. (It was 640² before the
# caller stopped sleeping while it waits for a helper and the pool's halves took wider key tiles.)
MIN_THREADED_SCORES = 512 * 512
# (A busy machine wants the pool too: there BLAS's threads stall each other at every product, one head of
# 640 queries 8.5 ms against the pool's 5.2 and of 1024 386 against 19 at load 15 on 2 cores.)
# Queries per block under a causal mask: shorter blocks skip more of the future (a block of 512 queries
# computes the tiles of its last query for all of them). One thread, float32 and float64, d = 64 (CPU
# time against PyTorch's, docs/performance.md): 128 rows ran 1.14-1.37 times PyTorch's speed where 512
# ran 0.75-1.01 up to n = 2048; from 4096 keys on 256 rows did as well or better (GEMMs of 128 rows
# lose more than the skipped future gives back).
CAUSAL_BLOCK_Q = 128
CAUSAL_BLOCK_Q_LONG = 256
CAUSAL_LONG_KEYS = 4096


def fits_one_tile(n_q: int, n_k: int) -> bool:
    """Whether one head of this size is computed as a single tile (see ``one_tile_attention``).

    Parameters
    ----------
    n_q, n_k : int
        Number of queries and keys in the head.

    Returns
    -------
    bool
        True when ``n_k`` keys fit in a block and the ``n_q × n_k`` scores in a tile of
        ``BLOCK_Q × BLOCK_K``.

    Examples
    --------
    >>> fits_one_tile(8, 8)
    True
    >>> fits_one_tile(4096, 4096)
    False
    """
    return n_k <= BLOCK_K and n_q * n_k <= BLOCK_Q * BLOCK_K


def blocked_attention(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    *,
    scale: float,
    allowed: BoolArray | None = None,
    bias: FloatArray | None = None,
    causal_offset: int | None = None,
    block_q: int | None = None,
    block_k: int | None = None,
    threads: int | None = None,
) -> tuple[FloatArray, BoolArray]:
    """Attention ``softmax(q kᵀ · scale + bias, masked) v`` computed block by block.

    The inputs must already be valid and share one float dtype (float32 or float64); that dtype is
    the dtype of the result. Nothing of size ``n_q × n_k`` is allocated here (a mask the caller
    passes in is only read, tile by tile).

    Parameters
    ----------
    q : ndarray, shape (..., n_q, d_k)
    k : ndarray, shape (..., n_k, d_k)
    v : ndarray, shape (..., n_k, d_v)
        Leading (batch) dimensions broadcast against each other.
    scale : float
        Factor on the dot products.
    allowed : ndarray of bool, optional
        Broadcastable to ``(..., n_q, n_k)``; False excludes a key for a query.
    bias : ndarray, optional
        Broadcastable to ``(..., n_q, n_k)``; added to the scores (``-inf`` excludes).
    causal_offset : int, optional
        If given, query ``i`` may only see keys ``j <= i + causal_offset`` (0 is PyTorch's
        ``is_causal``; ``n_k - n_q`` lines the last query up with the last key). Key blocks that
        lie wholly in a query block's future are never computed.
    block_q, block_k : int, optional
        Block sizes. By default ``BLOCK_K`` keys, and as many queries as keep a tile within
        ``BLOCK_Q × BLOCK_K`` scores (``BLOCK_Q`` when there are at least ``BLOCK_K`` keys); under a
        causal mask at most ``CAUSAL_BLOCK_Q`` queries (``CAUSAL_BLOCK_Q_LONG`` from
        ``CAUSAL_LONG_KEYS`` keys), so that blocks skip more of the future.
    threads : int, optional
        Worker threads; by default ``worker_count()``, or 1 below ``MIN_THREADED_SCORES`` float32
        scores (float64 scores count twice).

    Returns
    -------
    O : ndarray, shape (..., n_q, d_v)
        The output; NaN in the rows of queries that have no allowed key.
    dead : ndarray of bool, shape (..., n_q)
        True for the queries that have no allowed key.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]])
    >>> K = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> V = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> O, dead = blocked_attention(q, K, V, scale=2**-0.5, block_k=1)
    >>> O.round(6), dead
    (array([[1.339523, 0.660477]]), array([False]))
    >>> blocked_attention(q, K, V, scale=1.0, allowed=np.array([[False, False]]))[1]
    array([ True])
    """
    single_head = q.ndim == k.ndim == v.ndim == 2
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    dtype = q.dtype
    batch = () if single_head else tuple(np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    chosen_block_k, block_k = block_k, block_k or BLOCK_K
    tile_q = block_q or BLOCK_Q * BLOCK_K // min(block_k, n_k)  # fewer keys than a block: taller tiles
    one_tile = math.prod(batch) * n_q <= tile_q and n_k <= block_k  # every head's scores in one tile
    block_q = block_q or _default_block_q(n_k, block_k, causal_offset)
    if one_tile:
        # q with every batch dimension (V's too), so that the scores have the shape a mask broadcasts to
        every_q = _expand(q, batch)
        if (O := one_tile_attention(every_q, k, v, scale, bias, allowed, causal_offset)) is not None:
            return O, _none_dead((*batch, n_q))
    smallest_sum = _SMALLEST_SUM[dtype.itemsize]
    in_bits = bias is None and exp2_is_faster(dtype)
    if threads is None:
        threads = _threads_for(math.prod(batch) * n_q * n_k, dtype.itemsize)
    workers = max(1, threads)
    problem = _Problem(
        q=_expand(q, batch),
        scale=scale * LOG2_E if in_bits else scale,
        in_bits=in_bits,
        k=_expand(k, batch),
        v=_expand(v, batch),
        allowed=None if allowed is None else _expand(allowed, batch, (n_q, n_k)),
        bias=None if bias is None else _expand(bias, batch, (n_q, n_k)),
        causal_offset=causal_offset,
        block_k=block_k,
        headroom=None,
        smallest_sum=smallest_sum,
        out=np.empty((*batch, n_q, d_v), dtype),
        dead=np.zeros((*batch, n_q), np.bool_),  # blocks write only their dead queries
    )
    tasks = _query_blocks(problem, batch, block_q, workers)
    if chosen_block_k is None and causal_offset is None:
        rows = ((i1 - i0) * math.prod(_run_heads(b)) for b, i0, i1 in tasks)  # a task's rows, all heads
        problem.block_k = _key_block_for(min(rows, default=block_q), n_k)
    if workers == 1 or len(tasks) == 1:
        for task in tasks:
            _run_query_block(problem, *task)
    else:
        run_on_threads(lambda task: _run_query_block(problem, *task), tasks, min(workers, len(tasks)))
    return problem.out, problem.dead


def _default_block_q(n_k: int, block_k: int, causal_offset: int | None) -> int:
    """Queries per block: as many as fill a tile (taller with fewer keys than a block: fewer calls), or
    under a causal mask at most ``CAUSAL_BLOCK_Q`` (``CAUSAL_BLOCK_Q_LONG`` from ``CAUSAL_LONG_KEYS``)."""
    block_q = BLOCK_Q * BLOCK_K // min(block_k, n_k)
    if causal_offset is None:
        return block_q
    return min(block_q, CAUSAL_BLOCK_Q_LONG if n_k >= CAUSAL_LONG_KEYS else CAUSAL_BLOCK_Q)


def _key_block_for(block_q: int, n_k: int) -> int:
    """Keys per tile for query blocks of ``block_q`` rows without a causal mask: ``BLOCK_K``, or a
    multiple of it as wide as keeps the tile within ``BLOCK_Q × BLOCK_K`` scores when the blocks are
    shorter than ``BLOCK_Q`` (the pool's two halves of one head of 512: 256 × 512 rather than two
    tiles of 256 × 256, half the NumPy calls; 377 against 407 µs a call)."""
    return min(max(n_k, 1), BLOCK_K * max(1, BLOCK_Q // max(block_q, 1)))


def _threads_for(scores: int, itemsize: int) -> int:
    """Worker threads for a call with this many scores in all, of this size: the pool from
    MIN_THREADED_SCORES float32 scores on (a float64 score counts twice), otherwise one (and BLAS's own
    threads)."""
    if scores * itemsize >= MIN_THREADED_SCORES * 4:
        return worker_count()
    return 1


@functools.lru_cache(maxsize=64)
def _none_dead(shape: tuple[int, ...]) -> BoolArray:
    """``dead`` for heads where every query has a key: one read-only array per shape, kept, because a
    new one cost a few percent of a call on a small head."""
    dead = np.zeros(shape, np.bool_)
    dead.flags.writeable = False
    return dead


# A query whose weights sum to less than this may have lost them to underflow: it is summed again.
_SMALLEST_SUM = {size: math.sqrt(float(np.finfo(f"f{size}").tiny)) for size in (4, 8)}  # by itemsize
# exp of a score above this overflows (by itemsize); one_tile_attention keeps a margin of n_k terms and 1.
_LOG_LARGEST = {size: math.log(float(np.finfo(f"f{size}").max)) for size in (4, 8)}


def one_tile_attention(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    scale: float,
    bias: FloatArray | None = None,
    allowed: BoolArray | None = None,
    causal_offset: int | None = None,
) -> FloatArray | None:
    """Heads whose scores fit in one tile together: the blocked path's arithmetic on the whole score
    matrix at once, without blocks, scratch arrays or threads (their bookkeeping costs more than the
    arithmetic on small inputs), or None where that arithmetic would not be exact.

    Every reference stays at 0 (see the module's docstring). That is exact unless a weight would
    overflow, all of a query's weights underflow, or a query has no allowed key. Each is checked before
    the step it would spoil (the top score before ``exp``, the row sums before dividing by them), so no
    step here overflows or divides by 0; the answer is then None, and ``blocked_attention``'s general
    path, whose references follow the scores and which reports dead queries, takes the head.

    Parameters
    ----------
    q : ndarray, shape (..., n_q, d_k)
    k : ndarray, shape (..., n_k, d_k)
    v : ndarray, shape (..., n_k, d_v)
        Valid inputs of one float dtype (float32 or float64), the result's dtype; batch dimensions
        broadcast against each other.
    scale : float
        Factor on the dot products.
    bias, allowed, causal_offset : optional
        As for ``blocked_attention``.

    Returns
    -------
    ndarray, shape (..., n_q, d_v), or None

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]])
    >>> K = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> one_tile_attention(q, K, 2 * K, scale=2**-0.5).round(6)
    array([[1.339523, 0.660477]])
    >>> one_tile_attention(q, K, 2 * K, scale=1.0, allowed=np.array([[False, False]])) is None
    True
    """
    scores: Callable[..., FloatArray]  # the three products: ndarray.dot for one head, else matmul
    row_sums: Callable[..., FloatArray]
    values: Callable[..., FloatArray]
    if q.ndim == k.ndim == v.ndim == 2:
        scores, row_sums, values, k_t = _one_tile_scores, _one_tile_row_sums, _one_tile_values, k.T
    else:  # heads with batch dimensions: ndarray.dot would pair every head with every other one
        scores, row_sums, values = _one_tile_batch_scores, _one_tile_batch_row_sums, _one_tile_batch_values
        k_t = k.swapaxes(-1, -2)
    in_bits = bias is None and exp2_is_faster(q.dtype)  # scores in bits: see the module's docstring
    S = scores(_one_tile_scaled(q, scale * LOG2_E if in_bits else scale), k_t)  # (..., n_q, n_k)
    future = None  # a causal mask alone is applied after the exponential, as on the blocked path
    if bias is None and allowed is None and causal_offset is not None and S.shape[-1] - 1 > causal_offset:
        future, causal_offset = _future(S.shape[-2:], causal_offset), None
    masked = bias is not None or allowed is not None or causal_offset is not None
    if masked and not _mask_tile(S, bias, allowed, causal_offset):
        return None
    n_k, d_v = S.shape[-1], v.shape[-1]
    # (The top counts the future too: a head whose future alone scores too high takes the general path.)
    top_in_nats = float(_one_tile_top(S, None)) * (LN_2 if in_bits else 1.0)
    if not top_in_nats <= _LOG_LARGEST[S.dtype.itemsize] - math.log(n_k) - 1:
        return None
    (_one_tile_exp2 if in_bits else _one_tile_exp)(S, S)  # (..., n_q, n_k) weights, at most e^top each
    if future is not None:
        _one_tile_zero(S, 0, where=future)  # (..., n_q, n_k) no weight on the future
    l = row_sums(S, _ones(n_k, S.dtype))  # (..., n_q, 1)
    if not float(_one_tile_least(l, None)) >= _SMALLEST_SUM[S.dtype.itemsize]:  # underflow, no key
        return None
    if n_k <= d_v:
        # Dividing the weights costs no more than dividing the output here, and A V is then an average
        # of V's rows, which overflows no more than the plain path does.
        _one_tile_divide(S, l, S)  # (..., n_q, n_k) A
        O: FloatArray = values(S, v)  # (..., n_q, d_v)
        return O
    with np.errstate(over="ignore", invalid="ignore"):  # V near the float's limit: O's sum shows it
        O = values(S, v)  # (..., n_q, d_v), weighted by up to e^top
        _one_tile_divide(O, l, O)
        exact = math.isfinite(O.sum())
    return O if exact else None


# The one tile's steps are NumPy's own callables under names of their own: ``python -m qkv.bench
# attention --profile`` swaps each for a timed copy by name (qkv/bench_profile.py), and an unprofiled
# call pays no Python frame for them (six frames cost 0.7–0.9 µs, a tenth of the tile on 1–8 tokens,
# docs/performance.md). The products go through ``ndarray.dot``, whose call costs less than the
# ``matmul`` ufunc's on small arrays (1.5 against 2.4 µs on an 8 × 64 head); the row sums are a
# product with a column of ones, whose call costs half of ``S.sum(axis=1)``'s and which adds up like
# the general path's; ``ufunc.reduce`` spares the quarter microsecond of
# ``S.max()``'s Python wrapper.
_one_tile_scaled = np.multiply  # (q, scale): scaling the queries costs less than scaling the scores
_one_tile_scores = np.ndarray.dot  # (q, kᵀ)
_one_tile_top = np.maximum.reduce  # (S, None): the top score
_one_tile_exp = np.exp  # (S, S)
_one_tile_exp2 = np.exp2  # (S, S), scores in bits
_one_tile_row_sums = np.ndarray.dot  # (S, ones)
_one_tile_least = np.minimum.reduce  # (l, None): the smallest row sum
_one_tile_divide = np.divide  # (X, l, X): each row by its sum
_one_tile_zero = np.copyto  # (S, 0, where=future): the causal mask, after the exponential
_one_tile_values = np.ndarray.dot  # (A, v)
# With batch dimensions the three products are matmul's, which pairs the heads.
_one_tile_batch_scores = np.matmul  # (q, kᵀ)
_one_tile_batch_row_sums = np.matmul  # (S, ones)
_one_tile_batch_values = np.matmul  # (A, v)


# -- the steps of a tile, each a function so that ``python -m qkv.bench attention --profile`` can time
# -- them by name (see qkv/bench_profile.py)


def _scaled_queries(q: FloatArray, scale: float, out: FloatArray) -> FloatArray:
    # Scaling the queries is cheaper than scaling every tile of scores. A Python float keeps q's dtype.
    return np.multiply(q, scale, out=out)  # (bq, d_k)


def _tile_scores(q: FloatArray, k: FloatArray, out: FloatArray) -> FloatArray:
    return np.matmul(q, k.swapaxes(-1, -2), out=out)  # (..., bq, bk)


def _tile_exp(S: FloatArray) -> None:
    np.exp(S, out=S)  # (bq, bk) weights, not yet normalised


def _tile_exp2(S: FloatArray) -> None:
    np.exp2(S, out=S)  # (bq, bk) weights from scores in bits, not yet normalised


def _tile_zero_future(S: FloatArray, future: BoolArray) -> None:
    np.copyto(S, 0, where=future)  # (bq, bk) no weight on the future


def _tile_values(S: FloatArray, v: FloatArray, out: FloatArray) -> FloatArray:
    return np.matmul(S, v, out=out)  # (bq, d_v)


def _tile_row_sums(S: FloatArray, ones: FloatArray, out: FloatArray) -> FloatArray:
    # A product with a column of ones: a tenth of S.sum(axis=1)'s time (2.4 against 11 µs on 256 × 256).
    return np.matmul(S, ones, out=out)  # (bq, 1)


@functools.lru_cache(maxsize=64)
def _ones(n: int, dtype: np.dtype[Any]) -> FloatArray:
    ones = np.ones((n, 1), dtype)  # read-only: threads share it
    ones.flags.writeable = False
    return ones


def _normalise(acc: FloatArray, l: FloatArray, out: FloatArray | None) -> FloatArray:
    return np.divide(acc, l, out=out)  # (bq, d_v) = weighted values / their weights' sums


def _headroom(v: FloatArray, n_k: int) -> float:
    """HEADROOM, unless n_k weights of up to e^HEADROOM times |V| could overflow: then 0, which keeps
    each query's reference at its largest score so far (the textbook online softmax)."""
    if v.size == 0:
        return HEADROOM
    peak = max(float(v.max()), -float(v.min()))  # nan or inf if V holds them: the test below fails
    limit = float(np.finfo(v.dtype).max)
    return HEADROOM if peak * n_k * math.exp(HEADROOM + 1) < limit else 0.0


def _expand(
    array: npt.NDArray[Any], batch: tuple[int, ...], last: tuple[int, ...] | None = None
) -> npt.NDArray[Any]:
    """A view of ``array`` with the full batch dimensions (and ``last`` as its last dimensions)."""
    shape = (*batch, *(array.shape[-2:] if last is None else last))
    return array if array.shape == shape else np.broadcast_to(array, shape)


@dataclass(slots=True)
class _Problem:
    q: FloatArray  # (*batch, n_q, d_k), not yet scaled
    scale: float  # the factor on q, log2(e) included when in_bits
    in_bits: bool  # scores in bits (exp2) rather than nats (exp)
    k: FloatArray  # (*batch, n_k, d_k)
    v: FloatArray  # (*batch, n_k, d_v)
    allowed: BoolArray | None  # (*batch, n_q, n_k), a broadcast view
    bias: FloatArray | None  # (*batch, n_q, n_k), a broadcast view
    causal_offset: int | None
    block_k: int
    headroom: float | None  # see HEADROOM and follow_headroom
    smallest_sum: float  # a query whose weights sum to less was summed again (see _run_query_block)
    out: FloatArray  # (*batch, n_q, d_v), written block by block
    dead: BoolArray  # (*batch, n_q)

    def follow_headroom(self) -> float:
        """``_headroom``, worked out on first use: only blocks that are summed again need it."""
        if self.headroom is None:  # two threads may both work it out; they get the same number
            nats = _headroom(self.v, self.k.shape[-2])  # (a broadcast view reads as V itself)
            self.headroom = nats * LOG2_E if self.in_bits else nats
        return self.headroom

    def key_end(self, i1: int) -> int:
        """Keys at or after this index are in the future of every query before ``i1``."""
        n_k: int = self.k.shape[-2]
        if self.causal_offset is None:
            return n_k
        return max(0, min(n_k, i1 + self.causal_offset))  # query i1 - 1 sees j <= i1 - 1 + offset


# (batch index, first query, end query); the index ends with a slice for a run of heads (_head_runs)
Task = tuple[tuple[int | slice, ...], int, int]


def _query_blocks(problem: _Problem, batch: tuple[int, ...], block_q: int, workers: int) -> list[Task]:
    n_q = problem.q.shape[-2]
    heads = math.prod(batch)
    if workers > 1 and heads * math.ceil(n_q / block_q) < workers:
        block_q = math.ceil(n_q / math.ceil(workers / heads))  # smaller blocks, so no worker sits idle
    elif workers > 1 and problem.causal_offset is None:
        # Without a causal mask the blocks cost alike, so they are made even and their count a
        # multiple of the workers': 600 queries on 2 workers as 300 and 300 rather than 512 and 88,
        # 1536 as four blocks of 384 rather than three of 512 (one worker would do two while the
        # other waited).
        per_head = math.ceil(n_q / block_q)
        while (heads * per_head) % workers:
            per_head += 1
        block_q = math.ceil(n_q / per_head)
    elif workers > 1 and problem.causal_offset is not None and heads * math.ceil(n_q / block_q) < 2 * workers:
        # Under a causal mask later blocks cost more; two or more per worker let the workers finish
        # closer together (at n = 1024 on 2 cores, 256-row blocks ran 15-39 % faster than 512-row ones).
        block_q = math.ceil(n_q / math.ceil(2 * workers / heads))
    together = _heads_per_task(problem, batch, block_q, workers)
    tasks = [
        (b, i0, min(i0 + block_q, n_q)) for b in _head_runs(batch, together) for i0 in range(0, n_q, block_q)
    ]
    # Under a causal mask later queries see more keys: start the costly blocks first so the
    # workers finish together.
    tasks.sort(key=lambda task: problem.key_end(task[2]), reverse=True)
    return tasks


def _heads_per_task(problem: _Problem, batch: tuple[int, ...], block_q: int, workers: int) -> int:
    """How many consecutive heads of the last batch axis one task takes: as many as fit their tiles in
    one tile's scores (``BLOCK_Q × BLOCK_K``) and divide the heads evenly, while every worker keeps
    work (two tasks each where causal blocks cost unlike amounts, else a multiple of the workers).

    A task's NumPy calls then do each step for all its heads (``matmul`` loops over them in C): one
    set of calls and GIL hand-overs where each head cost one (8 causal heads of 1024: 1.23–1.32 times
    PyTorch's speed against 0.87–1.15; docs/performance.md).
    """
    if not batch:
        return 1
    n_q, n_k = problem.q.shape[-2], problem.k.shape[-2]
    widest = min(problem.block_k, n_k)  # a block's widest tile
    fit = max(1, BLOCK_Q * BLOCK_K // (min(block_q, n_q) * max(widest, 1)))
    blocks = math.prod(batch[:-1]) * math.ceil(n_q / block_q)
    unlike = problem.causal_offset is not None and n_q > block_q  # causal blocks of unlike cost
    enough = 1 if workers == 1 else 2 * workers if unlike else workers
    for together in range(min(fit, batch[-1]), 1, -1):
        tasks = blocks * (batch[-1] // together)
        if batch[-1] % together == 0 and tasks >= enough and (unlike or tasks % workers == 0):
            return together
    return 1


def _head_runs(batch: tuple[int, ...], together: int) -> list[tuple[int | slice, ...]]:
    """Every batch index, () when there is none; for runs of ``together`` heads (more than one) each
    index ends with a slice of the last batch axis, and the task's arrays lead with that axis."""
    if together == 1 or not batch:
        return list(itertools.product(*map(range, batch)))
    runs = [slice(h0, min(h0 + together, batch[-1])) for h0 in range(0, batch[-1], together)]
    return [(*prefix, run) for prefix in itertools.product(*map(range, batch[:-1])) for run in runs]


def _run_heads(b: tuple[int | slice, ...]) -> tuple[int, ...]:
    """The leading shape of a task's arrays: (heads,) where its index ends with a run of heads."""
    last = b[-1] if b else None
    return (last.stop - last.start,) if isinstance(last, slice) else ()


class _Sums(NamedTuple):
    """A query block's running sums and the scratch each tile's share is computed in."""

    acc: FloatArray  # (..., bq, d_v) the weighted sum of the values (... : a task's run of heads)
    l: FloatArray  # (..., bq, 1) the sum of the weights
    acc_part: FloatArray  # (..., bq, d_v) one key block's share of acc
    l_part: FloatArray  # (..., bq, 1) one key block's share of l


def _run_query_block(p: _Problem, b: tuple[int | slice, ...], i0: int, i1: int) -> None:
    dtype = p.k.dtype
    bq, d_k, d_v = i1 - i0, p.k.shape[-1], p.v.shape[-1]
    g = _run_heads(b)  # () for one head, (heads,) for a run of them: every array below leads with it
    q, acc, l, acc_part, l_part, tile = scratch(
        "block", dtype, (*g, bq, d_k), (*g, bq, d_v), (*g, bq, 1), (*g, bq, d_v), (*g, bq, 1),
        (*g, bq, min(p.block_k, p.key_end(i1))),
    )  # fmt: skip
    sums = _Sums(acc, l, acc_part, l_part)
    _scaled_queries(p.q[b][..., i0:i1, :], p.scale, q)  # (..., bq, d_k)
    # First every reference stays at 0, so no tile needs its top scores. That is exact unless some
    # exp overflowed or all of a query's weights underflowed; the sums show both (or a query with no
    # allowed key), and then the block is summed again with references that follow the scores.
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # checked just below
        _accumulate(p, b, i0, q, sums, tile, ref=None)
    out = p.out[b][..., i0:i1, :]  # (..., bq, d_v)
    if np.isfinite(acc).all() and np.isfinite(l).all() and l.min() >= p.smallest_sum:
        _normalise(acc, l, out)
        return
    _accumulate(p, b, i0, q, sums, tile, ref=np.zeros((*g, bq), dtype))
    dead = l[..., 0] == 0  # (..., bq) queries with no allowed key
    p.dead[b][..., i0:i1] = dead
    out[...] = np.nan  # stays NaN (0/0) where a query has no allowed key
    np.divide(acc, l, out=out, where=l > 0)


def _accumulate(
    p: _Problem,
    b: tuple[int | slice, ...],
    i0: int,
    q: FloatArray,
    sums: _Sums,
    tile: FloatArray,
    ref: FloatArray | None,
) -> None:
    """Sum ``exp(score - ref) · v`` and ``exp(score - ref)`` over the keys of one query block.

    ``sums.acc`` becomes the weighted sum of the values and ``sums.l`` the sum of the weights.
    ``ref`` None keeps every reference at 0; an array of references follows the scores (see
    ``_follow``).
    """
    k, v = p.k[b], p.v[b]  # (..., n_k, d_k), (..., n_k, d_v)
    ones = _ones(p.block_k, k.dtype)  # (block_k, 1): a tile's product with it sums the tile's rows
    summed = ref is not None  # whether the sums hold anything yet; _follow reads and rescales them
    if summed:
        sums.acc[...] = 0
        sums.l[...] = 0
    key_end = p.key_end(i0 + q.shape[-2])
    for j0 in range(0, key_end, p.block_k):
        j1 = min(j0 + p.block_k, key_end)
        S = _tile_scores(q, k[..., j0:j1, :], tile[..., : j1 - j0])  # (..., bq, bk) one block of scores
        i1, j1 = i0 + S.shape[-2], j0 + S.shape[-1]
        bias = None if p.bias is None else p.bias[b][..., i0:i1, j0:j1]
        allowed = None if p.allowed is None else p.allowed[b][..., i0:i1, j0:j1]
        lag = None if p.causal_offset is None else i0 + p.causal_offset - j0
        # While every reference stays at 0, the future is zeroed after the exponential rather than
        # set to -inf before it: NumPy's exp and exp2 take a slow path for -inf (a 128 × 256 tile
        # half in the future: 22 µs against 6, and 5 more to zero it). The pass that follows the
        # references needs the -inf, as its top scores must leave the future out.
        future = None
        if ref is None and lag is not None and S.shape[-1] - 1 > lag:
            future, lag = _future(S.shape[-2:], lag), None
        if not _mask_tile(S, bias, allowed, lag):
            continue  # every score in the tile is masked: it would add nothing
        if ref is not None:
            ref = _follow(S, ref, sums, p.follow_headroom(), p.in_bits)
        if p.in_bits:
            _tile_exp2(S)
        else:
            _tile_exp(S)
        if future is not None:
            _tile_zero_future(S, future)
        _add_tile(S, v[..., j0:j1, :], ones[: S.shape[-1]], sums, first=not summed)
        summed = True
    if not summed:  # every key block was masked or in the future
        sums.acc[...] = 0
        sums.l[...] = 0


def _add_tile(S: FloatArray, v: FloatArray, ones: FloatArray, sums: _Sums, first: bool) -> None:
    """Add a tile of weights' share to the sums (the first tile's share is written in place)."""
    if first:
        _tile_values(S, v, sums.acc)  # (bq, d_v)
        _tile_row_sums(S, ones, sums.l)  # (bq, 1)
        return
    np.add(sums.acc, _tile_values(S, v, sums.acc_part), out=sums.acc)
    np.add(sums.l, _tile_row_sums(S, ones, sums.l_part), out=sums.l)


def _follow(S: FloatArray, ref: FloatArray, sums: _Sums, headroom: float, in_bits: bool) -> FloatArray:
    """Move the references that this tile's scores require, rescale their sums, measure S against them.

    A query's reference moves to its top score only if exp could overflow (a score more than
    ``headroom`` above it) or, before anything is summed, underflow (every score far below it).
    Scores, references and headroom are in bits when ``in_bits`` (the weights are powers of 2), else
    in nats. Returns the new references; the sums are rescaled and ``S`` shifted in place.
    """
    top = S.max(axis=-1)  # (..., bq) -inf where the tile allows a query no key
    l = sums.l[..., 0]  # (..., bq)
    move = (top > ref + headroom) | ((top < ref - headroom) & (l == 0) & (top > -np.inf))
    if move.any():
        new_ref = np.where(move, top, ref)  # (..., bq)
        # Moving up scales the old sums down; moving down only happens while they are still 0.
        factor = (np.exp2 if in_bits else np.exp)(np.minimum(ref - new_ref, 0))[..., None]  # (..., bq, 1)
        np.multiply(sums.acc, factor, out=sums.acc)
        np.multiply(sums.l, factor, out=sums.l)
        ref = new_ref
    if ref.any():  # typical scores leave every reference at 0, and this pass is skipped
        np.subtract(S, ref[..., None], out=S)
    return ref


def _mask_tile(S: FloatArray, bias: FloatArray | None, allowed: BoolArray | None, lag: int | None) -> bool:
    """Apply a tile's bias, its bool mask and causality to its scores; False if nothing is allowed.

    ``bias`` and ``allowed`` are the tile's slices (or None); under a causal mask, row ``r`` of the
    tile may see its columns ``c <= r + lag``. A task's tiles of several heads count as one: False
    only if nothing is allowed in any of them.
    """
    if bias is not None:
        np.add(S, bias, out=S)
    if allowed is not None:
        excluded = ~allowed  # (bq, bk)
        if excluded.all():
            return False
        np.copyto(S, -np.inf, where=excluded)
    if lag is not None and S.shape[-1] - 1 > lag:  # the tile crosses the diagonal
        np.copyto(S, -np.inf, where=_future(S.shape[-2:], lag))  # (..., bq, bk)
    return True


@functools.lru_cache(maxsize=16)
def _future(shape: tuple[int, int], lag: int) -> BoolArray:
    """Which entries of a tile lie in the future: column c of row r when ``c > r + lag``.

    Every tile that crosses the diagonal at the same place needs the same pattern, so it is built
    once (and kept read-only, as threads share it).
    """
    rows, cols = shape
    future = np.arange(cols)[None, :] > np.arange(lag, lag + rows)[:, None]  # (bq, bk)
    future.flags.writeable = False
    return future
