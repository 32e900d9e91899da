"""A chapter's ``chapter.py``: what its lessons share, imported once per chapter as ``chapter``.

The engine's side (any chapter folder, two content folders at once, errors located like a lesson file's)
on small chapters written here; the built-in chapter's side (its worked example is the one reference.md
shows, its doctests hold) on the shipped one.
"""

from __future__ import annotations

import doctest
import html
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from qkv.lessons import BUILTIN_CONTENT, LessonError, load_catalog, validate
from qkv.lessons.pyfiles import CHAPTER_MODULE, import_chapter_module, import_lesson_file

SAMPLE = Path(__file__).parents[1] / "sample_lessons" / "T1"
LESSON = "T1.1-rectangles"
# The sample lesson's variant, with its width taken from the chapter module.
SHARED_LESSON_PY = """from chapter import WIDTH

import chapter


def variant(seed):
    return {"w": WIDTH, "h": 4, "area": WIDTH * 4, "perimeter": 2 * (WIDTH + 4), "module": chapter.__name__}


def wrong_answers(data):
    return {"half_perimeter": data["w"] + data["h"]}
"""


def chapter_with(folder: Path, chapter_py: str | None) -> Path:
    """A copy of the sample chapter whose lesson takes its width from ``chapter_py`` (None: no such file)."""
    shutil.copytree(SAMPLE, folder)
    (folder / LESSON / "lesson.py").write_text(SHARED_LESSON_PY)
    if chapter_py is not None:
        (folder / "chapter.py").write_text(chapter_py)
    return folder


def test_a_lesson_imports_its_chapters_module(tmp_path: Path) -> None:
    chapter = chapter_with(tmp_path / "T1", "WIDTH = 5\n")
    assert validate(chapter) == []
    lesson = load_catalog(chapter).lesson("T1.1")
    assert lesson.variant(None)["area"] == 20
    assert lesson.check("area", "20").correct


def test_two_content_folders_with_a_chapter_of_one_name_keep_their_own_modules(tmp_path: Path) -> None:
    first = chapter_with(tmp_path / "one" / "T1", "WIDTH = 5\n")
    second = chapter_with(tmp_path / "two" / "T1", "WIDTH = 7\n")
    one, two = load_catalog(first).lesson("T1.1"), load_catalog(second).lesson("T1.1")
    assert (one.variant(None)["w"], two.variant(None)["w"]) == (5, 7)
    assert one.variant(None)["module"] != two.variant(None)["module"]
    assert one.variant(None)["module"] in sys.modules  # importable by its own name, for pickling
    assert CHAPTER_MODULE not in sys.modules  # the short name lives only while a lesson file runs


def test_the_chapter_module_is_imported_once_and_again_when_it_changes(tmp_path: Path) -> None:
    chapter = chapter_with(tmp_path / "T1", "WIDTH = 5\n")
    lesson_py = chapter / LESSON / "lesson.py"
    module, problems = import_chapter_module(chapter)
    assert problems == [] and module is not None
    assert import_chapter_module(chapter)[0] is module
    assert import_lesson_file(lesson_py)[0].chapter is module  # type: ignore[union-attr]
    (chapter / "chapter.py").write_text("WIDTH = 6  # wider\n")
    changed = import_chapter_module(chapter)[0]
    assert changed is not module and changed.WIDTH == 6  # type: ignore[union-attr]
    assert load_catalog(chapter).lesson("T1.1").variant(None)["w"] == 6


def test_a_folder_that_is_no_chapter_has_no_chapter_module(tmp_path: Path) -> None:
    (tmp_path / "chapter.py").write_text("raise SystemExit('never imported')\n")
    assert import_chapter_module(tmp_path) == (None, [])


@pytest.mark.parametrize(
    ("chapter_py", "line", "message"),
    [
        ("WIDTH = 5\nWIDTH +\n", 2, "Syntax error: invalid syntax."),
        (
            "import math\n\nWIDTH = math.sqrt(-1)\n",
            3,
            "Importing this file failed with ValueError: math domain error",
        ),
    ],
)
def test_a_broken_chapter_module_is_reported_once_with_its_line(
    tmp_path: Path, chapter_py: str, line: int, message: str
) -> None:
    chapter = chapter_with(tmp_path / "T1", chapter_py)
    assert [str(problem) for problem in validate(chapter)] == [f"{chapter / 'chapter.py'}:{line}: {message}"]
    with pytest.raises(LessonError, match=re.escape(f"chapter.py:{line}: {message}")):
        load_catalog(chapter)
    assert import_lesson_file(chapter / LESSON / "lesson.py") == (None, validate(chapter))


def test_a_lesson_that_imports_a_missing_chapter_module_is_told_where(tmp_path: Path) -> None:
    chapter = chapter_with(tmp_path / "T1", None)
    assert [str(problem) for problem in validate(chapter)] == [
        f"{chapter / LESSON / 'lesson.py'}:1: Importing this file failed with ModuleNotFoundError: "
        "No module named 'chapter'"
    ]


# ------------------------------------------------------------------------------------ the shipped chapter
def _builtin_chapter() -> object:
    (folder,) = [path.parent for path in BUILTIN_CONTENT.glob("*/chapter.py")]
    module, problems = import_chapter_module(folder)
    assert module is not None, problems
    return module


CHAPTER = _builtin_chapter()


def test_the_chapter_modules_doctests_hold() -> None:
    failures, tried = doctest.testmod(CHAPTER, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert (failures, tried > 0) == (0, True)


def _reference_numbers(text: str, after: str) -> list[float]:
    """The numbers of the first $...$ vector that follows ``after`` in the reference's Markdown."""
    vector = re.search(re.escape(after) + r"[^$]*\$([^$]*)\$", text)
    assert vector, after
    return [float(number) for number in re.findall(r"-?\d+(?:\.\d+)?", vector.group(1))]


def test_the_worked_example_is_the_one_reference_md_shows() -> None:
    """The chapter module's worked example, its inputs and every result, against the reference's own text:
    its sentence, its widget's settings and the asserts of its reference code."""
    (catalog_chapter,) = load_catalog().chapters
    text = catalog_chapter.reference_text
    example = CHAPTER.worked_example()  # type: ignore[attr-defined]
    given = re.search(r"Let \$q=(.*?)\$, \$K=(.*?)\$ and \$V=(.*?)\$, so \$d_k=(\d+)\$", text)
    assert given, "the worked example's sentence"
    assert [json.loads(part) for part in given.groups()] == [example[k] for k in ("q", "K", "V", "d_k")]
    assert _reference_numbers(text, "The raw dot products are") == example["raw_scores"]
    assert _reference_numbers(text, "gives weights of\nabout") == pytest.approx(example["weights"], abs=5e-7)
    assert _reference_numbers(text, r"\approx$") == pytest.approx(example["output"], abs=5e-7)
    assert _reference_numbers(text, "the output is exactly") == example["first_key_output"]
    widget = re.search(r"```\{widget\} attention-explorer\n(.*?)```", text, re.DOTALL)
    assert widget, "the worked example's widget"
    settings = dict(line.split(" = ") for line in widget.group(1).strip().splitlines())
    assert {key: json.loads(value) for key, value in settings.items()} == CHAPTER.WORKED  # type: ignore[attr-defined]
    asserted = dict(re.findall(r"assert isclose\((\w+\[\d\]), ([\d.]+)\)", text))
    assert float(asserted["weights[0]"]) == pytest.approx(example["weights"][0], abs=1e-15)
    assert [float(asserted[f"out[{i}]"]) for i in (0, 1)] == pytest.approx(example["output"], abs=1e-15)


def test_the_rendered_reference_shows_the_worked_examples_numbers() -> None:
    """What a learner reads: the page's reference section writes the example's weights and output."""
    page = html.unescape(load_catalog().lessons[0].render()[-1].html)
    example = CHAPTER.worked_example()  # type: ignore[attr-defined]
    for value in (*example["weights"], *example["output"]):
        assert f"{value:.6f}" in page, value
    assert np.allclose(example["weights"], np.exp(example["scores"]) / np.exp(example["scores"]).sum())
