"""The thread pool: BLAS is held to one thread only while blocked calls run, concurrent calls agree
with serial ones, and a forked child builds its own pool."""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import qkv._blocked as blocked
from qkv import _workers, attention


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_worker_count_is_the_usable_cores() -> None:
    assert blocked.worker_count() == len(os.sched_getaffinity(0))


def test_blas_is_limited_during_a_call_and_restored_after() -> None:
    before = blas_threads()
    seen: list[list[int]] = []
    original = blocked._run_query_block

    def spying_block(*args: object) -> None:
        seen.append(blas_threads())
        original(*args)  # type: ignore[arg-type]

    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((64, 8)), rng.standard_normal((40, 8)), rng.standard_normal((40, 3))
    blocked._run_query_block = spying_block  # type: ignore[assignment]
    try:
        blocked.blocked_attention(Q, K, V, scale=0.5, block_q=8, block_k=8, threads=2)
    finally:
        blocked._run_query_block = original  # type: ignore[assignment]
    assert len(seen) == 8
    assert all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send heads of a few hundred rows to the pool (by default only from 640 × 640 scores)."""
    monkeypatch.setattr(blocked, "MIN_THREADED_SCORES", 0)


@pytest.mark.parametrize(
    ("dtype", "n", "pool"),
    [
        (np.float32, 448, False),
        (np.float32, 511, False),
        (np.float32, 512, True),
        (np.float32, 2048, True),
        (np.float64, 362, False),  # 362² float64 scores count as 2 · 362² = 262,088 < 512² float32 ones
        (np.float64, 363, True),
    ],
)
def test_only_heads_past_the_measured_break_even_go_to_the_pool(
    dtype: type, n: int, pool: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    original = vars(blocked)["run_on_threads"]

    def spy(run: object, tasks: object, workers: int) -> None:
        calls.append(workers)
        original(run, tasks, workers)

    rng = np.random.default_rng(4)
    Q, K, V = (rng.standard_normal((n, 8)).astype(dtype) for _ in range(3))
    monkeypatch.setattr(blocked, "run_on_threads", spy)
    attention(Q, K, V)
    assert calls == ([blocked.worker_count()] if pool and blocked.worker_count() > 1 else [])


@pytest.mark.parametrize(("heads", "n", "pool"), [(8, 181, False), (8, 182, True)])
def test_a_batch_of_heads_counts_the_scores_of_all_its_heads(
    heads: int, n: int, pool: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (heads * n * n >= blocked.MIN_THREADED_SCORES) == pool  # 8 · 181² < 512² <= 8 · 182²
    calls: list[int] = []
    original = vars(blocked)["run_on_threads"]
    monkeypatch.setattr(
        blocked,
        "run_on_threads",
        lambda run, tasks, workers: calls.append(workers) or original(run, tasks, workers),
    )
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((heads, n, 8)).astype(np.float32) for _ in range(3))
    got = attention(Q, K, V, causal=True)
    assert calls == ([blocked.worker_count()] if pool and blocked.worker_count() > 1 else [])
    want, _ = attention(Q.astype(np.float64), K, V, causal=True, return_weights=True)  # the float64 oracle
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * float(np.abs(V).max()))


@pytest.mark.parametrize(
    ("heads", "n_q", "heights"),
    [
        ((), 600, [300, 300]),  # not 512 and 88
        ((), 1536, [384] * 4),  # not three blocks of 512 on two workers
        ((), 1024, [512, 512]),
        ((3,), 512, [256] * 6),  # three heads of one block each would leave a worker idle at the end
        ((8,), 1024, [512] * 16),
    ],
)
def test_blocks_without_a_causal_mask_are_even_and_a_multiple_of_the_workers(
    heads: tuple[int, ...], n_q: int, heights: list[int]
) -> None:
    q = np.zeros((*heads, n_q, 8))
    problem = blocked._Problem(
        q=q, scale=1.0, in_bits=False, k=q, v=q, allowed=None, bias=None, causal_offset=None,
        block_k=256, headroom=None, smallest_sum=0.0, out=q, dead=np.zeros(q.shape[:-1], bool),
    )  # fmt: skip
    tasks = blocked._query_blocks(problem, heads, 512, workers=2)
    assert [i1 - i0 for _b, i0, i1 in tasks] == heights


@pytest.mark.parametrize(
    ("batch", "n", "causal", "workers", "together", "count"),
    [
        ((8,), 1024, True, 2, 4, 16),  # four 128 × 256 tiles fill one tile's budget; 16 tasks for 2 workers
        ((8,), 1024, False, 2, 1, 16),  # one head's 512-row block fills it already
        ((8,), 16, False, 1, 8, 1),  # eight small heads in one set of NumPy calls
        ((8,), 16, False, 2, 4, 2),  # but each worker keeps a task
        ((6,), 512, True, 2, 3, 8),  # runs divide the last axis evenly (3, not 4 and 2)
        ((2, 6), 128, True, 2, 6, 2),  # one causal block a head: blocks cost alike, one task per worker
        ((7,), 128, True, 2, 1, 7),  # a prime number of heads: all of them or one
        ((7,), 128, True, 1, 7, 1),
    ],
)
def test_short_blocks_of_consecutive_heads_share_a_task(
    batch: tuple[int, ...], n: int, causal: bool, workers: int, together: int, count: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(blocked, "BLOCK_Q", 512)
    monkeypatch.setattr(blocked, "BLOCK_K", 256)
    q = np.zeros((*batch, n, 8))
    problem = blocked._Problem(
        q=q, scale=1.0, in_bits=False, k=q, v=q, allowed=None, bias=None, causal_offset=0 if causal else None,
        block_k=256, headroom=None, smallest_sum=0.0, out=q, dead=np.zeros(q.shape[:-1], bool),
    )  # fmt: skip
    block_q = blocked._default_block_q(n, 256, problem.causal_offset)
    tasks = blocked._query_blocks(problem, batch, block_q, workers)
    assert [math.prod(blocked._run_heads(b)) for b, _i0, _i1 in tasks] == [together] * count
    covered = np.zeros(q.shape[:-1], int)  # every query of every head in exactly one task
    for b, i0, i1 in tasks:
        covered[b][..., i0:i1] += 1
    assert (covered == 1).all()


def test_the_helper_is_kept_off_the_callers_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Woken from a busy core, Linux tends to queue the helper behind its caller on that core."""
    cores = sorted(os.sched_getaffinity(0))
    caller_core = cores[0]
    monkeypatch.setattr(_workers, "_current_core", lambda: caller_core)
    main = threading.get_ident()
    seen: dict[str, set[int]] = {}
    helper_ran = threading.Event()

    def task(_: int) -> None:
        if threading.get_ident() == main:
            helper_ran.wait(timeout=10)  # hold the caller until the helper has taken a task
        else:
            seen["helper"] = os.sched_getaffinity(0)
            helper_ran.set()

    _workers.run_on_threads(task, [0, 1], workers=2)
    if len(cores) > 1:
        assert seen["helper"] == set(cores) - {caller_core}
    else:  # one core: nothing to steer
        assert seen["helper"] == set(cores)


def test_the_current_core_is_one_this_thread_may_use() -> None:
    core = _workers._current_core()
    assert core is None or core in os.sched_getaffinity(0)


@pytest.mark.timeout(60)
def test_an_error_on_a_helper_reaches_the_caller_and_the_helper_serves_again() -> None:
    main = threading.get_ident()
    helper_failed = threading.Event()

    def task(_: int) -> None:
        if threading.get_ident() == main:
            helper_failed.wait(timeout=10)
        else:
            helper_failed.set()
            raise ValueError("a helper's task failed")

    with pytest.raises(ValueError, match="a helper's task failed"):
        _workers.run_on_threads(task, [0, 1], workers=2)
    done: list[int] = []
    _workers.run_on_threads(done.append, list(range(6)), workers=2)
    assert sorted(done) == list(range(6))


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("pooled")
def test_concurrent_calls_agree_with_serial_ones_and_restore_blas() -> None:
    before = blas_threads()
    rng = np.random.default_rng(1)
    problems = [
        tuple(rng.standard_normal((n, 16)).astype(np.float32) for n in (700, 400, 400)) for _ in range(6)
    ]
    serial = [attention(*p, causal=True) for p in problems]
    start = threading.Barrier(3)

    def run(p: tuple[np.ndarray, ...]) -> np.ndarray:
        start.wait(timeout=10)  # three callers at once, each sharing the one pool
        return attention(*p, causal=True)

    with ThreadPoolExecutor(3) as callers:
        concurrent = list(callers.map(run, problems[:3])) + list(callers.map(run, problems[3:]))
    for got, want in zip(concurrent, serial, strict=True):
        # Not bitwise: SIMD reductions may round differently with the buffers' alignment.
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert blas_threads() == before


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("pooled")
def test_a_forked_child_can_still_use_the_pool() -> None:
    rng = np.random.default_rng(2)
    Q, K, V = (rng.standard_normal((600, 8)).astype(np.float32) for _ in range(3))
    want = attention(Q, K, V)  # builds the pool in the parent first
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: a pool inherited without its threads would hang here
        try:
            same = np.array_equal(attention(Q, K, V), want)
            os.write(write, b"same" if same else b"different")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == b"same"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("failing_block", [0, 24])
def test_an_error_in_any_block_reaches_the_caller_and_blas_is_restored(failing_block: int) -> None:
    before = blas_threads()
    original = blocked._run_query_block

    def failing(p: object, b: tuple[int, ...], i0: int, i1: int) -> None:
        if i0 == failing_block:
            raise MemoryError(f"block {i0} failed")
        original(p, b, i0, i1)  # type: ignore[arg-type]

    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((64, 8)), rng.standard_normal((40, 8)), rng.standard_normal((40, 3))
    blocked._run_query_block = failing  # type: ignore[assignment]
    try:
        with pytest.raises(MemoryError, match=f"block {failing_block} failed"):
            blocked.blocked_attention(Q, K, V, scale=0.5, block_q=8, block_k=8, threads=2)
    finally:
        blocked._run_query_block = original  # type: ignore[assignment]
    assert blas_threads() == before
    O, dead = blocked.blocked_attention(Q, K, V, scale=0.5, block_q=8, block_k=8, threads=2)
    assert not dead.any()
    np.testing.assert_allclose(
        O, attention(Q, K, V, scale=0.5, return_weights=True)[0], rtol=1e-12, atol=1e-12
    )


@pytest.fixture(params=["spin lock", "lock"])
def end_signal_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each end signal: the C library's spin lock where it has one, and the Lock used elsewhere."""
    if request.param == "lock":
        monkeypatch.setattr(_workers, "_spin_lock_functions", lambda: None)
    elif _workers._spin_lock_functions() is None:
        pytest.skip("this C library has no pthread spin locks")
    return str(request.param)


@pytest.mark.timeout(60)
def test_the_end_signal_lets_the_caller_go_only_once_the_helper_has_set_it(end_signal_kind: str) -> None:
    signal = _workers._EndSignal()
    order: list[str] = []
    waiting = threading.Event()

    def caller() -> None:
        waiting.set()
        signal.wait()
        order.append("returned")

    thread = threading.Thread(target=caller)
    thread.start()
    waiting.wait(timeout=10)
    thread.join(timeout=0.05)  # a wait that returned at once would have ended by now
    order.append("set")
    signal.set()
    thread.join(timeout=10)
    assert order == ["set", "returned"]
    signal.set()  # and it is ready for the next job: set first, then waited for
    signal.wait()


@pytest.mark.timeout(60)
def test_a_helper_runs_jobs_and_reports_their_errors_with_either_end_signal(end_signal_kind: str) -> None:
    helper = _workers._Helper()
    done: list[int] = []
    for job in range(3):
        helper.start(lambda job=job: done.append(job))
        assert helper.join() is None
    helper.start(lambda: 1 / 0)
    assert isinstance(helper.join(), ZeroDivisionError)
    assert done == [0, 1, 2]
