"""A seeded class on the test chapter T1 (tests/sample_lessons): four learners, known numbers.

Answers are checked by the lesson itself (``lesson.check``), so the stored messages and named-mistake
ids are the real ones; the programs' result documents (version 2) are written out by hand.

On T1.1, exercise ``area`` (the page's rectangle is 3 by 4: area 12, perimeter 14, w + h = 7):

- Ann: 14 (named: perimeter), 7 (named: half_perimeter), 12: solved in 3 attempts;
- Ben: abc (unreadable, no attempt), 12: solved in 1 attempt;
- Cy:  13, " 13 " (unmatched, twice), abc (unreadable): not solved;
- Dee: in variant 5: 999 (unmatched), then the right area: solved in 2 attempts.

Exercise ``shapes`` (code): Ann fails (area tests with the perimeter hint), then passes; Ben's first
program does not load (error), his second fails both perimeter tests with the half-way-round hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qkv.lessons import load_catalog

SAMPLE = Path(__file__).parents[1] / "sample_lessons" / "T1"
LESSON_ID = "T1.1"

ANN = "00000000-0000-4000-8000-00000000000a"
BEN = "00000000-0000-4000-8000-00000000000b"
CY = "00000000-0000-4000-8000-00000000000c"
DEE = "00000000-0000-4000-8000-00000000000d"
FORMULA_NAME = '=HYPERLINK("http://example.invalid","x")'

TESTS = [
    ("area of a 3 by 4 rectangle", "area"),
    ("area of a random rectangle", "area"),
    ("area raises ValueError for a negative side", "area"),
    ("perimeter of a random rectangle", "perimeter"),
    ("perimeter with fractional sides", "perimeter"),
]
AREA_HINT = "That is the perimeter, 2·(w + h); the area multiplies the sides: w·h."
PERIMETER_HINT = "That is w + h, half the way round: a rectangle has two sides of each length, so 2·(w + h)."


def catalog() -> Any:
    return load_catalog(SAMPLE)


def result(failing: dict[str, str]) -> dict[str, Any]:
    """A version 2 results document in which the tests named in ``failing`` fail with that hint."""
    tests = [
        {
            "name": name,
            "status": "fail" if name in failing else "pass",
            "message": "wrong value" if name in failing else "",
            "hint": failing.get(name),
            "function": function,
            "call": f"{function}(3, 4)" if name in failing else None,
        }
        for name, function in TESTS
    ]
    status = "fail" if failing else "pass"
    return {"version": 2, "status": status, "message": "", "tests": tests, "seed": 1, "duration_ms": 5}


LOAD_ERROR = {
    "version": 2,
    "status": "error",
    "message": "Your file has a syntax error on line 1.",
    "tests": [],
    "seed": 1,
    "duration_ms": 1,
}


def seed_class(store: Any) -> None:
    """Write the class described above into ``store`` (a ``qkv.store.Store``)."""
    lesson = catalog().lesson(LESSON_ID)

    def answer(learner: str, text: str, seed: int | None = None) -> None:
        feedback = lesson.check("area", text, variant_seed=seed)
        store.progress.record_answer(
            learner,
            LESSON_ID,
            "area",
            text,
            correct=feedback.correct,
            message=feedback.message,
            counted_as_attempt=feedback.counted_as_attempt,
            variant_seed=seed,
            mistake=feedback.mistake,
        )

    for text in ("14", "7", "12"):
        answer(ANN, text)
    for text in ("abc", "12"):
        answer(BEN, text)
    for text in ("13", " 13 ", "abc"):
        answer(CY, text)
    store.progress.set_variant_seed(DEE, LESSON_ID, 5)
    answer(DEE, "999", 5)
    answer(DEE, str(lesson.variant(5)["area"]), 5)
    store.code.record(
        ANN,
        LESSON_ID,
        "shapes",
        "def area(w, h): return 2 * (w + h)\n",
        result({"area of a 3 by 4 rectangle": AREA_HINT, "area of a random rectangle": AREA_HINT}),
    )
    store.code.record(ANN, LESSON_ID, "shapes", "def area(w, h): return w * h\n", result({}))
    store.code.record(BEN, LESSON_ID, "shapes", "def area(w, h) return\n", LOAD_ERROR)
    store.code.record(
        BEN,
        LESSON_ID,
        "shapes",
        "def perimeter(w, h): return w + h\n",
        result(
            {
                "perimeter of a random rectangle": PERIMETER_HINT,
                "perimeter with fractional sides": PERIMETER_HINT,
            }
        ),
    )
    store.learners.set_display_name(ANN, "Ann")
    store.learners.set_display_name(BEN, "Ben")
    store.learners.set_display_name(CY, FORMULA_NAME)
