"""How fast qkv starts: the catalog load, and `qkv check` from process start to its first grading step.

Each figure is the median over fresh processes (nothing cached between them but the OS's file cache):

- import: `import qkv.lessons` (NumPy, the attention library, the engine);
- catalog load: `load_catalog()` after that import (targets: ≤ 0.1 s);
- check to grading: from spawning `qkv check solution.py` to the moment it calls the grader (≤ 0.2 s);
- check, whole: `qkv check` on the reference solution, wall time, sandbox included.

    python benchmarks/startup.py [--runs 7]

Python caches compiled modules in ``__pycache__``. Some machines switch that off for every process
(``PYTHONDONTWRITEBYTECODE=1``, as the development machines here do); an editable install then compiles
qkv's modules and the lesson files at every start (about 70 ms more here: 0.24 s to grading instead of
0.17). The figures are taken as a normal Python runs: this script lets the measured processes write the
cache, after one start that fills it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMED_IMPORT = """
import time
started = time.perf_counter()
from qkv.lessons import load_catalog
imported = time.perf_counter()
load_catalog()
print(imported - started, time.perf_counter() - imported)
"""

# Runs the real `qkv check` command, but the grader's first call prints the time and ends the process.
UNTIL_GRADING = """
import os, sys, time
from qkv.grading import grader

def first_step(self, *args, **kwargs):
    print(time.time(), flush=True)
    os._exit(0)

grader.Grader.grade = first_step
from qkv.cli import main
sys.argv = ["qkv", "check", sys.argv[1]]
main()
"""


def _python() -> str:
    return sys.executable


ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def catalog_times(runs: int) -> tuple[list[float], list[float]]:
    imports, loads = [], []
    for _ in range(runs):
        out = subprocess.run(
            [_python(), "-c", TIMED_IMPORT], capture_output=True, text=True, check=True, env=ENV
        ).stdout
        imported, loaded = (float(word) for word in out.split())
        imports.append(imported)
        loads.append(loaded)
    return imports, loads


def check_to_grading(solution: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.time()
        out = subprocess.run(
            [_python(), "-c", UNTIL_GRADING, str(solution)],
            capture_output=True,
            text=True,
            check=True,
            env=ENV,
        ).stdout
        times.append(float(out.strip()) - started)
    return times


def check_whole(solution: Path, runs: int) -> list[float]:
    qkv = str(Path(_python()).with_name("qkv"))
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([qkv, "check", str(solution)], capture_output=True, text=True, env=ENV)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"qkv check failed on the reference solution:\n{done.stdout}{done.stderr}")
    return times


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def reference_solution(folder: Path) -> Path:
    from qkv.lessons import load_catalog

    exercise = load_catalog().code_exercise("L4.1/functions").exercise
    assert exercise.solution is not None
    path = folder / "solution.py"
    path.write_text(exercise.solution, encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per figure (default 7)")
    runs = parser.parse_args().runs
    subprocess.run(
        [_python(), "-c", TIMED_IMPORT], capture_output=True, env=ENV, check=True
    )  # fills the cache
    machine = f"{cpu_model()}, {os.cpu_count()} cores"
    print(f"CPU: {machine}; Python {platform.python_version()}; with the bytecode cache")
    imports, loads = catalog_times(runs)
    with tempfile.TemporaryDirectory() as folder:
        solution = reference_solution(Path(folder))
        to_grading = check_to_grading(solution, runs)
        whole = check_whole(solution, runs)
    for label, values, target in (
        ("import qkv.lessons", imports, None),
        ("load_catalog()", loads, 0.1),
        ("qkv check, start to grading", to_grading, 0.2),
        ("qkv check, whole", whole, None),
    ):
        median = statistics.median(values)
        goal = f"  (target ≤ {target:.1f} s: {'met' if median <= target else 'missed'})" if target else ""
        print(f"{label:<30} median {median:6.3f} s  min {min(values):6.3f} s{goal}")


if __name__ == "__main__":
    main()
