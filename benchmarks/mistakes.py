"""How well the lessons name mistakes: every lesson's corpus of wrong programs, graded for real.

Run with ``.venv/bin/python benchmarks/mistakes.py`` (``--seeds 7 31337`` to grade each program once per
seed). Each wrong program under ``tests/lesson_corpora/<lesson>/<exercise>/wrong/`` (or where the exercise's
``graded-in.txt`` points) names the hint it must get on its ``# expected hint: NAME`` line. Per exercise
this prints how many wrong programs there are, how many **pass** (target: none) and the share whose
**first** message, the hint of the first failed test in the order the page lists them, names the tagged
mistake (target: at least 90 %): holds its sentence, alone or in a sentence that names two mistakes
(two at once, or two that the test's inputs cannot tell apart). It exits 1 when a target is missed.
Nothing here names a lesson: the exercises come from the catalog.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from qkv.grading import Grader
from qkv.grading import hints as grading_hints
from qkv.lessons import load_catalog
from qkv.lessons.pyfiles import import_lesson_file

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "tests" / "lesson_corpora"
NAMED_TARGET = 0.9


def wrong_programs(lesson_id: str, exercise_id: str) -> list[Path]:
    folder = CORPORA / lesson_id / exercise_id
    elsewhere = folder / "graded-in.txt"
    if elsewhere.is_file():
        folder = ROOT / "tests" / elsewhere.read_text().split()[0]
    return sorted((folder / "wrong").glob("*.py"))


def tagged_hint(path: Path, grading: Any) -> str:
    match = re.search(r"^# expected hint: (\w+)", path.read_text(), re.MULTILINE)
    if match is None:
        raise SystemExit(f"{path} does not say which hint it expects")
    found = getattr(grading, match.group(1), None) or getattr(grading_hints, match.group(1), None)
    if not isinstance(found, str):
        raise SystemExit(f"{path}: no hint called {match.group(1)}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7])
    args = parser.parse_args()
    missed = False
    print(f"{'exercise':<22} {'programs':>8} {'pass':>5} {'named first':>12}   not named first")
    with Grader() as grader:
        for entry in load_catalog().code_exercises():
            paths = wrong_programs(entry.lesson.id, entry.exercise.id)
            if not paths:
                continue
            grading, problems = import_lesson_file(entry.lesson.source.parent / "grading.py")
            if grading is None:
                raise SystemExit(f"{entry.id}: {problems}")
            graded = passed = named = 0
            unnamed: list[str] = []
            for path in paths:
                hint = tagged_hint(path, grading)
                for seed in args.seeds:
                    result = grader.grade(path.read_text(), entry.suite, seed=seed)
                    graded += 1
                    failing = [test for test in result.tests if test.status not in ("pass", "not_run")]
                    if result.status == "pass":
                        passed += 1
                    elif failing and hint in (failing[0].hint or ""):  # alone, or in a pair's sentence
                        named += 1
                    else:
                        unnamed.append(path.stem)
            share = named / graded
            missed |= passed > 0 or share < NAMED_TARGET
            print(
                f"{entry.id:<22} {graded:>8} {passed:>5} {share:>11.0%}   {', '.join(sorted(set(unnamed)))}"
            )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
