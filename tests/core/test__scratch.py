"""Per-thread scratch arrays: kept between calls, apart between purposes and threads, fresh when large."""

from __future__ import annotations

import threading

import numpy as np

from qkv._scratch import SCRATCH_BYTES, scratch

F32 = np.dtype(np.float32)


def test_the_same_request_gets_the_same_arrays_and_a_new_shape_reuses_the_buffer() -> None:
    first = scratch("test-same", F32, (16, 8), (16, 1))
    again = scratch("test-same", F32, (16, 8), (16, 1))
    assert all(a is b for a, b in zip(again, first, strict=True))
    (smaller,) = scratch("test-same", F32, (4, 4))
    assert np.shares_memory(smaller, first[0])  # carved from the buffer the first request made


def test_arrays_of_one_request_do_not_overlap_and_lie_64_bytes_apart() -> None:
    arrays = scratch("test-apart", np.dtype(np.float64), (3, 5), (7,), (2, 2, 2))
    assert [a.shape for a in arrays] == [(3, 5), (7,), (2, 2, 2)]
    for i, a in enumerate(arrays):
        assert (a.ctypes.data - arrays[0].ctypes.data) % 64 == 0  # 64-byte steps through the buffer
        assert a.flags.writeable and a.dtype == np.float64
        for b in arrays[i + 1 :]:
            assert not np.shares_memory(a, b)


def test_purposes_and_threads_get_buffers_of_their_own() -> None:
    (mine,) = scratch("test-owner", F32, (32,))
    (other_purpose,) = scratch("test-owner-2", F32, (32,))
    theirs: list[np.ndarray] = []
    thread = threading.Thread(target=lambda: theirs.extend(scratch("test-owner", F32, (32,))))
    thread.start()
    thread.join()
    assert not np.shares_memory(mine, other_purpose)
    assert not np.shares_memory(mine, theirs[0])


def test_a_request_past_the_budget_gets_fresh_arrays_each_time() -> None:
    rows = SCRATCH_BYTES // (4 * 64) + 1  # one row more than the budget holds
    (first,) = scratch("test-large", F32, (rows, 64))
    (second,) = scratch("test-large", F32, (rows, 64))
    assert first.shape == (rows, 64)
    assert not np.shares_memory(first, second)
