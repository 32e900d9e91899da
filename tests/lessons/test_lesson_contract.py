"""The lesson contract (tests/lesson_contract.py) for every lesson of the catalog (``contract.catalog()``),
and for a lesson more added to a copy of the chapter: the proof that adding a lesson is one folder and its
corpus (tests/lessons/test_a_new_lesson.py runs every lesson-parametrised test on it too).

Everything is parametrised from the catalog: no lesson id, count or exercise is named here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qkv.lessons import CodeExercise, Lesson, PlannedLesson, load_catalog, validate
from tests import lesson_contract as contract

CATALOG = contract.catalog()
LESSONS = CATALOG.lessons
CODE = CATALOG.code_exercises()


def _lesson_id(lesson: Lesson) -> str:
    return lesson.id


def _corpus(kind: str) -> list[tuple[CodeExercise, Path]]:
    return [(entry, path) for entry in CODE for path in contract.corpus_files(entry, contract.CORPORA, kind)]


def _corpus_id(param: object) -> str:
    return param.stem if isinstance(param, Path) else getattr(param, "id", str(param))


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_the_lesson_validates(lesson: Lesson) -> None:
    contract.check_validates(lesson)


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_every_section_renders_in_several_variants(lesson: Lesson) -> None:
    contract.check_sections_render(lesson)


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_predict_first_comes_first(lesson: Lesson) -> None:
    contract.check_predict_first_comes_first(lesson)


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_no_answer_is_on_the_page_before_it_is_earned(lesson: Lesson) -> None:
    contract.check_no_answer_before_it_is_earned(lesson)


@pytest.mark.content
@pytest.mark.parametrize("lesson", LESSONS, ids=_lesson_id)
def test_no_hint_tells_the_solution(lesson: Lesson) -> None:
    contract.check_hints_do_not_tell(lesson)


def test_the_hint_check_sees_a_line_of_the_solution() -> None:
    """The contract's hint check fails for a lesson whose hint copies a line of its solution, and holds once
    that hint is marked as showing the solution."""
    import dataclasses

    checked = 0
    for lesson in LESSONS:
        for exercise_id, exercise in lesson.exercises.items():
            if exercise.kind != "code" or not exercise.solution or not exercise.hints:
                continue
            line = max(exercise.solution.splitlines(), key=lambda text: len(text.split("#")[0].strip()))
            leaking = dataclasses.replace(exercise, hints=(*exercise.hints, f"Write `{line.strip()}`."))
            told = dataclasses.replace(lesson, exercises={**lesson.exercises, exercise_id: leaking})
            with pytest.raises(AssertionError):
                contract.check_hints_do_not_tell(told)
            marked = dataclasses.replace(leaking, solution_hints=(len(leaking.hints),))
            contract.check_hints_do_not_tell(
                dataclasses.replace(lesson, exercises={**lesson.exercises, exercise_id: marked})
            )
            checked += 1
    assert checked >= 1


def test_the_no_answer_check_sees_an_answer_written_out() -> None:
    """The check the contract and the browser smoke walk share fails on a page that writes an answer."""
    checked = 0
    for lesson in LESSONS:
        data = lesson.variant(1)
        for exercise in lesson.exercises.values():
            if exercise.kind == "numeric" and contract._has_fraction(data[exercise.answer]):
                contract.no_answer_in(lesson, 1, "Nothing to see here.")
                for form in contract._copyable(data[exercise.answer])[:3]:
                    with pytest.raises(AssertionError):
                        contract.no_answer_in(lesson, 1, f"The answer is {form}.")
                checked += 1
    assert checked >= len(LESSONS)


@pytest.mark.content
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


@pytest.mark.content
@pytest.mark.parametrize("entry", CODE, ids=_corpus_id)
def test_every_code_exercise_has_corpora(entry: CodeExercise) -> None:
    contract.check_has_corpora(entry, contract.CORPORA)


@pytest.mark.content
def test_every_corpus_belongs_to_a_code_exercise() -> None:
    if contract.CORPORA is not None:  # a folder of corpora by lesson id: a folder there may name no lesson
        corpora = {path.name: path for path in contract.CORPORA.iterdir() if path.is_dir()}
    else:
        corpora = {lesson.id: contract.corpus_of(lesson) for lesson in LESSONS}
    folders = {
        f"{lesson_id}/{path.name}"
        for lesson_id, corpus in corpora.items()
        if corpus.is_dir()
        for path in corpus.iterdir()
        if path.is_dir()
    }
    assert folders <= {entry.id for entry in CODE}, folders - {entry.id for entry in CODE}


@pytest.mark.content
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


@pytest.mark.content
@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [1, 20261201])
@pytest.mark.parametrize(("entry", "path"), _corpus("correct"), ids=_corpus_id)
def test_correct_programs_pass(grader, entry: CodeExercise, path: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    contract.check_passes(grader, entry, path.read_text(), seed)


@pytest.mark.content
@pytest.mark.sandbox
@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [7, 31337])
@pytest.mark.parametrize(("entry", "path"), _corpus("wrong"), ids=_corpus_id)
def test_wrong_programs_fail_with_their_hint(grader, entry: CodeExercise, path: Path, seed: int) -> None:  # type: ignore[no-untyped-def]
    contract.check_fails_with_its_hint(grader, entry, path, seed)


# ------------------------------------------------------------------------------- adding a lesson
@pytest.fixture(scope="module")
def with_a_new_lesson(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A copy of the built-in content and corpora, with one lesson more."""
    return contract.chapter_with_a_new_lesson(tmp_path_factory.mktemp("chapter"))


def test_a_new_lesson_joins_the_catalog(with_a_new_lesson: tuple[Path, Path, str]) -> None:
    content, _, new_id = with_a_new_lesson
    assert validate(content) == []
    catalog = load_catalog(content)
    assert [lesson.id for lesson in catalog.lessons] == [lesson.id for lesson in LESSONS] + [new_id]
    count = len(CATALOG.chapters[0].lesson_ids) + 1
    assert catalog.lesson(new_id).place == f"{new_id} · lesson {count} of {count}"
    assert catalog.code_exercises()[-1].id == f"{new_id}/shapes"
    assert catalog.lesson(new_id).variant(5) == catalog.lesson(new_id).variant(5)
    # chapter.toml was not touched: the new lesson joined the chapter's outline at its end, by its folder
    chapter = catalog.lesson(new_id).chapter
    assert new_id not in chapter.source.read_text()
    assert chapter.planned[-1] == PlannedLesson(new_id, "Area and perimeter")
    # its widget, a folder of the lesson's own, is found and placed on its page, drawn by the server
    (widget,) = set(catalog.lesson(new_id).widget_names) - set(CATALOG.widgets.names())
    assert widget.startswith("rectangle-grid")
    assert catalog.widgets.get(widget).folder.parent.parent == catalog.lesson(new_id).source.parent
    idea = next(section.html for section in catalog.lesson(new_id).render(5) if section.id == "idea")
    assert f'data-widget="{widget}"' in idea and "rectangle-fallback" in idea


def test_the_new_lesson_takes_an_id_no_lesson_has(tmp_path: Path) -> None:
    """An author's own next lesson (a folder and a corpus already there) does not collide with the test's."""
    content, corpora, first = contract.chapter_with_a_new_lesson(tmp_path)
    chapter = load_catalog(content).lesson(first).chapter.source.parent
    second = contract.add_lesson(content, corpora)
    assert second != first and second not in load_catalog(chapter).chapters[0].lesson_ids[:-1]
    assert validate(content) == []


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
