"""What every lesson must do, whatever it teaches: the contract that tests/lessons/test_lesson_contract.py
runs for each lesson of the catalog, and for a lesson added to a temporary copy of the chapter.

Each check takes the lesson (and, for grading, the grader and the folder of corpora) and asserts; none
names a lesson, a count or an exercise. A lesson's corpus lives in its folder, ``<lesson folder>/corpus/``
(``corpus_of``; under ``<corpora>/<lesson id>/`` where a folder of corpora is given), one folder per
exercise, ``<corpus>/<exercise id>/``: ``correct/*.py`` pass every test, and ``wrong/*.py`` fail with the hint their ``# expected hint:
NAME`` line names (a module-level constant of the lesson's ``grading.py``, or one of the grader's own
hints), and no other but those its ``# also hint: NAME`` lines name (where the tests cannot tell two causes
apart). An exercise whose corpora are graded elsewhere, by tests of their own, names that folder of tests/ in a
``graded-in.txt`` in its corpus folder. What a test knows of one lesson lives with it too: the chapter's
catalogued mistakes its functions can make are listed in ``<corpus>/catalogued-mistakes.txt``.

The catalog every lesson-parametrised test runs on is ``catalog()``: the built-in lessons with the corpora
in their folders, or, with ``QKV_TEST_CONTENT`` set, another content folder (and with ``QKV_TEST_CORPORA``,
a folder of corpora by lesson id) (how ``tests/lessons/test_a_new_lesson.py`` runs those tests on a chapter with a
lesson more).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from qkv.grading.feedback import hints as grading_hints
from qkv.lessons import BUILTIN_CONTENT, Catalog, CodeExercise, Lesson, load_catalog, validate
from qkv.lessons.pyfiles import import_lesson_file
from qkv.lessons.scaffold import write_lesson_tests
from tests.lesson_pages import assert_tags_balanced, text_of, written_forms

TESTS = Path(__file__).parent
CONTENT = Path(os.environ["QKV_TEST_CONTENT"]) if os.environ.get("QKV_TEST_CONTENT") else None
# A folder of corpora by lesson id, where one is given; None: each lesson's corpus is in its folder.
CORPORA = Path(os.environ["QKV_TEST_CORPORA"]) if os.environ.get("QKV_TEST_CORPORA") else None
CORPUS = "corpus"  # a lesson folder's corpus folder
MISTAKES_FILE = "catalogued-mistakes.txt"
SAMPLE = TESTS / "sample_lessons"
SAMPLE_CORPORA = SAMPLE / "corpora"
ELSEWHERE = "graded-in.txt"
RENDER_SEEDS = (None, 1, 2, 17, 2**40 + 3)  # the printed page, and variants near and far
MIN_WRONG = 3  # a corpus of wrong programs names at least this many


def corpus_of(lesson: Lesson, corpora: Path | None = CORPORA) -> Path:
    """The folder of a lesson's corpus: ``corpus/`` in its folder, or ``<corpora>/<lesson id>/`` where a
    folder of corpora is given (``QKV_TEST_CORPORA``, ``qkv lessons new --corpora``)."""
    return corpora / lesson.id if corpora is not None else lesson.source.parent / CORPUS


@functools.cache
def catalog() -> Catalog:
    """The catalog the lesson-parametrised tests run on (the built-in one unless ``QKV_TEST_CONTENT``)."""
    return load_catalog(CONTENT)


def catalogued_mistakes(lesson: Lesson, corpora: Path | None = CORPORA) -> list[str]:
    """The names of the chapter's catalogued mistakes that the lesson's functions can make (none listed:
    none), from its corpus folder's ``catalogued-mistakes.txt``, one a line."""
    path = corpus_of(lesson, corpora) / MISTAKES_FILE
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and line[0] != "#"]


def check_validates(lesson: Lesson) -> None:
    """The lesson's chapter passes the full check of ``qkv lessons validate``."""
    assert _problems(lesson.chapter.source.parent) == []


@functools.cache
def _problems(chapter: Path) -> list[str]:
    """Validating checks a whole chapter: once per chapter serves all of its lessons."""
    return [str(problem) for problem in validate(chapter)]


def check_sections_render(lesson: Lesson) -> None:
    """Every section renders, for the printed page and several variants, as a closed HTML section with
    every placeholder filled; each section that says it changes with the variant does change."""
    pages = {seed: lesson.render(seed) for seed in RENDER_SEEDS}
    ids = [section.id for section in pages[None]]
    assert len(ids) == len(set(ids)), ids
    assert ids[-1] == "reference" and pages[None][-1] is lesson.chapter.reference()
    for seed, sections in pages.items():
        assert [section.id for section in sections] == ids, seed
        for section in sections:
            assert section.title.strip(), (seed, section.id)
            assert section.html.startswith(f'<section class="lesson-section" id="{section.id}"'), section.id
            assert section.html.endswith("</section>"), (seed, section.id)
            assert_tags_balanced(section.html, f"{lesson.id} {section.id} (variant {seed})")
            assert "{{" not in text_of(section.html), (seed, section.id)
    for section_id in lesson.variant_section_ids():
        htmls = {_html(pages[seed], section_id) for seed in RENDER_SEEDS}
        assert len(htmls) > 1, f"{lesson.id}: {section_id} says it changes with the variant, but it does not"


def check_no_answer_before_it_is_earned(lesson: Lesson) -> None:
    """No numeric answer that is not a whole number (whole numbers, like a 0 weight, are everywhere) is
    written anywhere on the page, whole, in any form a learner could copy; no reference solution is either.

    A lesson may ask more of its own page (no single component of a vector anywhere, say): its own tests
    say so. One component alone of a vector is not the answer, and may meet a number shown elsewhere.
    """
    for seed in RENDER_SEEDS:
        no_answer_in(
            lesson, seed, " ".join(text_of("".join(section.html for section in lesson.render(seed))).split())
        )
    page = "".join(section.html for section in lesson.render())
    for exercise in lesson.exercises.values():
        body = [line.strip() for line in (exercise.solution or "").splitlines() if "return" in line]
        assert [line for line in body if line in page] == [], (lesson.id, exercise.id)


def check_hints_do_not_tell(lesson: Lesson) -> None:
    """No hint of a code exercise holds a line of its reference solution's code (20 characters or more,
    whitespace and quotes ignored, or the expression a line returns or assigns), unless it is marked as
    showing the solution (then reading it counts as being shown the solution); and the hints climb one
    counted failed run at a time, so the first is earned by the first try. The lesson's validation refuses
    such a hint too: this is the same rule, held for every lesson of the catalog."""
    from qkv.lessons.help_ladder import hint_open, leaked_lines

    for exercise in lesson.exercises.values():
        if exercise.kind != "code" or not exercise.hints:
            continue
        for number, hint in enumerate(exercise.hints, start=1):
            if number in exercise.solution_hints or exercise.solution is None:
                continue
            leaked = leaked_lines(hint, exercise.solution, exercise.starter_code or "")
            assert leaked == [], (lesson.id, exercise.id, number, leaked)
        assert not hint_open(1, solved=False, failed_runs=0), (lesson.id, exercise.id)
        assert hint_open(1, solved=False, failed_runs=1), (lesson.id, exercise.id)


def no_answer_in(lesson: Lesson, seed: int | None, text: str) -> None:
    """No numeric answer of variant ``seed`` that is not a whole number stands in ``text`` (a page's text,
    rendered by the engine or read off the live page in a browser) in a form a learner could copy whole."""
    data = lesson.variant(seed)
    for exercise in lesson.exercises.values():
        if exercise.kind != "numeric" or not _has_fraction(data[exercise.answer]):
            continue
        shown = [form for form in _copyable(data[exercise.answer]) if _stands_in(form, text)]
        assert shown == [], (lesson.id, seed, exercise.id, shown)


def code_exercises(lesson: Lesson, catalog: Any) -> list[CodeExercise]:
    return [entry for entry in catalog.code_exercises() if entry.lesson is lesson]


def corpus_folder(entry: CodeExercise, corpora: Path | None = CORPORA) -> Path:
    return corpus_of(entry.lesson, corpora) / entry.exercise.id


def check_has_corpora(entry: CodeExercise, corpora: Path | None) -> None:
    """The exercise has a correct and a wrong corpus (here, or where its ``graded-in.txt`` says)."""
    folder = corpus_folder(entry, corpora)
    if (folder / ELSEWHERE).is_file():  # its first word: a folder of tests/, which grades the corpus
        folder = TESTS / (folder / ELSEWHERE).read_text().split()[0]
    assert list((folder / "correct").glob("*.py")), f"{entry.id} has no correct corpus in {folder}"
    assert len(list((folder / "wrong").glob("*.py"))) >= MIN_WRONG, f"{entry.id}: few wrong programs"


def corpus_files(entry: CodeExercise, corpora: Path | None, kind: str) -> list[Path]:
    """The exercise's programs of one kind (``correct`` or ``wrong``) graded by the contract."""
    return sorted((corpus_folder(entry, corpora) / kind).glob("*.py"))


def grading_module(lesson: Lesson) -> Any:
    """The lesson's ``grading.py`` as the engine imports it: its reference solutions and hint sentences."""
    module, problems = import_lesson_file(lesson.source.parent / "grading.py")
    assert module is not None, problems
    return module


def expected_hint(lesson: Lesson, path: Path) -> str:
    """The hint a wrong program of the lesson names on its ``# expected hint: NAME`` line."""
    match = re.search(r"^# expected hint: (\w+)", path.read_text(), re.MULTILINE)
    assert match, f"{path} does not say which hint it expects"
    return _hint_named(lesson, path, match.group(1))


def _hint_named(lesson: Lesson, path: Path, name: str) -> str:
    """A constant of the lesson's ``grading.py``, or one of the grader's own hints."""
    found = getattr(grading_module(lesson), name, None) or getattr(grading_hints, name, None)
    assert isinstance(found, str), f"{path}: no hint called {name}"
    return found


def check_passes(grader: Any, entry: CodeExercise, program: str, seed: int) -> None:
    """``program`` passes every hidden test of the exercise."""
    result = grader.grade(program, entry.suite, seed=seed)
    failures = [(test.name, test.message) for test in result.tests if test.status != "pass"]
    assert result.status == "pass", failures or result.message


def check_fails_with_its_hint(grader: Any, entry: CodeExercise, path: Path, seed: int) -> None:
    """The wrong program fails, with its tagged hint on a failed test and no other hint blamed."""
    result = grader.grade(path.read_text(), entry.suite, seed=seed)
    assert result.status == "fail", result.message
    failing = [test for test in result.tests if test.status != "pass"]
    # The lesson's own hints; a relation or a mutant of the reference (the grader's generic sentences)
    # states a fact about the result, and is checked by tests/grading/test_explain*.py.
    given = {test.hint for test in failing if test.hint_source in ("lesson", None)}
    hint = expected_hint(entry.lesson, path)
    assert hint in given, [(test.name, test.message, test.hint) for test in failing]
    also = {
        _hint_named(entry.lesson, path, name)
        for name in re.findall(r"^# also hint: (\w+)", path.read_text(), re.M)
    }
    assert given <= {hint, None} | also, given  # no other misconception is blamed


def check_code_exercises(grader: Any, lesson: Lesson, catalog: Any, corpora: Path | None, seed: int) -> None:
    """Every code exercise of the lesson: its reference solution and correct corpus pass, its wrong
    corpus fails with the hints it is tagged with (all of it, graded once with ``seed``)."""
    for entry in code_exercises(lesson, catalog):
        check_has_corpora(entry, corpora)
        if entry.exercise.solution is not None:
            check_passes(grader, entry, entry.exercise.solution, seed)
        for path in corpus_files(entry, corpora, "correct"):
            check_passes(grader, entry, path.read_text(), seed)
        for path in corpus_files(entry, corpora, "wrong"):
            check_fails_with_its_hint(grader, entry, path, seed)


def check_predict_first_comes_first(lesson: Lesson) -> None:
    """A lesson that asks for a prediction asks before anything on the page can give it away."""
    predicting = [part.id for part in lesson.parts if part.id.startswith("predict")]
    if not predicting:
        return
    sections = [section.id for section in lesson.render(None)]
    assert sections[0] in predicting, (lesson.id, sections)


def check_lesson(grader: Any, lesson: Lesson, catalog: Any, corpora: Path | None, seed: int = 7) -> None:
    """The whole contract, for one lesson."""
    check_validates(lesson)
    check_predict_first_comes_first(lesson)
    check_sections_render(lesson)
    check_no_answer_before_it_is_earned(lesson)
    check_hints_do_not_tell(lesson)
    check_code_exercises(grader, lesson, catalog, corpora, seed)


def _html(sections: list[Any], section_id: str) -> str:
    return next(section.html for section in sections if section.id == section_id)


def _copyable(value: object) -> list[str]:
    """The forms of an answer a learner could copy whole: every written form of a number; of a vector,
    the forms that write all its components (not each component alone)."""
    forms = written_forms(value)
    if np.ndim(value) == 0:
        return forms
    components = {f"{n:.{d}f}" for n in np.ravel(np.asarray(value, dtype=float)) for d in (3, 6)}
    return [form for form in forms if form not in components]


def _stands_in(form: str, text: str) -> bool:
    """Whether ``form`` is in ``text`` as a number of its own: 3.5 is not in 13.5 or 3.5577."""
    return re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", text) is not None


def _has_fraction(value: object) -> bool:
    try:
        numbers = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        return False  # not a number: a shape, a word
    return bool(np.any(numbers != np.round(numbers)))


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


# A widget of the new lesson's own, written as docs/lessons.md says a widget is written: one folder of the
# chapter's widgets/, with its Python (check, config, fallback HTML), its script and its style.
NEW_WIDGET_PY = '''"""rectangle-grid: the lesson's rectangle drawn as a grid of unit squares (it takes no settings)."""

from collections.abc import Mapping
from typing import Any


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"Unknown setting '{key}': rectangle-grid takes none." for key in sorted(settings)]
    if not all(isinstance(names.get(side), int) for side in ("w", "h")):
        problems.append("rectangle-grid draws the variant's whole sides w and h, which it does not have.")
    return problems


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    return {"w": names["w"], "h": names["h"]}


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    return f'<p class="rectangle-fallback">A grid {names["w"]} squares wide and {names["h"]} squares high.</p>'
'''
NEW_WIDGET_JS = """// rectangle-grid: the rectangle of the lesson's sides as a grid of unit squares.
import { claim, showLive, svg } from "/static/js/widget-kit.js";

const CELL = 20;

export function mount(element) {
  const claimed = claim(element, (config) => Number.isInteger(config.w) && Number.isInteger(config.h));
  if (!claimed) return;
  const { w, h } = claimed.config;
  const label = `A rectangle ${w} squares wide and ${h} squares high.`;
  const picture = svg("svg", { viewBox: `0 0 ${w * CELL} ${h * CELL}`, class: "rectangle-grid", role: "img", "aria-label": label });
  for (let row = 0; row < h; row += 1) {
    for (let column = 0; column < w; column += 1) {
      picture.append(svg("rect", { x: column * CELL, y: row * CELL, width: CELL, height: CELL, class: "rectangle-cell" }));
    }
  }
  showLive(element, picture);
}
"""
NEW_WIDGET_CSS = """.rectangle-grid { max-width: 16rem; }
.rectangle-cell { fill: none; stroke: currentColor; }
"""


def add_widget(folder: Path, taken: set[str], name: str = "rectangle-grid") -> str:
    """Add one widget folder to a lesson (or chapter) folder: its widget.py, widget.js and widget.css; its
    name, the first of ``name``, ``name-2``, ... that no widget of ``taken`` has."""
    base, number = name, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    folder = folder / "widgets" / name
    folder.mkdir(parents=True)
    (folder / "widget.py").write_text(NEW_WIDGET_PY)
    (folder / "widget.js").write_text(NEW_WIDGET_JS)
    (folder / "widget.css").write_text(NEW_WIDGET_CSS)
    return name


def free_lesson_id(chapter: Path, corpora: Path | None) -> str:
    """An id for a lesson more that no lesson of the chapter can have: the chapter's id and a number past
    every number in use, by a lesson written or planned, a lesson folder or a corpus folder."""
    catalog = load_catalog(chapter)
    (settings,) = catalog.chapters
    used = [*settings.lesson_ids, *(path.name.split("-")[0] for path in chapter.iterdir())]
    used += [path.name for path in corpora.iterdir()] if corpora is not None and corpora.is_dir() else []
    numbers = [int(tail) for name in used if (tail := name.removeprefix(f"{settings.id}.")).isdigit()]
    return f"{settings.id}.{max(numbers, default=0) + 1}"


# The sample lesson's function ``area`` is a word qkv's generic files use in examples; a lesson added to the
# chapter has words of its own (tests/lessons/test_lessons_generic.py), so the copy calls it this.
OWN_AREA = "rectarea"


def add_lesson(content: Path, corpora: Path | None = None) -> str:
    """Add a lesson made from the sample lesson T1.1 to a copy of the built-in chapter, touching only what
    docs/lessons.md says a new lesson touches: its folder (chapter.toml is left as it is), with a widget of
    its own placed in its idea section, its corpus (``corpus/``, or under ``corpora`` where given) and its
    own tests (``tests/``, as ``qkv lessons new`` writes them)."""
    (chapter,) = [folder for folder in content.iterdir() if (folder / "chapter.toml").is_file()]
    new_id = free_lesson_id(chapter, corpora)
    taken = set(load_catalog(chapter).widgets.names())
    folder = chapter / f"{new_id}-rectangles"
    shutil.copytree(SAMPLE / "T1" / "T1.1-rectangles", folder)
    (folder / "lesson.py").write_text(NEW_LESSON_PY)
    for name in ("lesson.md", "grading.py"):
        (folder / name).write_text((folder / name).read_text().replace("T1.1", new_id))
    widget = add_widget(folder, taken)
    text = (folder / "lesson.md").read_text()
    idea_ends = text.index("::::", text.index("::::section idea") + len("::::section idea"))
    (folder / "lesson.md").write_text(f"{text[:idea_ends]}\n```{{widget}} {widget}\n```\n{text[idea_ends:]}")
    corpus = corpora / new_id if corpora is not None else folder / CORPUS
    shutil.copytree(SAMPLE_CORPORA / "T1.1", corpus)
    write_lesson_tests(folder, new_id)
    for path in [
        *(folder / name for name in ("lesson.md", "grading.py", "lesson.py")),
        *corpus.rglob("*.py"),
    ]:
        path.write_text(re.sub(r"\barea\b", OWN_AREA, path.read_text()))
    return new_id


def chapter_with_a_new_lesson(root: Path) -> tuple[Path, None, str]:
    """A copy of the built-in content (each lesson's corpus and tests in its folder) under ``root``, with one
    lesson more: (content folder, None: no folder of corpora apart, the new lesson's id)."""
    content = root / "content"
    shutil.copytree(BUILTIN_CONTENT, content, ignore=shutil.ignore_patterns("__pycache__"))
    return content, None, add_lesson(content)
