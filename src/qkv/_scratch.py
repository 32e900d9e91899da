"""Per-thread scratch arrays that outlive a call.

A fresh buffer of a few hundred KiB comes from ``mmap`` and is page-faulted in on every call, which cost
as much as the arithmetic of a blocked attention call at n = 256. So each thread keeps one buffer per
purpose and carves the arrays it asks for from it.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["SCRATCH_BYTES", "scratch"]

SCRATCH_BYTES = 4 * 2**20  # per thread and purpose; larger requests get fresh arrays
_kept = threading.local()


def scratch(purpose: str, dtype: np.dtype[Any], *shapes: tuple[int, ...]) -> list[npt.NDArray[Any]]:
    """Uninitialised arrays of these shapes, carved from this thread's kept buffer for ``purpose``.

    The arrays stay valid until the same thread asks for the same purpose again. The views of the
    last few requests are kept too: carving them again cost 3–5 µs a block.

    Parameters
    ----------
    purpose : str
        Which of the thread's buffers to carve from; arrays of different purposes never overlap.
    dtype : numpy.dtype
        The arrays' dtype.
    *shapes : tuple of int
        One shape per array. Each array starts on a 64-byte boundary of the buffer.

    Returns
    -------
    list of ndarray
        Uninitialised, non-overlapping arrays, one per shape; fresh arrays if they would take more
        than ``SCRATCH_BYTES`` together.

    Examples
    --------
    >>> tile, sums = scratch("example", np.dtype(np.float32), (4, 8), (4, 1))
    >>> tile.shape, sums.shape, tile.dtype
    ((4, 8), (4, 1), dtype('float32'))
    >>> scratch("example", np.dtype(np.float32), (4, 8), (4, 1))[0] is tile  # the same request again
    True
    """
    carved: dict[tuple[Any, ...], list[npt.NDArray[Any]]] = _kept.__dict__.setdefault("carved", {})
    key = (purpose, dtype, shapes)
    if (arrays := carved.get(key)) is not None:
        return arrays
    sizes = [-(-math.prod(shape) * dtype.itemsize // 64) * 64 for shape in shapes]  # 64-byte aligned
    total = sum(sizes)
    if total > SCRATCH_BYTES:
        return [np.empty(shape, dtype) for shape in shapes]
    buffer: npt.NDArray[np.uint8] | None = getattr(_kept, purpose, None)
    if buffer is None or buffer.size < total:
        buffer = np.empty(total, np.uint8)
        setattr(_kept, purpose, buffer)
        carved.clear()  # views of the buffer it replaces
    arrays, start = [], 0
    for shape, size in zip(shapes, sizes, strict=True):
        count = math.prod(shape) * dtype.itemsize
        arrays.append(buffer[start : start + count].view(dtype).reshape(shape))
        start += size
    if len(carved) >= 16:
        carved.clear()
    carved[key] = arrays
    return arrays
