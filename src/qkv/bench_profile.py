"""Where the time of one attention call goes: ``python -m qkv.bench attention --profile``.

Each step of the two paths is a module-level name in ``qkv.attention`` or ``qkv._blocked`` (the
scores' matrix product, the ``exp``, the values' product, the other element-wise passes, the input
checks): a function of ours, or for a head in one tile NumPy's own callable under a name of its own
(``_one_tile_exp = np.exp``), so that the tile's unprofiled calls pay no Python frame. While a
profile runs, those names are bound to timed copies of what they name, so the code that is measured
is the code that runs; they are put back afterwards. What the timed steps do
not cover (Python between the steps, scratch arrays, handing blocks to threads, threads waiting for
each other) is the remainder, shown as "Python, bookkeeping, waiting".

Times are summed over the threads that run the path's Python code: the plain path runs on one (its
matrix products use BLAS's own threads), the blocked path on its pool of workers (BLAS held to one
thread each). Shares are of the call's time multiplied by that number of threads. A timed step costs
about half a microsecond more than an untimed one, which only shows on inputs of a few hundred scores.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

import qkv._blocked as blocked
from qkv.attention import attention as _attention_function

__all__ = ["PHASES", "PhaseProfile", "print_profiles", "profile_attention"]

# The module, whose private steps are timed; ``qkv.attention`` as an attribute is the function.
core = sys.modules[_attention_function.__module__]

CHECKS = "checks and conversion"
SCORES_GEMM = "scores GEMM (Q Kᵀ)"
EXP = "exp"
VALUES_GEMM = "values GEMM (A V)"
ELEMENTWISE = "other element-wise"
REMAINDER = "Python, bookkeeping, waiting"

# Phase name -> the functions (module, attribute) whose time it sums. No timed function calls another.
PHASES: dict[str, tuple[tuple[ModuleType, str], ...]] = {
    CHECKS: tuple(
        (core, name)
        for name in (
            "as_float_arrays",  # imported from qkv._validate; patched where attention looks it up
            "_check_qk",
            "_check_kv",
            "_broadcast_batch",
            "_resolve_scale",
            "_mask_parts",
        )
    ),
    SCORES_GEMM: (
        (core, "_scores"),
        (blocked, "_tile_scores"),
        (blocked, "_one_tile_scores"),
        (blocked, "_one_tile_batch_scores"),
    ),
    EXP: (
        (core, "_exp_in_place"),
        (blocked, "_tile_exp"),
        (blocked, "_tile_exp2"),
        (blocked, "_one_tile_exp"),
        (blocked, "_one_tile_exp2"),
    ),
    VALUES_GEMM: (
        (core, "_weighted_values"),
        (blocked, "_tile_values"),
        (blocked, "_one_tile_values"),
        (blocked, "_one_tile_batch_values"),
    ),
    ELEMENTWISE: (
        (core, "_peaks"),  # the plain path: row maxima, subtraction, sums and division, mask policy
        (core, "_shifted"),
        (core, "_normalised"),
        (core, "_apply_all_masked_policy"),
        (blocked, "_scaled_queries"),  # the blocked path: scaled queries, masks, references, division
        (blocked, "_mask_tile"),
        (blocked, "_tile_zero_future"),
        (blocked, "_follow"),
        (blocked, "_tile_row_sums"),
        (blocked, "_normalise"),
        (blocked, "_one_tile_scaled"),  # one tile: scaled queries, top score, row sums, division
        (blocked, "_one_tile_top"),
        (blocked, "_one_tile_row_sums"),
        (blocked, "_one_tile_batch_row_sums"),
        (blocked, "_one_tile_least"),
        (blocked, "_one_tile_divide"),
        (blocked, "_one_tile_zero"),
    ),
}


@dataclass(frozen=True)
class PhaseProfile:
    """One path at one size: the wall time of a call and the thread time of each phase in it."""

    n: int
    causal: bool
    path: str  # "plain" or "blocked"
    threads: int  # threads running the path's Python code
    seconds: float  # wall time per call
    phases: dict[str, float]  # seconds per call, summed over the threads; REMAINDER included

    def share(self, phase: str) -> float:
        """The phase's part of the call's thread time (wall time × threads)."""
        return self.phases[phase] / (self.seconds * self.threads)


def profile_attention(
    n: int, d: int = 64, causal: bool = False, path: str = "blocked", calls: int | None = None
) -> PhaseProfile:
    """Time the steps of ``qkv.attention`` on one float32 head of ``n`` queries and keys.

    Parameters
    ----------
    n : int
        Queries and keys.
    d : int
        Head dimension.
    causal : bool
        Apply a causal mask.
    path : {"plain", "blocked"}
        The plain path (as ``return_weights=True`` takes it) or the blocked one (every call without
        weights: one tile for a small head).
    calls : int, optional
        Calls to average over (after one warm-up call); by default about 0.3 s worth.

    Returns
    -------
    PhaseProfile

    Raises
    ------
    ValueError
        If ``path`` is neither "plain" nor "blocked".

    Examples
    --------
    >>> profile = profile_attention(64, d=8, path="plain", calls=3)
    >>> sorted(profile.phases) == sorted([*PHASES, REMAINDER])
    True
    >>> 0.99 < sum(profile.phases.values()) / (profile.seconds * profile.threads) < 1.01
    True
    """
    if path not in ("plain", "blocked"):
        raise ValueError(f"path must be 'plain' or 'blocked', not {path!r}.")
    rng = np.random.default_rng(n)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    call = _call(q, k, v, causal, path)
    threads = _warm_up_counting_threads(call)  # warm-up: threads, scratch arrays, caches
    if calls is None:
        start = time.perf_counter()
        call()
        calls = max(3, min(200, round(0.3 / max(time.perf_counter() - start, 1e-6))))
    with _timed_phases() as totals:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        seconds = (time.perf_counter() - start) / calls
    phases = {name: total / calls for name, total in totals.items()}
    phases[REMAINDER] = max(0.0, seconds * threads - sum(phases.values()))
    return PhaseProfile(n=n, causal=causal, path=path, threads=threads, seconds=seconds, phases=phases)


def print_profiles(profiles: list[PhaseProfile], stream: TextIO) -> None:
    """Print one line per profile: the time per call, then each phase's share of the thread time.

    Parameters
    ----------
    profiles : list of PhaseProfile
    stream : text stream

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> print_profiles([profile_attention(32, d=4, calls=2)], out)
    >>> "exp" in out.getvalue()
    True
    """
    names = [*PHASES, REMAINDER]
    print("\nwhere the time goes (share of each call's time × the threads running Python):", file=stream)
    header = f"{'n':>6} {'causal':>6} {'path':>8} {'threads':>7} {'ms/call':>9} " + " ".join(
        f"{_short(name):>9}" for name in names
    )
    print(header, file=stream)
    for p in profiles:
        shares = " ".join(f"{p.share(name):9.0%}" for name in names)
        causal = "yes" if p.causal else "no"
        print(f"{p.n:>6} {causal:>6} {p.path:>8} {p.threads:>7} {p.seconds * 1e3:9.3f} {shares}", file=stream)
    print("columns: " + "; ".join(f"{_short(name)} = {name}" for name in names), file=stream)


def _short(name: str) -> str:
    return {
        CHECKS: "checks",
        SCORES_GEMM: "QKᵀ GEMM",
        EXP: "exp",
        VALUES_GEMM: "AV GEMM",
        ELEMENTWISE: "elemwise",
        REMAINDER: "python",
    }[name]


def _call(q: npt.NDArray[np.float32], k: Any, v: Any, causal: bool, path: str) -> Callable[[], object]:
    if path == "plain":
        return lambda: core.attention(q, k, v, causal=causal, return_weights=True)

    return lambda: core.attention(q, k, v, causal=causal)


def _warm_up_counting_threads(call: Callable[[], object]) -> int:
    """Make one call and return how many threads ran its Python code (the blocked path's workers; the
    caller's thread alone when the call never reaches the pool, as the plain path never does)."""
    used = [1]
    original = vars(blocked)["run_on_threads"]  # the name _blocked calls (imported from qkv._workers)

    def spy(run: Callable[[Any], object], tasks: Any, workers: int) -> None:
        used[0] = workers
        original(run, tasks, workers)

    with _swapped(blocked, "run_on_threads", spy):
        call()
    return used[0]


@contextmanager
def _timed_phases() -> Iterator[dict[str, float]]:
    totals = dict.fromkeys(PHASES, 0.0)
    lock = threading.Lock()
    with ExitStack() as stack:
        for phase, functions in PHASES.items():
            for module, name in functions:
                stack.enter_context(
                    _swapped(module, name, _timed(getattr(module, name), phase, totals, lock))
                )
        yield totals


@contextmanager
def _swapped(module: ModuleType, name: str, value: object) -> Iterator[None]:
    """Replace a module attribute for the duration (the steps look their helpers up by name)."""
    original = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, original)


def _timed(function: Callable[..., Any], phase: str, totals: dict[str, float], lock: threading.Lock) -> Any:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            with lock:
                totals[phase] += elapsed

    return timed
