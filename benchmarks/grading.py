"""Grading speed: the cost of one grading by phase, latency percentiles, and throughput.

Run with ``.venv/bin/python benchmarks/grading.py`` (add ``--quick`` for fewer rounds, ``--phases`` for the
phase table alone). It prints figures and asserts nothing: the targets are read off the output, on a
quiet machine, because timings drift with whatever else the machine is doing.

The phase table grades every lesson's reference solution and its starter code (a failing program: the
stub returns None) one after another, each in a new sandbox, and prints the median wall-clock and CPU
milliseconds of each phase: sandbox start (bubblewrap and the interpreter; or, forked from the zygote,
the fork and the new namespaces), imports (the standard library and NumPy; nothing when forked: the
zygote imported them once), set-up (inputs and expected values drawn by the grader, decoded by the
harness), tests (the learner's file loaded and its functions called) and verdict (the report judged, the
sandbox killed).
CPU is the grader thread's plus the sandbox's cgroup's (cgroup v1 ``cpuacct`` or v2 ``cpu.stat``); the
split between phases uses timestamps the harness reports, which are advisory and never reach a verdict.
Targets: median CPU per grading ≤ 120 ms on every lesson; a whole ``qkv check`` ≤ 0.4 s wall. The table
is printed twice: sandboxes forked from the zygote (the default), then fresh interpreters (the fallback).
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
from qkv.grading.timing import PHASES, Phases
from qkv.lessons import load_catalog

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = (ROOT / "tests" / "grading" / "correct" / "reference_style.py").read_text()
SUITE = load_catalog().code_exercise("L4.1/functions").suite


def median_ms(values: list[float | None]) -> str:
    known = [value for value in values if value is not None]
    return f"{1000 * statistics.median(known):6.1f}" if known else "     ?"


def phase_table(rounds: int, zygote: bool) -> None:
    """Per exercise and program: median wall and CPU milliseconds of each phase, and the CPU in all."""
    catalog = load_catalog()
    header = " ".join(f"{name:>15s}" for name in PHASES)
    worst: float | None = 0.0
    with Grader(zygote=zygote) as grader:
        print(
            f"\nphases, median of {rounds} gradings each, wall / CPU ms (new sandbox each, one at a time; "
            f"sandboxes start as {grader.start_mode.value})"
        )
        print(f"{'exercise':24s} {'program':9s} {header} {'CPU in all':>11s}")
        for exercise in catalog.code_exercises():
            suite = exercise.suite
            programs = {"reference": exercise.exercise.solution, "failing": exercise.exercise.starter_code}
            for label, program in programs.items():
                if program is None or suite is None:
                    continue
                phases: list[Phases] = []
                for seed in range(rounds):
                    result = grader.grade(program, suite, seed=seed)
                    if (result.status == "pass") != (label == "reference"):
                        raise SystemExit(
                            f"{exercise.id}: the {label} program got {result.status}: {result.message}"
                        )
                    if result.phases is not None:
                        phases.append(result.phases)
                cells = " ".join(
                    f"{median_ms([p.wall[name] for p in phases])} /{median_ms([p.cpu[name] for p in phases])}"
                    for name in PHASES
                )
                totals = [p.total_cpu for p in phases]
                total = median_ms(totals)
                known = [value for value in totals if value is not None]
                if worst is not None:
                    worst = max(worst, statistics.median(known)) if known else None
                print(f"{exercise.id:24s} {label:9s} {cells} {total:>11s}")
    shown = "unknown (no cgroup counts the sandbox's CPU here)" if worst is None else f"{1000 * worst:.1f} ms"
    print(f"highest median CPU per grading: {shown} (target ≤ 120 ms on every lesson)")


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
    """A whole `qkv check` of L4.1's reference solution, each in a fresh process.

    One run first, untimed: it builds the sandbox's staged view of the runtime if this machine has none
    yet (then shared by every later grader process, like the OS's file cache).
    """
    solution = ROOT / "tests" / "grading" / "correct" / "reference_style.py"
    qkv = Path(sys.executable).with_name("qkv")
    command = [str(qkv)] if qkv.exists() else [sys.executable, "-m", "qkv"]
    samples = []
    for seed in range(-1, rounds):
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "check", str(solution), "--seed", str(abs(seed))], capture_output=True
        )
        if seed >= 0:
            samples.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"qkv check failed: {done.stdout.decode()[-500:]} {done.stderr.decode()[-500:]}")
    print(f"cold `qkv check` (whole command)           {percentiles(samples)}   (target p50 ≤ 0.4 s)")


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
    parser.add_argument("--phases", action="store_true", help="only the phase table and the qkv check time")
    args = parser.parse_args()
    rounds = 10 if args.quick else 40
    print(f"qkv grading benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for zygote in (True, False):  # forked from the zygote (the default), then a fresh interpreter each
        phase_table(5 if args.quick else 15, zygote)
    cold_command(rounds)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.phases:
        return
    cold_in_process(rounds)
    warm(rounds)
    for clients in (2, 8, 32):
        concurrent(clients, per_client=2 if args.quick else 4)


if __name__ == "__main__":
    main()
