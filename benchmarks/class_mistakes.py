"""What a class's mistakes cost: signing each failing grading, and listing the groups of 100,000 programs.

Run with ``.venv/bin/python benchmarks/class_mistakes.py`` (``--rounds N`` gradings per program, 5 by
default; ``--programs N`` stored programs, 100,000 by default; ``--database-url URL`` to list from a
PostgreSQL database instead of a SQLite file). It prints figures and asserts nothing: the targets are read
off the output on a quiet machine.

- **signing**: every wrong program of the lessons' corpora, graded for real. Two costs are printed per
  failing grading: the signing step itself (the outcomes on the fixed tests and probes rounded and
  digested, timed inside the grader), and the probes' calls, which the sandbox runs after the tests
  (measured here, in this process: the learner's functions on the probes' inputs, their results encoded
  as the harness does; a paired timing of whole gradings with and without probes drowns in the sandbox's
  own jitter). Target: their sum at most 5 ms, p90.
- **listing**: ``--programs`` failing programs of 2,000 learners in one course (three lessons, three
  functions each, a few hundred behaviours, most learners in the commonest), then the course's groups read
  by the store, by ``qkv mistakes list --json`` and by the page ``/instructor/mistakes``. Target: each at
  most 300 ms.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from qkv.grading import Grader
from qkv.grading import grader as grader_module
from qkv.grading.behaviour import probe_cases
from qkv.grading.sandbox.harness import encode
from qkv.lessons import load_catalog

CONTENT = Path(__file__).resolve().parent.parent / "src" / "qkv" / "lessons" / "content"


def p90(values: list[float]) -> float:
    return float(np.percentile(values, 90)) if values else float("nan")


@contextmanager
def timed_signing(spent: list[float], cpu: list[float]) -> Iterator[None]:
    """Time every call of the grader's signing step into ``spent`` (wall) and ``cpu`` (its thread's CPU)."""
    original = grader_module._sign

    def sign(*args: Any) -> dict[str, str]:
        started, thread_started = time.perf_counter(), time.thread_time()
        try:
            return original(*args)
        finally:
            spent.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - thread_started)

    grader_module._sign = sign  # type: ignore[assignment]
    try:
        yield
    finally:
        grader_module._sign = original  # type: ignore[assignment]


def wrong_programs() -> list[tuple[str, Any, str]]:
    """(name, suite, program) for every wrong corpus program whose exercise the catalog has."""
    catalog = load_catalog()
    found = []
    for path in sorted(CONTENT.glob("*/*/corpus/*/wrong/*.py")):  # a lesson folder's corpus
        lesson, exercise = path.parts[-5].split("-")[0], path.parts[-3]
        try:
            suite = catalog.code_exercise(f"{lesson}/{exercise}").suite
        except Exception:
            continue
        found.append((f"{lesson}/{exercise}/{path.name}", suite, path.read_text()))
    return found


def probe_calls_ms(suite: Any, program: str) -> float:
    """The probes' share of the sandbox's work, measured here: the learner's functions called on the
    probes' inputs and their results encoded as the harness encodes them (the median of 5), in ms."""
    namespace: dict[str, Any] = {"__name__": "solution"}
    exec(compile(program, "solution.py", "exec"), namespace)  # a corpus program of this repository
    probes = probe_cases(suite)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        for case in probes:
            function = namespace.get(case.function)
            if not callable(function):
                continue
            with suppress(Exception):
                encode(function(*copy.deepcopy(case.args)))
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def signing(rounds: int) -> None:
    programs = wrong_programs()
    spent: list[float] = []
    cpu: list[float] = []
    calls: list[float] = []
    worst: list[tuple[float, str]] = []
    with Grader(warm_spares=2) as grader:
        for name, suite, program in programs:
            with timed_signing(spent, cpu):
                for seed in range(rounds):
                    grader.grade(program, suite, seed=seed)
            calls.append(probe_calls_ms(suite, program))
            worst.append((calls[-1], name))
    steps = [s * 1000 for s in spent]
    cpu_ms = [s * 1000 for s in cpu]
    print(f"signing: {len(programs)} wrong programs, {rounds} gradings each")
    print(f"  signing step, wall: median {statistics.median(steps):.3f} ms, p90 {p90(steps):.3f} ms")
    print(f"  signing step, CPU:  median {statistics.median(cpu_ms):.3f} ms, p90 {p90(cpu_ms):.3f} ms")
    print(f"  the probes' calls: median {statistics.median(calls):.3f} ms, p90 {p90(calls):.3f} ms")
    print(
        f"  together, p90:   {p90(steps) + p90(calls):.2f} ms with the step's wall time, "
        f"{p90(cpu_ms) + p90(calls):.2f} ms with its CPU time (target: at most 5 ms)"
    )
    print(
        "  costliest probes: "
        + ", ".join(f"{name} {ms:.1f} ms" for ms, name in sorted(worst, reverse=True)[:3])
    )


def seed_class(url: str, programs: int) -> tuple[str, str]:
    """``programs`` failing programs of 2,000 learners in one course; its id and an instructor's token."""
    from qkv.store import MembershipSource, StaffRole, Store
    from qkv.store.work.mistake_signatures import record_signatures_in

    rng = np.random.default_rng(7)
    source = "import numpy as np\n\n" + "def f(x):\n    return x * 2  # a learner's program\n" * 12
    with closing(Store(url)) as store:
        course = store.courses.create("Benchmark class")
        learners = [f"{index:036d}" for index in range(2000)]
        behaviours = rng.zipf(1.6, size=programs) % 300
        with store.database.write() as conn:
            for learner in learners:
                store.database.ensure_learner(conn, learner)
            for index, behaviour in enumerate(behaviours):
                lesson, function = f"L9.{behaviour % 3 + 1}", f"f{behaviour % 3}"
                result = {
                    "status": "fail",
                    "signatures": {function: f"{int(behaviour):032x}"},
                    "tests": [
                        {"function": function, "status": "fail", "message": f"Expected 2, got {behaviour}."}
                    ],
                }
                record_signatures_in(conn, learners[index % 2000], lesson, "code", source, result)
        for learner in learners:
            store.courses.enrol(course.id, learner, MembershipSource.ROSTER)
        instructor, token = store.instructors.add("Benchmark")
        store.courses.set_staff(course.id, instructor.id, StaffRole.INSTRUCTOR)
        return course.id, token


def best_ms(call: Callable[[], object], rounds: int = 5) -> tuple[float, float]:
    """The best and the median time of ``call``, in milliseconds."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return min(times), statistics.median(times)


def listing(url: str, programs: int) -> None:
    from click.testing import CliRunner
    from fastapi.testclient import TestClient

    from qkv.cli import build
    from qkv.store import LearnerScope, Store
    from qkv.web.app import create_app
    from qkv.web.settings import Settings

    started = time.perf_counter()
    course, token = seed_class(url, programs)
    print(f"listing: {programs:,} failing programs stored in {time.perf_counter() - started:.1f} s")
    with closing(Store(url)) as store:
        best, median = best_ms(lambda: store.mistakes.groups(LearnerScope(course), course))
        print(f"  store, the course's groups: best {best:.0f} ms, median {median:.0f} ms")
    cli = build()
    args = ["mistakes", "list", "--course", course, "--json", "--database-url", url]
    best, median = best_ms(lambda: CliRunner().invoke(cli, args))  # type: ignore[arg-type]
    print(f"  qkv mistakes list --json (in-process): best {best:.0f} ms, median {median:.0f} ms")
    app = create_app(Settings(database_url=url, secret_key="benchmark-secret-key", warm_spares=0))
    with TestClient(app) as client:
        client.post("/instructor/sign-in", data={"token": token})
        best, median = best_ms(lambda: client.get("/instructor/mistakes", headers={"accept": "text/html"}))
        print(f"  the page /instructor/mistakes: best {best:.0f} ms, median {median:.0f} ms (target: 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--programs", type=int, default=100_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--skip-signing", action="store_true")
    parser.add_argument("--skip-listing", action="store_true")
    options = parser.parse_args()
    if not options.skip_signing:
        signing(options.rounds)
    if options.skip_listing:
        return
    with tempfile.TemporaryDirectory() as folder:
        listing(options.database_url or f"sqlite:///{Path(folder) / 'class.sqlite3'}", options.programs)


if __name__ == "__main__":
    main()
