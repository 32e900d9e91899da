"""Reading typed answers: how long the hostile and the longest allowed answers take to read or refuse.

Run with ``.venv/bin/python benchmarks/answers.py`` (add ``--rounds N``, 200 by default). It prints figures
and asserts nothing: the target (every answer below read or refused in under 50 ms, p99) is read off
the output, on a quiet machine, because timings drift with whatever else the machine is doing. The tests
(tests/lessons/test_lessons_answers.py) check only what is answered.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable

from qkv.lessons.answers import MAX_ANSWER_CHARS, AnswerFormatError, parse_letter, parse_numbers

LETTERS = {"Q": ["query", "queries"], "K": ["key", "keys"], "V": ["value", "values"]}

# name -> the call to time; each either returns or raises AnswerFormatError.
CASES: dict[str, Callable[[], object]] = {
    "10,000 chars of '1, '": lambda: parse_numbers("1, " * 3334),
    "10,000 opening brackets": lambda: parse_numbers("[" * 10_000),
    "a 10,000-digit number": lambda: parse_numbers("9" * 10_000),
    "1e followed by 9,998 nines": lambda: parse_numbers("1e" + "9" * 9_998),
    "10,000 chars for a letter": lambda: parse_letter("v" * 10_000, LETTERS),
    "longest answer, huge exponent": lambda: parse_numbers("1e" + "9" * (MAX_ANSWER_CHARS - 2)),
    "longest answer, tiny exponent": lambda: parse_numbers("1e-" + "9" * (MAX_ANSWER_CHARS - 3)),
    "an ordinary answer [3, 2]": lambda: parse_numbers("[3, 2]"),
}


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    with contextlib.suppress(AnswerFormatError):
        call()
    return time.perf_counter() - started


def percentiles(samples_s: list[float]) -> str:
    us = sorted(1e6 * s for s in samples_s)
    cuts = statistics.quantiles(us, n=100, method="inclusive") if len(us) > 1 else us * 99
    return f"p50 {cuts[49]:9.1f} µs   p99 {cuts[98]:9.1f} µs   max {us[-1]:9.1f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="timings per case (default 200)")
    args = parser.parse_args()
    print(f"qkv answer-reading benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"target: p99 under 50 ms for every case; {args.rounds} rounds each")
    for name, call in CASES.items():
        timed(call)  # warm up (imports, regex compilation)
        print(f"{name:32s} {percentiles([timed(call) for _ in range(args.rounds)])}")


if __name__ == "__main__":
    main()
