"""``python -m qkv.bench attention`` prints its table; it needs PyTorch only to compare with it."""

from __future__ import annotations

import io
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

import qkv._blocked as blocked
import qkv._hardware as _hardware
import qkv.bench as bench
import qkv.bench_profile as bench_profile
from qkv import attention


@pytest.fixture(autouse=True)
def short_timings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "SECONDS_PER_TIMING", 0.01)  # the figures are not checked, only the table
    monkeypatch.setattr(bench, "PAUSE_SECONDS", 0.0)


def test_module_import_does_not_import_torch() -> None:
    code = "import sys, qkv.bench; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


@pytest.mark.timeout(120)
def test_table_has_every_method_size_and_summary() -> None:
    pytest.importorskip("torch", reason="torch (the oracle extra) is not installed")
    out = io.StringIO()
    rows = bench.run_attention_benchmark([24, 40], d=8, out=out, roofline_size=128)
    text = out.getvalue()
    assert {(row.method, row.n, row.causal) for row in rows} == {
        (method, n, causal)
        for method in ("qkv", "naive", "torch")
        for n in (24, 40)
        for causal in (False, True)
    }
    assert all(row.seconds > 0 and row.gflops > 0 for row in rows)
    assert all((row.peak_mib is None) == (row.method == "torch") for row in rows)
    assert "roofline: float32 matmul 128³ = " in text
    assert "n =    40: qkv/naive full " in text
    assert "qkv/torch causal " in text
    assert "qkv causal speedup " in text


def test_without_torch_it_says_so_and_compares_qkv_with_naive_numpy() -> None:
    out = io.StringIO()
    with mock.patch.dict(sys.modules, {"torch": None}):  # import torch now raises ImportError
        rows = bench.run_attention_benchmark([16], d=4, out=out, roofline_size=64)
    assert "torch not installed" in out.getvalue()
    assert {row.method for row in rows} == {"qkv", "naive"}
    assert "qkv/torch" not in out.getvalue()


@pytest.mark.parametrize(
    ("short_call", "rounds", "pause"), [(10.0, "SHORT_ROUNDS", 0.0), (0.0, "ROUNDS", 0.2)]
)
def test_short_calls_take_turns_in_more_rounds_without_pauses(
    monkeypatch: pytest.MonkeyPatch, short_call: float, rounds: str, pause: float
) -> None:
    monkeypatch.setattr(bench, "SHORT_CALL_SECONDS", short_call)  # every call is short, or none is
    monkeypatch.setattr(bench, "PAUSE_SECONDS", 0.2)
    bursts: list[tuple[str, float]] = []

    def burst(call: object, seconds: float, pause: float) -> list[float]:
        bursts.append((str(call), pause))
        return [1e-3]

    methods = {("a", False): lambda: None, ("b", False): lambda: None}
    with mock.patch.object(bench, "_timings", side_effect=burst):
        bench._measure(methods, n=4, flops=1.0)
    assert len(bursts) == 2 * getattr(bench, rounds)
    assert [name for name, _ in bursts[:4]] == [str(call) for call in methods.values()] * 2  # in turns
    assert {paused for _, paused in bursts} == {pause}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["attention", "--sizes", "256,x"],
            "--sizes and --heads must be positive whole numbers separated by",
        ),
        (["attention", "--sizes", "0"], "not --sizes '0' --d 64 --heads '1,8' --dtype 'float32,float64'."),
        (["attention", "--d", "-3"], "--d positive and --dtype float32, float64 or both, not --sizes '512,"),
        (["attention", "--heads", "0"], "--d 64 --heads '0' --dtype"),
        (["attention", "--heads", "1,,8"], "--heads '1,,8'"),
        (["attention", "--dtype", "float16"], "--dtype 'float16'."),
        (["matmul"], "invalid choice: 'matmul'"),
    ],
)
def test_bad_arguments_exit_with_a_sentence(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def profiled_functions() -> list[object]:
    return [
        getattr(module, name) for functions in bench_profile.PHASES.values() for module, name in functions
    ]


@pytest.mark.parametrize(("path", "causal"), [("plain", False), ("blocked", False), ("blocked", True)])
def test_a_profile_accounts_for_the_whole_call_and_puts_every_step_back(path: str, causal: bool) -> None:
    before = profiled_functions()
    profile = bench_profile.profile_attention(600, d=16, causal=causal, path=path, calls=2)
    assert profiled_functions() == before  # no timed copy is left behind
    assert set(profile.phases) == {*bench_profile.PHASES, bench_profile.REMAINDER}
    assert sum(profile.share(name) for name in profile.phases) == pytest.approx(1.0, abs=0.01)
    # Each path's own arithmetic steps were timed (so were reached through their names).
    for phase in (bench_profile.SCORES_GEMM, bench_profile.EXP, bench_profile.VALUES_GEMM):
        assert profile.phases[phase] > 0, phase
    # 600 × 600 scores: more than one tile; the blocked path's Python runs on the pool's threads from
    # its break-even on (MIN_THREADED_SCORES), the plain path's on one.
    pooled = path == "blocked" and blocked.MIN_THREADED_SCORES <= 600 * 600
    assert profile.threads == (blocked.worker_count() if pooled else 1)


@pytest.mark.parametrize("causal", [False, True])
def test_a_profile_of_a_head_in_one_tile_times_its_steps(causal: bool) -> None:
    # The one tile calls NumPy through names of its own, not the general path's step functions.
    assert blocked.fits_one_tile(16, 16)
    before = profiled_functions()
    profile = bench_profile.profile_attention(16, d=8, causal=causal, path="blocked", calls=3)
    assert profiled_functions() == before
    assert profile.threads == 1
    for phase in (
        bench_profile.SCORES_GEMM,
        bench_profile.EXP,
        bench_profile.VALUES_GEMM,
        bench_profile.ELEMENTWISE,
    ):
        assert profile.phases[phase] > 0, phase
    assert sum(profile.share(name) for name in profile.phases) == pytest.approx(1.0, abs=0.01)


def test_a_profile_of_an_unknown_path_is_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match=r"path must be 'plain' or 'blocked', not 'fused'\."):
        bench_profile.profile_attention(8, path="fused")


def test_profile_flag_prints_the_breakdown_for_both_paths(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["attention", "--sizes", "48", "--d", "8", "--profile"]) == 0
    text = capsys.readouterr().out
    assert "BLAS core type: " in text and "L2 cache per core: " in text
    assert "where the time goes" in text
    lines = [line.split() for line in text.splitlines() if line.split()[:1] == ["48"]]
    profile_rows = [line[:3] for line in lines if line[2] in ("plain", "blocked")]
    assert profile_rows == [["48", "no", "plain"], ["48", "no", "blocked"], ["48", "yes", "blocked"]]


def test_a_profile_of_pooled_blocks_sums_the_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocked, "MIN_THREADED_SCORES", 0)  # 600 × 600 on the pool
    profile = bench_profile.profile_attention(600, d=16, path="blocked", calls=2)
    assert profile.threads == blocked.worker_count()
    assert sum(profile.share(name) for name in profile.phases) == pytest.approx(1.0, abs=0.01)
    assert profile.phases[bench_profile.EXP] > 0


@pytest.mark.parametrize(("dtype", "heads"), [("float64", 1), ("float32", 3)])
def test_the_table_takes_a_dtype_and_a_batch_of_heads(dtype: str, heads: int) -> None:
    out = io.StringIO()
    rows = bench.run_attention_benchmark([24], d=8, out=out, roofline_size=64, dtype=dtype, heads=heads)
    text = out.getvalue()
    assert f"qkv attention benchmark: {dtype}, " in text
    assert ("one head" in text) == (heads == 1) and (f"a batch of {heads} heads" in text) == (heads > 1)
    assert "load average (1, 5, 15 min): " in text
    assert bench.cpu_model() in text
    assert {row.flops for row in rows} == {4.0 * 24 * 24 * 8 * heads}


def test_naive_attention_on_a_batch_matches_qkv() -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 10, 4)) for _ in range(3))
    for causal in (False, True):
        np.testing.assert_allclose(
            bench.naive_attention(q, k, v, causal=causal), attention(q, k, v, causal=causal)
        )


@pytest.mark.timeout(120)
def test_one_command_prints_every_cell_of_the_ratio_table(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch", reason="torch (the oracle extra) is not installed")
    assert bench.DEFAULT_SIZES == (512, 1024, 4096, 8192)
    assert (bench.DEFAULT_DTYPES, bench.DEFAULT_HEADS) == (("float32", "float64"), (1, 8))
    monkeypatch.setattr(bench, "DEFAULT_SIZES", (8, 16))  # the same command, on sizes quick to time
    seen: list[tuple[list[int], str, int]] = []
    original = bench.run_attention_benchmark

    def small(sizes: list[int], d: int, out: io.StringIO, roofline: int, dtype: str, heads: int) -> object:
        seen.append((list(sizes), dtype, heads))
        return original(sizes, 4, out, 32, dtype, heads)  # a small d and roofline

    monkeypatch.setattr(bench, "run_attention_benchmark", small)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert bench.main(["attention"]) == 0
    assert seen == [([8, 16], dtype, heads) for dtype in ("float32", "float64") for heads in (1, 8)]
    table = out.getvalue().split("qkv ÷ torch (")[1].splitlines()
    assert "load average (1, 5, 15 min) before " in table[1] and ", after " in table[1]
    assert table[2].split() == ["dtype", "heads", "n", "=", "8", "full/causal", "n", "=", "16", "full/causal"]
    rows = [line.split() for line in table[3:]]
    assert [row[:2] for row in rows] == [
        ["float32", "1"],
        ["float32", "8"],
        ["float64", "1"],
        ["float64", "8"],
    ]
    assert all(len(row) == 2 + 3 * 2 and row[3] == row[6] == "/" for row in rows)
    assert all(float(cell) > 0 for row in rows for cell in (row[2], row[4], row[5], row[7]))


def test_the_naive_version_is_left_out_where_its_scores_would_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "NAIVE_MAX_SCORE_BYTES", 8 * 8 * 8 * 2)  # two 8-heads of float64 scores
    out = io.StringIO()
    rows = bench.run_attention_benchmark([8, 16], d=4, out=out, roofline_size=32, dtype="float64", heads=2)
    assert {row.n for row in rows if row.method == "naive"} == {8}
    assert {row.n for row in rows if row.method == "qkv"} == {8, 16}
    assert "n =    16: " in out.getvalue()
    assert "n =     8: qkv/naive full " in out.getvalue() and "n =    16: qkv/naive" not in out.getvalue()


@pytest.mark.parametrize("forced", [None, "Haswell"])
def test_the_header_says_when_the_environment_chose_the_blas_kernels(
    forced: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if forced is None:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_CORETYPE", forced)
    out = io.StringIO()
    bench.run_attention_benchmark([8], d=4, out=out, roofline_size=32)
    blas_line = next(line for line in out.getvalue().splitlines() if line.startswith("BLAS core type: "))
    assert ("(forced by OPENBLAS_CORETYPE=Haswell)" in blas_line) == (forced is not None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_header_names_the_exponential_this_process_takes(dtype: str) -> None:
    out = io.StringIO()
    bench.run_attention_benchmark([8], d=4, out=out, roofline_size=32, dtype=dtype)
    line = next(line for line in out.getvalue().splitlines() if line.startswith("exponential ("))
    times = _hardware.exponential_times(np.dtype(dtype))
    chosen = "exp2, scores in bits" if _hardware.exp2_is_faster(np.dtype(dtype)) else "exp"
    assert line.startswith(f"exponential ({dtype}): {chosen} (")
    assert f"exp2 at {times.exp2 / times.exp:.2f} of exp's time" in line
