"""The blocked path's memory stays O(n): it never holds an n_q × n_k matrix.

tracemalloc sees NumPy's array buffers (NumPy reports them to it), so the peak it records during a
call is the extra memory the call needed. No timing is asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

from qkv import attention
from qkv.bench import peak_extra_bytes

MiB = 2**20
N_Q, N_K, D = 2048, 32768, 16  # the score matrix alone would be 2048 · 32768 · 4 B = 256 MiB


def test_tracemalloc_sees_numpy_buffers() -> None:
    # The bound below means something only if a large NumPy allocation shows up in the peak.
    assert peak_extra_bytes(lambda: np.ones(64 * MiB // 4, np.float32)) >= 64 * MiB


@pytest.mark.timeout(120)
@pytest.mark.parametrize("causal", [False, True, "bottom-right"])
def test_long_keys_stay_under_64_mib_of_extra_memory(causal: bool | str) -> None:
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((N_Q, D), dtype=np.float32)
    K = rng.standard_normal((N_K, D), dtype=np.float32)
    V = rng.standard_normal((N_K, D), dtype=np.float32)
    O = None

    def run() -> None:
        nonlocal O
        O = attention(Q, K, V, causal=causal)

    assert peak_extra_bytes(run) < 64 * MiB
    assert O is not None
    assert O.shape == (N_Q, D)
    assert O.dtype == np.float32
    # Spot-check a few rows against the plain path on just those queries.
    rows = [0, 1000, N_Q - 1]
    offset = 0 if causal in (False, True) else N_K - N_Q
    for row in rows:
        visible = N_K if causal is False else row + offset + 1
        want = attention(Q[row : row + 1], K[:visible], V[:visible], return_weights=True)[0]
        np.testing.assert_allclose(O[row : row + 1], want, rtol=1e-5, atol=1e-6)


@pytest.mark.timeout(120)
def test_a_key_padding_mask_is_read_per_block() -> None:
    # A (n_k,) mask broadcasts to (n_q, n_k) as a view; the blocked path must not expand it.
    rng = np.random.default_rng(1)
    Q = rng.standard_normal((N_Q, D), dtype=np.float32)
    K = rng.standard_normal((N_K, D), dtype=np.float32)
    V = rng.standard_normal((N_K, D), dtype=np.float32)
    padding = np.arange(N_K) < N_K - 5000
    assert peak_extra_bytes(lambda: attention(Q, K, V, mask=padding)) < 64 * MiB
