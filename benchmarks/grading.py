"""Grading speed: cold and warm latency percentiles, and throughput under concurrent submissions.

Run with ``.venv/bin/python benchmarks/grading.py`` (add ``--quick`` for fewer rounds). It prints figures
and asserts nothing: the targets (≤ 100 ms p50 warm, ≤ 1.5 s for a cold ``qkv check``) are read off the
output, on a quiet machine, because timings drift with whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from qkv.grading import Grader
from qkv.lessons import load_catalog

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "tests" / "grading" / "correct" / "reference_style.py").read_text()
SUITE = load_catalog().code_exercise("L4.1/functions").suite


def percentiles(samples_s: list[float]) -> str:
    ms = sorted(1000 * s for s in samples_s)
    cuts = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else ms * 99
    return f"p50 {cuts[49]:7.1f} ms   p95 {cuts[94]:7.1f} ms   p99 {cuts[98]:7.1f} ms   (n = {len(ms)})"


def timed_grade(grader: Grader, seed: int) -> float:
    started = time.perf_counter()
    result = grader.grade(SOLUTION, SUITE, seed=seed)
    elapsed = time.perf_counter() - started
    if result.status != "pass":
        raise SystemExit(f"The reference solution did not pass: {result.message}")
    return elapsed


def cold_in_process(rounds: int) -> None:
    with Grader() as grader:
        samples = [timed_grade(grader, seed) for seed in range(rounds)]
    print(f"cold grading (new sandbox each time)       {percentiles(samples)}")


def cold_command(rounds: int) -> None:
    solution = ROOT / "tests" / "grading" / "correct" / "reference_style.py"
    qkv = Path(sys.executable).with_name("qkv")
    command = [str(qkv)] if qkv.exists() else [sys.executable, "-m", "qkv"]
    samples = []
    for seed in range(rounds):
        started = time.perf_counter()
        done = subprocess.run([*command, "check", str(solution), "--seed", str(seed)], capture_output=True)
        samples.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"qkv check failed: {done.stdout.decode()[-500:]} {done.stderr.decode()[-500:]}")
    print(f"cold `qkv check` (whole command)           {percentiles(samples)}")


def warm(rounds: int) -> None:
    with Grader(warm_spares=2) as grader:
        assert grader.spares is not None
        samples = []
        for seed in range(rounds):
            grader.spares.wait_until_full(30)  # a spare is waiting, as on a server between submissions
            samples.append(timed_grade(grader, seed))
    print(f"warm grading (a spare was waiting)          {percentiles(samples)}")


def concurrent(clients: int, per_client: int) -> None:
    with Grader(warm_spares=min(clients, 8)) as grader:
        assert grader.spares is not None
        grader.spares.wait_until_full(60)
        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            samples = list(pool.map(lambda seed: timed_grade(grader, seed), range(clients * per_client)))
        wall = time.perf_counter() - started
    rate = len(samples) / wall
    print(f"{clients:2d} concurrent: {rate:6.1f} gradings/s   {percentiles(samples)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a rough figure in a few seconds)")
    args = parser.parse_args()
    rounds = 10 if args.quick else 40
    print(f"qkv grading benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    cold_in_process(rounds)
    cold_command(max(3, rounds // 4))
    warm(rounds)
    for clients in (2, 8, 32):
        concurrent(clients, per_client=2 if args.quick else 4)


if __name__ == "__main__":
    main()
