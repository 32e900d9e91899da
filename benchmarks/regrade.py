"""A live learner's grading latency while ``qkv regrade`` grades 1,000 stored programs (issue 46).

The script stores ``--programs`` programs for L4.1/functions in a fresh SQLite file (half the reference
solution, half a wrong program, each from a learner of its own), with no suite version, so that all are
"graded with an older version". It then grades the reference solution ``--live`` times, one after the
other, in a grader at normal priority (a live learner) and records each latency: first with nothing else
running, then while a real ``qkv regrade`` (another process, its sandboxes at background priority, each
program after a gap in the live gradings) works through the stored programs. It prints p50 and p99 of both
runs, their ratio and how many programs the regrade graded meanwhile (the issue's target: p99
during the regrade at most 1.3 times p99 without). Nothing is asserted: the figures are for the reader.

Usage::

    .venv/bin/python benchmarks/regrade.py [--programs 1000] [--live 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qkv.cli.regrade import GAP_WAIT_S
from qkv.grading import Grader
from qkv.lessons import load_catalog
from qkv.lessons.suite_versions import suite_version
from qkv.store import Store

WRONG = "def project_qkv(X, Wq, Wk, Wv):\n    return X, X, X\n"


def store_programs(url: str, count: int) -> str:
    """Store ``count`` graded-looking programs (no suite version); the reference solution's text."""
    right = load_catalog().code_exercise("L4.1/functions").exercise.solution or ""
    store = Store(url)
    try:
        for n in range(count):
            source = right if n % 2 == 0 else WRONG
            result = {"status": "pass" if n % 2 == 0 else "fail", "tests": [], "seed": n}
            store.code.record(f"{n:036d}", "L4.1", "functions", source, result)
    finally:
        store.close()
    return right


def still_older(store: Store) -> int:
    """How many stored programs are still graded with an older version of L4.1 (not yet regraded)."""
    return store.regrades.older_counts({"L4.1": suite_version(load_catalog().lesson("L4.1"))})["L4.1"]


def latencies(grader: Grader, source: str, runs: int) -> list[float]:
    """Seconds per grading of ``source``, ``runs`` times one after the other."""
    suite = load_catalog().code_exercise("L4.1/functions").suite
    found = []
    for _ in range(runs):
        start = time.perf_counter()
        grader.grade(source, suite)
        found.append(time.perf_counter() - start)
    return found


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--live", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'school.sqlite3'}"
        right = store_programs(url, args.programs)
        with Grader(warm_spares=1) as grader:
            latencies(grader, right, 3)  # warm up
            alone = latencies(grader, right, args.live)
            command = [sys.executable, "-m", "qkv", "regrade", "--database-url", url]
            regrade = subprocess.Popen(command, stdout=subprocess.DEVNULL)
            store = Store(url)
            try:
                starting: list[float] = []  # until the regrade has graded its first program
                while still_older(store) == args.programs and regrade.poll() is None:
                    starting += latencies(grader, right, 1)
                during = latencies(grader, right, args.live)
                still_running = regrade.poll() is None
                regraded = args.programs - still_older(store)
            finally:
                store.close()
                regrade.wait()
    windows = (("alone", alone), ("while the regrade starts", starting), ("during the regrade", during))
    for name, values in windows:
        print(
            f"{name}: p50 {statistics.median(values) * 1000:.0f} ms, "
            f"p99 {percentile(values, 0.99) * 1000:.0f} ms over {len(values)} gradings"
        )
    print(
        f"the regrade graded {regraded} of {args.programs} programs during the last window "
        f"({regraded / sum(during):.1f} a second; before each it waits up to {GAP_WAIT_S:g} s for a gap)"
    )
    both = starting + during
    together = percentile(both, 0.99) / percentile(alone, 0.99)
    print(f"p99 while it starts and during, together / p99 alone: {together:.2f}")
    ratio = percentile(during, 0.99) / percentile(alone, 0.99)
    print(f"p99 during / p99 alone: {ratio:.2f} (target: at most 1.3)")
    if not still_running:
        print("The regrade ended before the live gradings did: raise --programs for a fair figure.")


if __name__ == "__main__":
    main()
