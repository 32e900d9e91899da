"""How fast qkv starts: the catalog load, and `qkv check` from process start to its sandbox, and whole.

Each figure is the median (p50) over fresh processes (nothing shared between them but the OS's file cache
and the sandbox's staged view of the runtime, which the first grader process on a machine builds):

- import: `import qkv.lessons` (NumPy, the attention library, the engine);
- catalog load: `load_catalog()` after that import (target: ≤ 0.1 s);
- check, own start: from spawning `qkv check solution.py` to the moment it has found the exercise and
  waits for its sandbox, which it started first and which starts meanwhile on another core (≤ 0.2 s);
- check, whole: `qkv check` on L4.1's reference solution, wall time, sandbox included (≤ 0.4 s), and
  the CPU time of the command and its sandbox together (which a busy machine inflates less than wall);
- check, usage error: `qkv check` naming an exercise that does not exist (its sandbox, already started,
  is stopped before it exits);
- check, step by step: when the grader was created (its sandbox starting), when the command asked for the
  sandbox, when it was ready, graded, closed, and when the process ended.

On a machine others are using, ``--when-idle`` starts each timed process only after a second in which
the CPUs were at least 95 % idle.

    python benchmarks/startup.py [--runs 9] [--when-idle]

Python caches compiled modules in ``__pycache__``. Some machines switch writing it off for every process
(``PYTHONDONTWRITEBYTECODE=1``, as CI and the development machines here do): an editable install would
then compile qkv's modules and the lesson files at every start, so ``make`` byte-compiles ``src/`` when it
installs (Python still reads the cache with the variable set). The figures are taken as a normal Python
runs: this script lets the measured processes write the cache, after one start that fills it.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import resource
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

# Runs the real `qkv check` command, but prints the time when it has found the exercise and asks for the
# sandbox it started first; it then stops (its sandbox is stopped and its cgroups removed as on any exit).
UNTIL_SANDBOX = """
import sys, time
from qkv.grading.sandbox import pool

def asked(self, *args, **kwargs):
    print(time.time(), flush=True)
    raise SystemExit(0)

pool.SparePool.stop_refilling = asked
from qkv.cli import main
sys.argv = ["qkv", "check", sys.argv[1]]
main()
"""


# Runs the real `qkv check` command and prints, for each step, the seconds since the given start time:
# the grader created (its sandbox starting), the exercise found and the sandbox asked for, the sandbox
# ready, the grading done, the grader closed, the exit.
STEPS = """
import atexit, sys, time
started = float(sys.argv.pop(1))
marks = []
def mark(step):
    marks.append((step, time.time() - started))
from qkv.grading import grader
from qkv.grading.sandbox import pool
def wrap(owner, name, before=None, after=None):
    original = getattr(owner, name)
    def wrapped(*args, **kwargs):
        if before:
            mark(before)
        result = original(*args, **kwargs)
        if after:
            mark(after)
        return result
    setattr(owner, name, wrapped)
wrap(grader.Grader, "__init__", after="grader created")
wrap(pool.SparePool, "stop_refilling", before="sandbox asked for", after="sandbox ready")
wrap(grader.Grader, "grade", after="graded")
wrap(grader.Grader, "close", after="grader closed")
atexit.register(lambda: print(repr(marks + [("exit handlers", time.time() - started)]), file=sys.stderr))
from qkv.cli import main
sys.argv = ["qkv", "check", *sys.argv[1:]]
main()
"""
IDLE = {"waited": 0, "gave up": 0}


def wait_until_idle(enabled: bool, timeout_s: float = 60.0) -> None:
    """With --when-idle: return after a second in which the CPUs were at least 95 % idle."""
    if not enabled:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        before = [int(field) for field in Path("/proc/stat").read_text().split()[1:9]]
        time.sleep(1.0)
        after = [int(field) for field in Path("/proc/stat").read_text().split()[1:9]]
        spent = [b - a for a, b in zip(before, after, strict=True)]
        if spent[3] >= 0.95 * sum(spent):
            return
        IDLE["waited"] += 1
    IDLE["gave up"] += 1


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


def check_own_start(solution: Path, runs: int, idle: bool) -> list[float]:
    times = []
    for _ in range(runs):
        wait_until_idle(idle)
        started = time.time()
        out = subprocess.run(
            [_python(), "-c", UNTIL_SANDBOX, str(solution)],
            capture_output=True,
            text=True,
            check=True,
            env=ENV,
        ).stdout
        times.append(float(out.strip()) - started)
    return times


CPU: list[float] = []  # CPU seconds of each whole `qkv check` and everything it started (its sandbox)


def check_whole(solution: Path, runs: int, *extra: str, status: int = 0, idle: bool = False) -> list[float]:
    qkv = str(Path(_python()).with_name("qkv"))
    times = []
    for _ in range(runs):
        wait_until_idle(idle)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([qkv, "check", str(solution), *extra], capture_output=True, text=True, env=ENV)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != status:
            raise SystemExit(
                f"qkv check {' '.join(extra)} ended with {done.returncode}:\n{done.stdout}{done.stderr}"
            )
    return times


def check_steps(solution: Path, runs: int, idle: bool) -> dict[str, list[float]]:
    steps: dict[str, list[float]] = {}
    for _ in range(runs):
        wait_until_idle(idle)
        started = time.time()
        done = subprocess.run(
            [_python(), "-c", STEPS, str(started), str(solution)], capture_output=True, text=True, env=ENV
        )
        ended = time.time() - started
        if done.returncode != 0:
            raise SystemExit(f"qkv check failed:\n{done.stdout}{done.stderr}")
        for step, at in [*ast.literal_eval(done.stderr.strip().splitlines()[-1]), ("ended", ended)]:
            steps.setdefault(step, []).append(at)
    return steps


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
    parser.add_argument("--runs", type=int, default=9, help="fresh processes per figure (default 9)")
    parser.add_argument(
        "--when-idle",
        action="store_true",
        help="start each timed process only after a second in which the CPUs were ≥ 95 %% idle "
        "(on a machine others share; up to a minute's wait each)",
    )
    args = parser.parse_args()
    runs, idle = args.runs, args.when_idle
    subprocess.run(
        [_python(), "-c", TIMED_IMPORT], capture_output=True, env=ENV, check=True
    )  # fills the cache
    machine = f"{cpu_model()}, {os.cpu_count()} cores"
    print(f"CPU: {machine}; Python {platform.python_version()}; with the bytecode cache")
    print(f"load average at the start: {os.getloadavg()[0]:.2f} (1 min)")
    imports, loads = catalog_times(runs)
    with tempfile.TemporaryDirectory() as folder:
        solution = reference_solution(Path(folder))
        check_whole(solution, 1)  # builds the sandbox's staged view, if this machine has none yet
        own_start = check_own_start(solution, runs, idle)
        CPU.clear()
        whole = check_whole(solution, runs, idle=idle)
        whole_cpu = list(CPU)
        usage_error = check_whole(solution, runs, "--exercise", "L0.0/none", status=2, idle=idle)
        steps = check_steps(solution, runs, idle)
    for label, values, target in (
        ("import qkv.lessons", imports, None),
        ("load_catalog()", loads, 0.1),
        ("qkv check, own start", own_start, 0.2),
        ("qkv check, whole", whole, 0.4),
        ("qkv check, usage error", usage_error, None),
    ):
        median = statistics.median(values)
        goal = f"  (target ≤ {target:.1f} s: {'met' if median <= target else 'missed'})" if target else ""
        print(f"{label:<30} median {median:6.3f} s  min {min(values):6.3f} s{goal}")
    print(
        f"{'qkv check, whole, CPU':<30} median {statistics.median(whole_cpu):6.3f} s  "
        f"min {min(whole_cpu):6.3f} s  (the command and its sandbox, all cores)"
    )
    print("qkv check, step by step (seconds since it was spawned):")
    for step, values in steps.items():
        print(f"  {step:<28} median {statistics.median(values):6.3f} s  min {min(values):6.3f} s")
    if idle:
        print(f"waited {IDLE['waited']} s for idle CPUs; gave up waiting {IDLE['gave up']} times")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
