"""What the blocked path reads about the machine: the L2 cache (from sysfs) and the tile it sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import qkv._blocked as blocked
from qkv import _hardware


def lay_out_caches(root: Path, caches: list[tuple[str, str, str]]) -> Path:
    """A folder laid out as Linux's /sys/devices/system/cpu/cpu0/cache: index<i>/{level,type,size}."""
    for i, (level, kind, size) in enumerate(caches):
        folder = root / f"index{i}"
        folder.mkdir()
        (folder / "level").write_text(level + "\n")
        (folder / "type").write_text(kind + "\n")
        (folder / "size").write_text(size + "\n")
    return root


def test_the_level_2_data_or_unified_cache_is_read(tmp_path: Path) -> None:
    caches = [
        ("1", "Data", "48K"),
        ("1", "Instruction", "32K"),
        ("2", "Unified", "1280K"),
        ("3", "Unified", "48M"),
    ]
    assert _hardware.l2_cache_bytes(str(lay_out_caches(tmp_path, caches))) == 1280 * 1024


@pytest.mark.parametrize(
    "caches",
    [
        [("1", "Data", "32K"), ("3", "Unified", "8M")],  # no L2 at all
        [("2", "Unified", "lots")],  # a size sysfs never writes
    ],
)
def test_no_readable_level_2_cache_gives_none(tmp_path: Path, caches: list[tuple[str, str, str]]) -> None:
    assert _hardware.l2_cache_bytes(str(lay_out_caches(tmp_path, caches))) is None


def test_this_machine_reports_its_l2_cache() -> None:
    # Every development and CI machine runs Linux with sysfs; a CPU without an L2 would be news.
    size = _hardware.l2_cache_bytes()
    assert size is not None and 64 * 1024 <= size <= 64 * 2**20


@pytest.mark.parametrize(
    ("l2", "scores"),
    [
        (256 * 1024, 32 * 1024),  # 128 KiB of float32 scores
        (1024 * 1024, 128 * 1024),
        (1280 * 1024, 128 * 1024),  # not a power of two: rounded down
        (2 * 2**20, 256 * 1024),
        (64 * 1024, 32 * 1024),  # a tiny cache: the per-tile Python cost sets the floor
        (64 * 2**20, 1024 * 1024),  # a huge one: capped
        (None, 128 * 1024),  # unknown: DEFAULT_L2_BYTES
    ],
)
def test_a_tile_takes_the_largest_power_of_two_within_half_the_cache(l2: int | None, scores: int) -> None:
    assert _hardware.tile_scores(l2) == scores


def test_the_blocked_path_sizes_its_tiles_from_this_machine() -> None:
    assert _hardware.tile_scores(_hardware.l2_cache_bytes()) == blocked.BLOCK_Q * blocked.BLOCK_K


def test_the_blas_core_type_is_named_when_threadpoolctl_can_tell() -> None:
    pytest.importorskip("threadpoolctl")
    from threadpoolctl import threadpool_info

    named = [
        lib["architecture"]
        for lib in threadpool_info()
        if lib.get("user_api") == "blas" and lib.get("architecture")
    ]
    assert _hardware.blas_core_type() == (str(named[0]) if named else None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp2_is_faster_is_measured_once_per_dtype_and_says_yes_or_no(dtype: type) -> None:
    first = _hardware.exp2_is_faster(np.dtype(dtype))
    assert isinstance(first, bool)
    assert _hardware.exp2_is_faster(np.dtype(dtype)) is first  # cached: one process, one choice per dtype
