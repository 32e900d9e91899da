"""The lesson contract (tests/lesson_contract.py) for every lesson of the built-in catalog, and for a
seventh lesson added to a copy of the chapter: the proof that adding a lesson is one folder and its corpus.

Everything is parametrised from the catalog: no lesson id, count or exercise is named here.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from qkv.lessons import BUILTIN_CONTENT, CodeExercise, Lesson, load_catalog, validate
from tests import lesson_contract as contract

CATALOG = load_catalog()
LESSONS = CATALOG.lessons
CODE = CATALOG.code_exercises()
SAMPLE = Path(__file__).parents[1] / "sample_lessons"
SAMPLE_CORPORA = SAMPLE / "corpora"


def _lesson_id(lesson: Lesson) -> str:
    return lesson.id


def _corpus(kind: str) -> list[tuple[CodeExercise, Path]]:
    return [(entry, path) for entry in CODE for path in contract.corpus_files(entry, contract.CORPORA, kind)]


def _corpus_id(param: object) -> str:
    return param.stem if isinstance(param, Path) else getattr(param, "id", str(param))


@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_the_lesson_validates(lesson: Lesson) -> None:
    contract.check_validates(lesson)


@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_every_section_renders_in_several_variants(lesson: Lesson) -> None:
    contract.check_sections_render(lesson)


@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_no_answer_is_on_the_page_before_it_is_earned(lesson: Lesson) -> None:
    contract.check_no_answer_before_it_is_earned(lesson)


def test_every_chapter_lists_its_written_lessons_in_order() -> None:
    """The catalog's order is chapter.toml's, and each place line counts the chapter's lessons."""
    for chapter in CATALOG.chapters:
        written = [lesson for lesson in LESSONS if lesson.chapter_id == chapter.id]
        assert [lesson.id for lesson in written] == [
            i for i in chapter.lesson_ids if i in {w.id for w in written}
        ]
        for lesson in written:
            number = chapter.lesson_ids.index(lesson.id) + 1
            assert lesson.place == f"{lesson.id} · lesson {number} of {len(chapter.lesson_ids)}"


@pytest.mark.parametrize("entry", CODE, ids=_corpus_id)
def test_every_code_exercise_has_corpora(entry: CodeExercise) -> None:
    contract.check_has_corpora(entry, contract.CORPORA)


def test_every_corpus_belongs_to_a_code_exercise() -> None:
    folders = {f"{path.parent.name}/{path.name}" for path in contract.CORPORA.glob("*/*") if path.is_dir()}
    assert folders <= {entry.id for entry in CODE}, folders - {entry.id for entry in CODE}


@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [3, 20261201])
@pytest.mark.parametrize(
    "entry", [e for e in CODE if e.exercise.solution is not None] or [None], ids=_corpus_id
)
def test_the_reference_solution_passes(grader, entry: CodeExercise | None, seed: int) -> None:  # type: ignore[no-untyped-def]
    """The solution a learner is shown once they earn it (the ``solution`` key) passes every test."""
    if entry is not None:
        contract.check_passes(grader, entry, entry.exercise.solution or "", seed)


@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [1, 20261201])
@pytest.mark.parametrize(("entry", "path"), _corpus("correct"), ids=_corpus_id)
def test_correct_programs_pass(grader, entry: CodeExercise, path: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    contract.check_passes(grader, entry, path.read_text(), seed)


@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [7, 31337])
@pytest.mark.parametrize(("entry", "path"), _corpus("wrong"), ids=_corpus_id)
def test_wrong_programs_fail_with_their_hint(grader, entry: CodeExercise, path: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    contract.check_fails_with_its_hint(grader, entry, path, seed)


# ------------------------------------------------------------------------------- adding a lesson
# The sample lesson's variants, adapted to the chapter: drawn through the chapter module, until the area
# differs from both named mistakes (the perimeter, and half of it).
NEW_LESSON_PY = '''"""Variants of a lesson made from the sample lesson T1.1: a rectangle's sides, its area and perimeter."""

from __future__ import annotations

from typing import Any

from chapter import variant_numbers

SEED_PAGE = {"w": 3, "h": 4}


def variant(seed: int | None) -> dict[str, Any]:
    """The printed page's rectangle (3 by 4) for None; otherwise sides drawn from the seed."""
    sides = variant_numbers(seed, SEED_PAGE, _draw, _distinguishable)
    w, h = sides["w"], sides["h"]
    return {"w": w, "h": h, "area": w * h, "perimeter": 2 * (w + h)}


def wrong_answers(data: dict[str, Any]) -> dict[str, int]:
    """A known slip: half the perimeter."""
    return {"half_perimeter": data["w"] + data["h"]}


def _draw(rng: Any) -> dict[str, int]:
    return {"w": rng.randint(2, 9), "h": rng.randint(2, 19)}


def _distinguishable(sides: dict[str, int]) -> bool:
    area, half = sides["w"] * sides["h"], sides["w"] + sides["h"]
    return len({area, 2 * half, half}) == 3
'''


def add_lesson(content: Path, corpora: Path) -> str:
    """Add a lesson made from the sample lesson T1.1 to a copy of the built-in chapter, touching only what
    docs/lessons.md says a new lesson touches: its folder, its entry in chapter.toml, and its corpus."""
    (chapter,) = [folder for folder in content.iterdir() if (folder / "chapter.toml").is_file()]
    settings = tomllib.loads((chapter / "chapter.toml").read_text())
    new_id = f"{settings['id']}.{len(settings['lessons']) + 1}"
    folder = chapter / f"{new_id}-rectangles"
    shutil.copytree(SAMPLE / "T1" / "T1.1-rectangles", folder)
    (folder / "lesson.py").write_text(NEW_LESSON_PY)
    for name in ("lesson.md", "grading.py"):
        (folder / name).write_text((folder / name).read_text().replace("T1.1", new_id))
    with (chapter / "chapter.toml").open("a") as toml:
        toml.write(f'\n[[lessons]]\nid = "{new_id}"\ntitle = "Area and perimeter"\n')
    shutil.copytree(SAMPLE_CORPORA / "T1.1", corpora / new_id)
    return new_id


@pytest.fixture(scope="module")
def with_a_new_lesson(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A copy of the built-in content and corpora, with one lesson more."""
    root = tmp_path_factory.mktemp("chapter")
    content, corpora = root / "content", root / "lesson_corpora"
    shutil.copytree(BUILTIN_CONTENT, content)
    shutil.copytree(contract.CORPORA, corpora)
    return content, corpora, add_lesson(content, corpora)


def test_a_new_lesson_joins_the_catalog(with_a_new_lesson: tuple[Path, Path, str]) -> None:
    content, _, new_id = with_a_new_lesson
    assert validate(content) == []
    catalog = load_catalog(content)
    assert [lesson.id for lesson in catalog.lessons] == [lesson.id for lesson in LESSONS] + [new_id]
    count = len(CATALOG.chapters[0].lesson_ids) + 1
    assert catalog.lesson(new_id).place == f"{new_id} · lesson {count} of {count}"
    assert catalog.code_exercises()[-1].id == f"{new_id}/shapes"
    assert catalog.lesson(new_id).variant(5) == catalog.lesson(new_id).variant(5)


def test_the_contract_holds_for_every_lesson_with_a_new_one(
    with_a_new_lesson: tuple[Path, Path, str],
) -> None:
    content, corpora, _ = with_a_new_lesson
    catalog = load_catalog(content)
    for lesson in catalog.lessons:
        contract.check_validates(lesson)
        contract.check_sections_render(lesson)
        contract.check_no_answer_before_it_is_earned(lesson)
        for entry in contract.code_exercises(lesson, catalog):
            contract.check_has_corpora(entry, corpora)


@pytest.mark.sandbox
@pytest.mark.timeout(180)
def test_the_new_lesson_is_graded_from_its_corpus(grader, with_a_new_lesson: tuple[Path, Path, str]) -> None:  # type: ignore[no-untyped-def]
    """Its corpus is graded like every lesson's (the other lessons' corpora are graded above, from the same
    files)."""
    content, corpora, new_id = with_a_new_lesson
    catalog = load_catalog(content)
    contract.check_code_exercises(grader, catalog.lesson(new_id), catalog, corpora, seed=7)
