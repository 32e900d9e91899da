"""Benchmarks that print figures: ``python -m qkv.bench attention``.

The attention benchmark times, in one run and on the same inputs, ``qkv.attention`` against a naive
NumPy version (materialise the scores, softmax, multiply by V) and PyTorch's
``scaled_dot_product_attention`` when PyTorch is installed, and measures the machine's float32
matmul throughput as the roofline. Shared machines drift from minute to minute, so read the ratios
measured in the same run rather than the absolute figures: the methods take turns in rounds, and each
ratio is the median of the rounds' ratios. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from qkv import attention
from qkv._hardware import blas_core_type, exp2_is_faster, exponential_times, l2_cache_bytes
from qkv.bench_profile import print_profiles, profile_attention

__all__ = [
    "Measurement",
    "cpu_model",
    "exponential_text",
    "main",
    "matmul_gflops",
    "naive_attention",
    "run_attention_benchmark",
    "run_attention_table",
]

DEFAULT_SIZES = (512, 1024, 4096, 8192)
DEFAULT_DTYPES = ("float32", "float64")
DEFAULT_HEADS = (1, 8)
# The naive version holds the whole score matrix (and a copy under a causal mask): past this many bytes of
# scores it is left out of a size's timings (8 heads of 8192² float64 would need 4 GiB for each copy).
NAIVE_MAX_SCORE_BYTES = 256 * 2**20
ROOFLINE_SIZE = 2048
# Each timing repeats a call for about this long (at least MIN_REPEATS times), split into ROUNDS
# rounds that take turns between the methods, so a burst of load elsewhere hits them all alike. Five, as
# issue 50 measured: with three, one cell read 0.92 in the table and 1.10-1.16 minutes later on its own.
SECONDS_PER_TIMING = 0.8
MIN_REPEATS = 6
MAX_REPEATS = 20_000  # per burst: a burst of the shortest calls (about 10 µs) then lasts 0.04 s
ROUNDS = 5
# Before each burst: OpenBLAS's and PyTorch's worker threads keep spinning for a while after a threaded
# call and slow whatever runs next on those cores (measured: a 2-thread qkv call right after a
# BLAS-threaded one took up to 1.5 times as long). A pause lets them go to sleep first.
PAUSE_SECONDS = 0.2
# Sizes whose calls all take less than this are timed in SHORT_ROUNDS rounds without pauses. Such calls
# take microseconds and the machine's speed moves within a second, so the methods must take turns
# often (in three rounds of 200 calls, qkv ÷ naive at n = 1-16 ranged over 0.5-1.9 between runs); and
# they are too small for BLAS or PyTorch to start threads, so nothing spins between them (PyTorch's
# SDPA started its second thread at n = 64, a call of about 30 µs).
SHORT_CALL_SECONDS = 50e-6
SHORT_ROUNDS = 21


@dataclass(frozen=True)
class Measurement:
    """One method at one size: the median time of its calls, of each round's calls, and its peak memory."""

    method: str
    n: int
    causal: bool
    seconds: float
    peak_mib: float | None  # None where tracemalloc cannot see the allocations (PyTorch)
    flops: float
    # The median call of each round, in order. All methods of one size took turns round by round, so
    # their rounds pair up: a ratio of paired rounds cancels the machine's speed at that moment.
    round_seconds: tuple[float, ...] = ()

    @property
    def gflops(self) -> float:
        """Throughput, counting ``4 · n_q · n_k · d`` operations even when causal skips half."""
        return self.flops / self.seconds / 1e9

    def speed_relative_to(self, other: Measurement) -> float:
        """How many times as fast as ``other`` this method ran: the median of the paired rounds' ratios
        (the ratio of the medians where the rounds do not pair up).

        Examples
        --------
        The median of the rounds' ratios (3, 1.5 and 3), not the ratio of the medians (1.5):

        >>> fast = Measurement("qkv", 8, False, 2.0, None, 1.0, round_seconds=(1.0, 2.0, 2.0))
        >>> slow = Measurement("naive", 8, False, 3.0, None, 1.0, round_seconds=(3.0, 3.0, 6.0))
        >>> fast.speed_relative_to(slow)
        3.0
        """
        if len(self.round_seconds) != len(other.round_seconds) or not self.round_seconds:
            return other.seconds / self.seconds
        return statistics.median(o / s for s, o in zip(self.round_seconds, other.round_seconds, strict=True))


def naive_attention(
    q: npt.NDArray[np.float32], k: npt.NDArray[np.float32], v: npt.NDArray[np.float32], causal: bool = False
) -> npt.NDArray[np.float32]:
    """Attention the textbook way: the whole score matrix, its softmax, then ``A V``.

    Parameters
    ----------
    q, k, v : ndarray, shapes (n_q, d), (n_k, d), (n_k, d_v)
    causal : bool
        Let query ``i`` see keys ``j <= i`` only.

    Returns
    -------
    ndarray, shape (n_q, d_v)

    Examples
    --------
    >>> q = np.array([[1, 0]], np.float32)
    >>> naive_attention(q, np.eye(2, dtype=np.float32), 2 * np.eye(2, dtype=np.float32)).round(4)
    array([[1.3395, 0.6605]], dtype=float32)
    """
    S = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(1 / math.sqrt(q.shape[-1]))  # (..., n_q, n_k)
    if causal:
        S = np.where(np.tri(*S.shape[-2:], dtype=np.bool_), S, q.dtype.type(-np.inf))
    S -= S.max(axis=-1, keepdims=True)
    np.exp(S, out=S)
    O: npt.NDArray[np.float32] = (S @ v) / S.sum(axis=-1, keepdims=True)  # (..., n_q, d_v)
    return O


def matmul_gflops(n: int = ROOFLINE_SIZE, dtype: type[np.floating[Any]] = np.float32) -> float:
    """The machine's matrix-multiply throughput: the median of several ``n × n`` products.

    Parameters
    ----------
    n : int
        Matrix size.
    dtype : numpy float type

    Returns
    -------
    float
        GFLOP/s, counting ``2 n³`` operations per product.

    Examples
    --------
    >>> matmul_gflops(64) > 0
    True
    """
    a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
    seconds = _median_seconds(lambda: a @ a)
    return 2 * n**3 / seconds / 1e9


def run_attention_benchmark(
    sizes: Sequence[int] = DEFAULT_SIZES,
    d: int = 64,
    out: TextIO | None = None,
    roofline_size: int = ROOFLINE_SIZE,
    dtype: str = "float32",
    heads: int = 1,
) -> list[Measurement]:
    """Time qkv, naive NumPy and (if installed) PyTorch attention on one head or a batch, and print a table.

    Parameters
    ----------
    sizes : sequence of int
        Sequence lengths ``n`` (``n_q = n_k = n``).
    d : int
        Head dimension (``d_k = d_v``).
    out : text stream, optional
        Where the table goes; standard output by default.
    roofline_size : int
        Size of the square matmul that measures the roofline.
    dtype : {"float32", "float64"}
        The inputs' dtype, which every method computes in.
    heads : int
        Heads in one call: 1 is one ``(n, d)`` head, more a batch of shape ``(heads, n, d)``.

    Returns
    -------
    list of Measurement

    Examples
    --------
    >>> import io
    >>> rows = run_attention_benchmark([32], d=8, out=io.StringIO(), roofline_size=64)
    >>> sorted({row.method for row in rows} - {"torch"})
    ['naive', 'qkv']
    """
    stream = out if out is not None else sys.stdout
    torch_sdpa, torch_note = _load_torch()
    _print_header(stream, d, torch_note, roofline_size, dtype, heads)
    results: list[Measurement] = []
    batch = () if heads == 1 else (heads,)
    for n in sizes:
        rng = np.random.default_rng(n)
        q, k, v = (rng.standard_normal((*batch, n, d)).astype(dtype) for _ in range(3))
        # Full and causal runs of every method are timed in the same rounds, so that both the
        # ratios to PyTorch and the causal speedups compare figures taken close together.
        naive = heads * n * n * q.itemsize <= NAIVE_MAX_SCORE_BYTES
        methods = {
            (name, causal): call
            for causal in (False, True)
            for name, call in _methods(q, k, v, causal, torch_sdpa, naive).items()
        }
        rows = _measure(methods, n, flops=4.0 * n * n * d * heads)
        results.extend(rows)
        for causal in (False, True):
            _print_rows(stream, [row for row in rows if row.causal == causal])
    _print_summary(stream, results)
    return results


def run_attention_table(
    sizes: Sequence[int] = DEFAULT_SIZES,
    dtypes: Sequence[str] = DEFAULT_DTYPES,
    heads: Sequence[int] = (1,),
    d: int = 64,
    out: TextIO | None = None,
    roofline_size: int = ROOFLINE_SIZE,
) -> dict[tuple[str, int], list[Measurement]]:
    """Run ``run_attention_benchmark`` for every dtype and number of heads, then print qkv ÷ torch as one
    table: a line per dtype and heads, a full and a causal column per size, and the load average before
    and after.

    Parameters
    ----------
    sizes, dtypes, heads : sequences
        The sequence lengths, the dtypes (``"float32"``, ``"float64"``) and the heads per call.
    d, out, roofline_size
        As for ``run_attention_benchmark``.

    Returns
    -------
    dict
        The measurements of each ``(dtype, heads)``.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> tables = run_attention_table([16], ["float64"], [2], d=4, out=stream, roofline_size=32)
    >>> sorted(tables)
    [('float64', 2)]
    >>> "qkv ÷ torch" in stream.getvalue() or "torch not installed" in stream.getvalue()
    True
    """
    stream = out if out is not None else sys.stdout
    load_before = _load_text()
    tables = {}
    for dtype, count in itertools.product(dtypes, heads):
        tables[dtype, count] = run_attention_benchmark(sizes, d, stream, roofline_size, dtype, count)
        print(file=stream)
    _print_ratio_table(stream, tables, sizes, load_before)
    return tables


# -- measuring ---------------------------------------------------------------------------------------


TorchSDPA = Callable[[np.ndarray, np.ndarray, np.ndarray, bool], Callable[[], object]]


def _methods(
    q: npt.NDArray[np.floating[Any]],
    k: npt.NDArray[np.floating[Any]],
    v: npt.NDArray[np.floating[Any]],
    causal: bool,
    torch_sdpa: TorchSDPA | None,
    naive: bool = True,
) -> dict[str, Callable[[], object]]:
    methods: dict[str, Callable[[], object]] = {"qkv": lambda: attention(q, k, v, causal=causal)}
    if naive:
        methods["naive"] = lambda: naive_attention(q, k, v, causal=causal)
    if torch_sdpa is not None:
        methods["torch"] = torch_sdpa(q, k, v, causal)
    return methods


def _measure(
    methods: dict[tuple[str, bool], Callable[[], object]], n: int, flops: float
) -> list[Measurement]:
    # (The quickest of three calls: the first calls also warm caches and threads up.)
    short = (
        max(min(_seconds_of_one(call) for _ in range(3)) for call in methods.values()) < SHORT_CALL_SECONDS
    )
    rounds, pause = (SHORT_ROUNDS, 0.0) if short else (ROUNDS, PAUSE_SECONDS)
    times: dict[tuple[str, bool], list[list[float]]] = {key: [] for key in methods}
    for _round in range(rounds):
        for key, call in methods.items():
            times[key].append(_timings(call, SECONDS_PER_TIMING / rounds, pause))
    return [
        Measurement(
            method=name,
            n=n,
            causal=causal,
            seconds=statistics.median(itertools.chain.from_iterable(times[name, causal])),
            peak_mib=None if name == "torch" else peak_extra_bytes(call) / 2**20,
            flops=flops,
            round_seconds=tuple(statistics.median(calls) for calls in times[name, causal]),
        )
        for (name, causal), call in methods.items()
    ]


def _timings(call: Callable[[], object], seconds: float, pause: float) -> list[float]:
    """Pause, warm up once (threads, caches), then time enough calls to fill ``seconds``."""
    time.sleep(pause)
    first = _seconds_of_one(call)
    repeats = max(-(-MIN_REPEATS // ROUNDS), round(seconds / max(first, 1e-6)))
    return [_seconds_of_one(call) for _ in range(min(repeats, MAX_REPEATS))]


def _seconds_of_one(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _median_seconds(call: Callable[[], object]) -> float:
    return statistics.median(_timings(call, SECONDS_PER_TIMING / ROUNDS, PAUSE_SECONDS))


def peak_extra_bytes(call: Callable[[], object]) -> int:
    """The most memory (bytes) NumPy held at once during one call, beyond what was held before it.

    tracemalloc sees NumPy's array buffers, so this measures the arrays a call allocates.

    Examples
    --------
    >>> import numpy as np
    >>> peak_extra_bytes(lambda: np.ones(2**20, np.float32)) >= 4 * 2**20
    True
    """
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before


def _load_torch() -> tuple[TorchSDPA | None, str]:
    try:
        import torch  # the oracle extra; imported here so that qkv.bench never needs it
    except ImportError:
        return None, "torch not installed"

    def sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> Callable[[], object]:
        tq, tk, tv = (torch.from_numpy(x).reshape(1, -1, *x.shape[-2:]) for x in (q, k, v))  # (1, h, n, d)
        return lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

    return sdpa, f"torch {torch.__version__} ({torch.get_num_threads()} threads)"


# -- printing ----------------------------------------------------------------------------------------


def _print_header(
    stream: TextIO, d: int, torch_note: str, roofline_size: int, dtype: str = "float32", heads: int = 1
) -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    shape = "one head" if heads == 1 else f"a batch of {heads} heads"
    print(f"qkv attention benchmark: {dtype}, {shape}, d = {d}, n_q = n_k = n", file=stream)
    print(
        f"{cpu_model()}, {cores} cores, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, {torch_note}",
        file=stream,
    )
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"load average (1, 5, 15 min): {'unknown' if load is None else ' '.join(f'{x:.2f}' for x in load)}",
        file=stream,
    )
    l2 = l2_cache_bytes()
    print(
        f"BLAS core type: {_blas_text()}, "
        f"L2 cache per core: {'unknown' if l2 is None else f'{l2 // 1024} KiB'}",
        file=stream,
    )
    print(exponential_text(np.dtype(dtype)), file=stream)
    roofline = matmul_gflops(roofline_size)
    print(f"roofline: float32 matmul {roofline_size}³ = {roofline:.0f} GFLOP/s", file=stream)
    print(
        "GFLOP/s counts 4·n_q·n_k·d for causal runs too, so skipping masked blocks shows as speed.\n",
        file=stream,
    )
    print(
        f"{'n':>6} {'causal':>6} {'method':>6} {'median ms':>10} {'GFLOP/s':>8} {'vs torch':>8} "
        f"{'peak MiB':>9}",
        file=stream,
    )


def exponential_text(dtype: np.dtype[Any]) -> str:
    """Which exponential the blocked path takes for this dtype in this process, and why.

    NumPy's float32 ``exp2`` ran 3.5 times slower in about a third of the processes on one machine
    (see ``qkv._hardware.exp2_is_faster``), so two runs of the benchmark may differ in it.

    Parameters
    ----------
    dtype : numpy.dtype
        float32 or float64.

    Returns
    -------
    str
        One line for the header.

    Examples
    --------
    >>> exponential_text(np.dtype(np.float64)).startswith("exponential (float64): exp")
    True
    """
    times = exponential_times(dtype)
    chosen = "exp2, scores in bits" if exp2_is_faster(dtype) else "exp"
    return (
        f"exponential ({dtype}): {chosen} (this process measured exp2 at {times.exp2 / times.exp:.2f} "
        "of exp's time)"
    )


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The processor's model name as Linux reports it, or the platform's word for it elsewhere.

    Parameters
    ----------
    cpuinfo : str
        The file to read (Linux's ``/proc/cpuinfo``).

    Returns
    -------
    str

    Examples
    --------
    >>> cpu_model("/nonexistent") == (platform.processor() or platform.machine())
    True
    """
    try:
        with open(cpuinfo) as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _print_rows(stream: TextIO, rows: list[Measurement]) -> None:
    torch_row = next((row for row in rows if row.method == "torch"), None)
    for row in rows:
        ratio = f"{row.speed_relative_to(torch_row):8.2f}" if torch_row else f"{'-':>8}"
        peak = f"{row.peak_mib:9.1f}" if row.peak_mib is not None else f"{'-':>9}"
        print(
            f"{row.n:>6} {'yes' if row.causal else 'no':>6} {row.method:>6} {row.seconds * 1e3:10.2f} "
            f"{row.gflops:8.1f} {ratio} {peak}",
            file=stream,
        )


def _print_summary(stream: TextIO, rows: list[Measurement]) -> None:
    by_key = {(row.method, row.n, row.causal): row for row in rows}
    print("\nratios (same run; each the median of the rounds' paired ratios):", file=stream)
    for n in sorted({row.n for row in rows}):
        parts = []
        for causal in (False, True):
            qkv = by_key[("qkv", n, causal)]
            label = "causal" if causal else "full"
            if ("naive", n, causal) in by_key:
                parts.append(f"qkv/naive {label} {qkv.speed_relative_to(by_key[('naive', n, causal)]):.2f}")
            if ("torch", n, causal) in by_key:
                parts.append(f"qkv/torch {label} {qkv.speed_relative_to(by_key[('torch', n, causal)]):.2f}")
        speedup = by_key[("qkv", n, True)].speed_relative_to(by_key[("qkv", n, False)])
        parts.append(f"qkv causal speedup {speedup:.2f}")
        if ("torch", n, True) in by_key:
            torch_speedup = by_key[("torch", n, True)].speed_relative_to(by_key[("torch", n, False)])
            parts.append(f"torch causal speedup {torch_speedup:.2f}")
        print(f"  n = {n:>5}: " + ", ".join(parts), file=stream)


def _blas_text() -> str:
    """The BLAS core type, and whether the environment chose it rather than OpenBLAS's own look at the CPU."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return f"{blas_core_type() or 'unknown'}" + (f" (forced by OPENBLAS_CORETYPE={forced})" if forced else "")


def _load_text() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return "unknown" if load is None else " ".join(f"{x:.2f}" for x in load)


def _print_ratio_table(
    stream: TextIO, tables: dict[tuple[str, int], list[Measurement]], sizes: Sequence[int], load_before: str
) -> None:
    if not any(row.method == "torch" for rows in tables.values() for row in rows):
        print("qkv ÷ torch: torch not installed, so there is no ratio to print.", file=stream)
        return
    print(
        f"qkv ÷ torch (torch's time ÷ qkv's: above 1 qkv is faster; each the median of the rounds' paired "
        f"ratios)\n{cpu_model()}, BLAS core type {_blas_text()}; "
        f"load average (1, 5, 15 min) before {load_before}, after {_load_text()}",
        file=stream,
    )
    print(
        f"{'dtype':>8} {'heads':>5} " + " ".join(f"{f'n = {n} full/causal':>20}" for n in sizes), file=stream
    )
    for (dtype, heads), rows in tables.items():
        by_key = {(row.method, row.n, row.causal): row for row in rows}
        cells = []
        for n in sizes:
            pair = [
                by_key[("qkv", n, causal)].speed_relative_to(by_key[("torch", n, causal)])
                for causal in (False, True)
            ]
            cells.append(f"{f'{pair[0]:.2f} / {pair[1]:.2f}':>20}")
        print(f"{dtype:>8} {heads:>5} " + " ".join(cells), file=stream)


def _list_argument(text: str, parse: Callable[[str], Any]) -> list[Any]:
    values = [parse(part.strip()) for part in text.split(",")]
    if not values:
        raise ValueError
    return values


def _float_dtype(text: str) -> str:
    if text not in DEFAULT_DTYPES:
        raise ValueError
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run a benchmark: ``python -m qkv.bench attention [--sizes 512,1024] [--d 64]
    [--dtype float32,float64] [--heads 1,8] [--profile]``.

    By default every cell of the ratio table: both dtypes, one head and a batch of 8, n = 512, 1024, 4096
    and 8192, full and causal; each flag limits it.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit status (0).

    Examples
    --------
    >>> main(["attention", "--sizes", "16", "--d", "4", "--dtype", "float32", "--heads", "1"])
    ... # doctest: +ELLIPSIS
    qkv attention benchmark: float32, one head, d = 4, n_q = n_k = n
    ...
    0
    """
    parser = argparse.ArgumentParser(prog="python -m qkv.bench", description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", choices=["attention"], help="which benchmark to run")
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated sequence lengths (default: %(default)s)",
    )
    parser.add_argument("--d", type=int, default=64, help="head dimension (default: %(default)s)")
    parser.add_argument(
        "--dtype", default=",".join(DEFAULT_DTYPES), help="float32, float64 or both (default: %(default)s)"
    )
    parser.add_argument(
        "--heads",
        default=",".join(map(str, DEFAULT_HEADS)),
        help="comma-separated heads per call, 1 for one (n, d) head (default: %(default)s)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print where the time of a call goes (GEMMs, exp, other passes, checks, Python), "
        "for the plain and the blocked path",
    )
    args = parser.parse_args(argv)
    try:
        sizes, heads = _list_argument(args.sizes, int), _list_argument(args.heads, int)
        dtypes = _list_argument(args.dtype, _float_dtype)
        if min(sizes) < 1 or args.d < 1 or min(heads) < 1:
            raise ValueError
    except ValueError:
        parser.error(
            "--sizes and --heads must be positive whole numbers separated by commas, --d positive and "
            f"--dtype float32, float64 or both, not --sizes {args.sizes!r} --d {args.d} "
            f"--heads {args.heads!r} --dtype {args.dtype!r}."
        )
    run_attention_table(sizes, dtypes, heads, d=args.d)
    if args.profile:
        profiles = [
            profile_attention(n, d=args.d, causal=causal, path=path)
            for n in sizes
            for path, causal in (("plain", False), ("blocked", False), ("blocked", True))
        ]
        print_profiles(profiles, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
