"""What the blocked path reads about the machine: the L2 cache per core and the BLAS kernels in use.

The tile of scores the blocked path works on should stay in a core's L2 cache while the two matrix
products and the ``exp`` pass over it; how large that cache is differs from CPU to CPU, so it is read
from the operating system rather than assumed. The BLAS core type (OpenBLAS's ``SkylakeX``,
``Haswell``, …) only labels the benchmark's figures: measured on both kinds of kernel, the same tile
size won (see docs/performance.md).
"""

from __future__ import annotations

import functools
import os
import re
import time
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "DEFAULT_L2_BYTES",
    "ExponentialTimes",
    "blas_core_type",
    "exp2_is_faster",
    "exponential_times",
    "l2_cache_bytes",
    "tile_scores",
]

# When the cache size cannot be read (not Linux, or a container without sysfs): a common size today.
DEFAULT_L2_BYTES = 1024 * 1024
CPU_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"
# Bounds on a tile, in float32 scores: below 32 Ki scores the per-tile Python cost dominates, above
# 1 Mi scores (4 MiB) the tile stops fitting any core's L2.
MIN_TILE_SCORES = 32 * 1024
MAX_TILE_SCORES = 1024 * 1024


def l2_cache_bytes(cache_dir: str = CPU_CACHE_DIR) -> int | None:
    """The size of the first CPU's level-2 data (or unified) cache, as Linux's sysfs reports it.

    Parameters
    ----------
    cache_dir : str
        The folder holding ``index0``, ``index1``, … (one per cache of the CPU).

    Returns
    -------
    int or None
        Bytes, or None where sysfs does not say (another system, or no such folder).

    Examples
    --------
    >>> l2_cache_bytes("/nonexistent") is None
    True
    """
    try:
        entries = sorted(os.listdir(cache_dir))
    except OSError:
        return None
    for entry in entries:
        if not entry.startswith("index"):
            continue
        folder = os.path.join(cache_dir, entry)
        if _read(folder, "level") == "2" and _read(folder, "type") in ("Data", "Unified"):
            return _parse_size(_read(folder, "size"))
    return None


def tile_scores(l2_bytes: int | None) -> int:
    """How many float32 scores one tile holds: the largest power of two within half the L2 cache.

    Half, because the tile shares the cache with the slices of K and V it is multiplied
    with and with the BLAS kernels' packed panels. Measured on an L2 of 1.25 MiB with both the AVX-512
    and the AVX2 kernels of OpenBLAS, 512 KiB tiles ran 5-17 % faster than 1 MiB ones.

    Parameters
    ----------
    l2_bytes : int or None
        The L2 cache per core; None uses ``DEFAULT_L2_BYTES``.

    Returns
    -------
    int
        Scores per tile, a power of two between 32 Ki and 1 Mi.

    Examples
    --------
    >>> tile_scores(1280 * 1024)  # 1.25 MiB: 512 KiB of float32 scores
    131072
    >>> tile_scores(None) == tile_scores(DEFAULT_L2_BYTES)
    True
    """
    budget = (l2_bytes or DEFAULT_L2_BYTES) // 2 // 4  # float32 scores in half the cache
    power = 1 << max(0, budget.bit_length() - 1)
    return min(MAX_TILE_SCORES, max(MIN_TILE_SCORES, power))


@functools.cache
def blas_core_type() -> str | None:
    """The kernel family the loaded BLAS uses (OpenBLAS: ``SkylakeX``, ``Haswell``, …), if known.

    Read through threadpoolctl, which is optional; None without it or for a BLAS that does not say.

    Returns
    -------
    str or None

    Examples
    --------
    >>> blas_core_type() is None or isinstance(blas_core_type(), str)
    True
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    for library in threadpool_info():
        if library.get("user_api") == "blas" and library.get("architecture"):
            return str(library["architecture"])
    return None


# exp2 must beat exp by this much to be used: a near tie is not worth the other path's rounding.
EXP2_MARGIN = 0.85


@functools.cache
def exp2_is_faster(dtype: np.dtype[Any]) -> bool:
    """Whether NumPy's ``exp2`` is clearly faster than its ``exp`` for this dtype in this process.

    It depends on the SIMD kernels NumPy dispatches to: with AVX-512, float32 ``exp2`` took about
    half the time of ``exp`` (24 against 44 µs on a 512 × 256 tile, AMD EPYC); with AVX2 only, it
    was the slower of the two (240 against 400 M elements/s). It can even differ between two
    processes on one machine: on the AMD EPYC of 2026-12-07, float32 ``exp2`` ran 3.5 times slower
    (20 against 5.8 µs on 32 Ki scores, ``exp`` 11 either way) in about a third of the processes:
    of 16 looked at, exactly those where the loader had placed NumPy's ufunc library at 4 MiB past a
    multiple of 8 MiB (with address randomisation off, none). So it is measured once per dtype and
    process (``exponential_times``).

    Parameters
    ----------
    dtype : numpy.dtype
        float32 or float64.

    Returns
    -------
    bool
        True when ``exp2`` took under ``EXP2_MARGIN`` of ``exp``'s time.

    Examples
    --------
    >>> exp2_is_faster(np.dtype(np.float32)) in (True, False)
    True
    """
    times = exponential_times(dtype)
    return times.exp2 < EXP2_MARGIN * times.exp


class ExponentialTimes(NamedTuple):
    """The best of a few timings of ``np.exp`` and ``np.exp2`` on 32 Ki scores, in seconds."""

    exp: float
    exp2: float


@functools.cache
def exponential_times(dtype: np.dtype[Any]) -> ExponentialTimes:
    """Time NumPy's ``exp`` and ``exp2`` on a tile's worth of scores of this dtype, once per process.

    The best of five interleaved timings of each, about a millisecond in all.

    Parameters
    ----------
    dtype : numpy.dtype
        float32 or float64.

    Returns
    -------
    ExponentialTimes

    Examples
    --------
    >>> times = exponential_times(np.dtype(np.float64))
    >>> times.exp > 0 and times.exp2 > 0
    True
    """
    scores = np.linspace(-20, 0, 32 * 1024, dtype=dtype)
    out = np.empty_like(scores)
    best = {np.exp: float("inf"), np.exp2: float("inf")}
    for _ in range(5):
        for function in best:
            start = time.perf_counter()
            function(scores, out=out)
            best[function] = min(best[function], time.perf_counter() - start)
    return ExponentialTimes(exp=best[np.exp], exp2=best[np.exp2])


def _read(folder: str, name: str) -> str:
    try:
        with open(os.path.join(folder, name)) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _parse_size(text: str) -> int | None:
    """sysfs writes sizes such as ``1280K`` or ``2M``."""
    match = re.fullmatch(r"(\d+)\s*([KMG]?)", text)
    if match is None:
        return None
    return int(match.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2)]
