"""A lesson written as data only: the test chapter T1 under tests/sample_lessons, graded end to end.

Its folder holds everything about it (text, variants, hand exercise, code exercise and grading); nothing
of qkv names it. These tests load it, check its answers, and grade programs for it through ``qkv check``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from qkv.cli.check import check, guess_exercise
from qkv.cli.lessons import lessons
from qkv.lessons import BUILTIN_CONTENT, load_catalog, validate

SAMPLE = Path(__file__).parents[1] / "sample_lessons"
LESSON_DIR = SAMPLE / "T1" / "T1.1-rectangles"
SRC = Path(__file__).parents[2] / "src" / "qkv"

CORRECT = "def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('negative')\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
HALF_WAY = CORRECT.replace("return 2 * (w + h)", "return w + h")


def test_the_sample_chapter_is_valid_and_lists_its_exercises() -> None:
    assert validate(SAMPLE) == []
    catalog = load_catalog(SAMPLE)
    assert [chapter.id for chapter in catalog.chapters] == ["T1"]
    lesson = catalog.lesson("T1.1")
    assert lesson.place == "T1.1 · lesson 1 of 2"
    assert [entry.id for entry in catalog.code_exercises()] == ["T1.1/shapes"]
    assert catalog.code_exercise("T1.1/shapes").exercise.functions == ("area", "perimeter")


def test_its_hand_exercise_uses_its_variant_hook_and_named_mistakes() -> None:
    lesson = load_catalog(SAMPLE).lesson("T1.1")
    assert lesson.check("area", "12").correct  # the printed page: 3 by 4
    assert lesson.check("area", "14").message.startswith("That is the perimeter")
    assert lesson.check("area", "7").message.startswith("That is w + h, half the way round")
    numbers = lesson.variant(5)
    assert numbers == lesson.variant(5) and numbers != lesson.variant(None)
    assert lesson.check("area", str(numbers["w"] * numbers["h"]), variant_seed=5).correct
    assert not lesson.check("area", "12", variant_seed=5).correct


def test_nothing_outside_its_folder_names_it() -> None:
    names = re.compile(r"\bT1\.1\b|rectangles|\bperimeter\b|HALF_WAY_ROUND")
    for path in SRC.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".md", ".html", ".js", ".toml", ".css"}:
            assert not names.search(path.read_text(encoding="utf-8")), path


def test_lessons_list_shows_the_exercise_ids() -> None:
    result = CliRunner().invoke(lessons, ["list", "--path", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert "T1.1  Area and perimeter  (2 exercises)" in result.output
    assert "T1.1/area (numeric)" in result.output and "T1.1/shapes (code: area, perimeter)" in result.output
    assert "T1.2  Squares  (planned)" in result.output


@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_qkv_check_grades_a_program_for_it(tmp_path: Path) -> None:
    solution = tmp_path / "rectangles.py"
    solution.write_text(CORRECT)
    passed = CliRunner().invoke(check, [str(solution), "--content", str(SAMPLE), "--seed", "3"])
    assert passed.exit_code == 0, passed.output
    assert "5 of 5 tests passed" in passed.output and "T1.1/shapes" in passed.output

    solution.write_text(HALF_WAY)
    failed = CliRunner().invoke(
        check, [str(solution), "--content", str(SAMPLE), "--exercise", "T1.1/shapes", "--json", "--seed", "3"]
    )
    assert failed.exit_code == 1
    document = json.loads(failed.output)
    wrong = [test for test in document["tests"] if test["status"] != "pass"]
    assert [test["function"] for test in wrong] == ["perimeter", "perimeter"]
    assert {test["hint"] for test in wrong} == {
        "That is w + h, half the way round: a rectangle has two sides of each length, so 2·(w + h)."
    }
    assert wrong[1]["call"] == "perimeter(1.5, 2.25)"
    assert wrong[1]["message"] == "Expected the result = 7.5, but got 3.75."


@pytest.mark.sandbox
@pytest.mark.timeout(120)
def test_a_missing_sign_check_and_an_assert_are_named(tmp_path: Path) -> None:
    solution = tmp_path / "rectangles.py"
    for source, hint in (
        (CORRECT.replace("raise ValueError('negative')", "pass"), "Raise ValueError when a side is negative"),
        (CORRECT.replace("raise ValueError('negative')", "assert False"), "Use raise ValueError(...)"),
    ):
        solution.write_text(source)
        result = CliRunner().invoke(check, [str(solution), "--content", str(SAMPLE), "--json"])
        (failed,) = [test for test in json.loads(result.output)["tests"] if test["status"] != "pass"]
        assert failed["call"] == "area(-2, 5)" and failed["hint"].startswith(hint)


@pytest.fixture
def two_chapters(tmp_path: Path) -> Path:
    """The built-in chapter and the test chapter side by side: two code exercises to choose from."""
    shutil.copytree(BUILTIN_CONTENT, tmp_path / "content")
    for later in (tmp_path / "content" / "L4").glob("L4.[2-9]-*"):
        shutil.rmtree(later)  # L4.1 alone: its one code exercise next to the test chapter's
    shutil.copytree(SAMPLE / "T1", tmp_path / "content" / "T1")
    return tmp_path / "content"


def test_without_exercise_the_file_s_functions_choose_it(two_chapters: Path, tmp_path: Path) -> None:
    catalog = load_catalog(two_chapters)
    assert [entry.id for entry in catalog.code_exercises()] == ["L4.1/functions", "T1.1/shapes"]
    assert guess_exercise(catalog, CORRECT).id == "T1.1/shapes"
    assert guess_exercise(catalog, "def project_qkv(X, Wq, Wk, Wv):\n    pass\n").id == "L4.1/functions"


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "def area(w, h):\n    pass\n\ndef param_count(a, b, c):\n    pass\n",
            "defines the functions of several",
        ),
        ("def volume(a, b, c):\n    pass\n", "defines none of the functions"),
        ("def area(:\n", "defines none of the functions"),
    ],
)
def test_an_ambiguous_file_is_a_usage_error_listing_the_ids(
    two_chapters: Path, tmp_path: Path, source: str, reason: str
) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text(source)
    result = CliRunner().invoke(check, [str(solution), "--content", str(two_chapters)])
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    # L4.1 alone sits next to the test chapter: either way, those two are the ids to choose from.
    assert reason in said and "choose one with --exercise: L4.1/functions, T1.1/shapes." in said


def test_an_unknown_exercise_id_lists_the_known_ones(tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text(CORRECT)
    result = CliRunner().invoke(check, [str(solution), "--content", str(SAMPLE), "--exercise", "T1.1/area"])
    assert result.exit_code == 2
    assert "There is no code exercise 'T1.1/area'; the code exercises are: T1.1/shapes." in " ".join(
        result.output.split()
    )


def test_the_write_a_lesson_guide_quotes_the_sample_lesson_exactly() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "lessons.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^(`{3,4})\w+ file=(\S+)\n(.*?)^\1$", guide, re.MULTILINE | re.DOTALL)
    quoted = {name: text for _, name, text in blocks}
    files = {
        str(path.relative_to(SAMPLE)): path
        for path in SAMPLE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sorted(quoted) == sorted(files)
    for name, text in quoted.items():
        assert text == files[name].read_text(encoding="utf-8"), name
