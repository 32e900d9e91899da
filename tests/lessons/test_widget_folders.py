"""Widgets are folders of their chapter or of a lesson: the engine finds each by name, with its three files,
or says why not.

The catalog's folders (chapters' and lessons') are checked as shipped; broken folders are built in a temporary chapter (a
copy of the sample chapter, which has no widgets of its own) so that each problem is seen alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qkv.lessons import LessonError, load_catalog, validate
from qkv.lessons.widgets import ASSET_FILES, WIDGETS_FOLDER, WidgetSet, check_widget, load_widgets
from tests import lesson_contract as contract

SAMPLE = Path(__file__).parents[1] / "sample_lessons" / "T1"
WIDGET_PY = """
def check(settings, names):
    return [] if settings.get("dots", 3) > 0 else [f"dots must be positive, not {settings['dots']!r}."]

def config(settings, names):
    return {"dots": settings.get("dots", 3)}

def render(settings, names):
    return "<p>" + "·" * settings.get("dots", 3) + "</p>"
"""


def widget_folders(chapter: Path) -> list[Path]:
    return sorted(path for path in (chapter / WIDGETS_FOLDER).iterdir() if path.is_dir())


def make_widget(chapter: Path, name: str = "dots", python: str = WIDGET_PY) -> Path:
    folder = chapter / WIDGETS_FOLDER / name
    folder.mkdir(parents=True)
    (folder / "widget.py").write_text(python, encoding="utf-8")
    (folder / "widget.js").write_text("export function mount(element) {}\n", encoding="utf-8")
    (folder / "widget.css").write_text(".dots {}\n", encoding="utf-8")
    return folder


@pytest.fixture
def chapter(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLE, tmp_path / "T1", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "T1"


def place(chapter: Path, block: str) -> None:
    """Put ``block`` (a widget directive) at the end of the sample lesson's first section."""
    lesson = next(chapter.glob("*/lesson.md"))
    text = lesson.read_text(encoding="utf-8")
    first_close = text.index("\n::::\n")
    lesson.write_text(text[:first_close] + "\n\n" + block + text[first_close:], encoding="utf-8")


# -- the catalog's chapters (the built-in ones, or QKV_TEST_CONTENT's) ------------------------------------
# A widget folder is a chapter's (``CHAPTER/widgets/NAME/``, shared by its lessons) or a lesson's
# (``CHAPTER/LESSON/widgets/NAME/``, as ``qkv lessons new --widget`` writes it).


def owners() -> list[Path]:
    """Every folder of the catalog that may hold a ``widgets/`` folder: each chapter and each of its lessons."""
    chapters = [chapter.source.parent for chapter in contract.catalog().chapters]
    return chapters + [lesson.source.parent for lesson in contract.catalog().lessons]


def catalog_widget_folders() -> list[Path]:
    return [
        folder for owner in owners() if (owner / WIDGETS_FOLDER).is_dir() for folder in widget_folders(owner)
    ]


@pytest.mark.content
def test_every_widget_folder_holds_its_three_files() -> None:
    for folder in catalog_widget_folders():
        assert sorted(path.name for path in folder.iterdir() if path.name != "__pycache__") == sorted(
            ["widget.py", *ASSET_FILES]
        ), folder


@pytest.mark.content
def test_the_engine_finds_every_widget_the_lessons_place_and_no_other() -> None:
    catalog = contract.catalog()
    placed = {name for lesson in catalog.lessons for name in lesson.widget_names}
    folders = {folder.name for folder in catalog_widget_folders()}
    assert placed == folders == set(catalog.widgets.names())
    for widget in catalog.widgets:
        assert widget.folder.parent.parent in owners(), widget.folder
        assert all(widget.asset(name).is_file() for name in ASSET_FILES)


@pytest.mark.content
def test_each_lesson_lists_the_widgets_its_page_shows() -> None:
    catalog = contract.catalog()
    for lesson in catalog.lessons:
        html = "".join(section.html for section in lesson.render())
        shown = {name for name in catalog.widgets.names() if f'data-widget="{name}"' in html}
        assert set(lesson.widget_names) == shown, lesson.id
        assert len(lesson.widget_names) == len(set(lesson.widget_names))


@pytest.mark.content
def test_check_widget_names_the_widgets_it_knows() -> None:
    widgets = contract.catalog().widgets
    names = widgets.names()
    assert check_widget("sparkles", {}, {}, widgets) == [
        f"There is no widget called 'sparkles' (known: {', '.join(names)})."
    ]


def test_a_lesson_widget_folder_is_one_of_the_catalogs(tmp_path: Path) -> None:
    """The checks above see a widget of a lesson's own folder (the new lesson of the contract has one)."""
    content, _, new_id = contract.chapter_with_a_new_lesson(tmp_path)
    catalog = load_catalog(content)
    (folder,) = [path for path in (catalog.lesson(new_id).source.parent / WIDGETS_FOLDER).iterdir()]
    assert folder.name in catalog.widgets.names()
    assert catalog.widgets.get(folder.name).folder == folder  # type: ignore[union-attr]


# -- a chapter with widget folders of its own ----------------------------------------------------------


def test_a_widget_folder_is_found_and_rendered(chapter: Path) -> None:
    make_widget(chapter)
    place(chapter, "```{widget} dots\ndots = 2\n```\n")
    catalog = load_catalog(chapter)
    assert catalog.widgets.names() == ["dots"]
    (lesson,) = catalog.lessons
    assert lesson.widget_names == ("dots",)
    html = lesson.render()[0].html
    assert (
        '<div class="widget" data-widget="dots" data-config=\'{&quot;dots&quot;:2}\'><p>··</p></div>' in html
    )


def test_a_widget_check_problem_points_at_the_block(chapter: Path) -> None:
    make_widget(chapter)
    place(chapter, "```{widget} dots\ndots = 0\n```\n")
    lesson = next(chapter.glob("*/lesson.md"))
    line = lesson.read_text(encoding="utf-8").splitlines().index("```{widget} dots") + 1
    assert [str(p) for p in validate(chapter)] == [f"{lesson}:{line}: dots must be positive, not 0."]


def test_an_unknown_widget_is_named_with_the_known_ones(chapter: Path) -> None:
    make_widget(chapter)
    make_widget(chapter, "lines")
    place(chapter, "```{widget} sparkles\n```\n")
    (problem,) = validate(chapter)
    assert problem.message == "There is no widget called 'sparkles' (known: dots, lines)."


@pytest.mark.parametrize("missing", ["widget.py", "widget.js", "widget.css"])
def test_a_widget_folder_without_one_of_its_files_is_a_problem(chapter: Path, missing: str) -> None:
    folder = make_widget(chapter)
    (folder / missing).unlink()
    assert [str(p) for p in validate(chapter)] == [f"{folder}:1: The widget folder 'dots' lacks {missing}."]


def test_a_widget_folder_name_must_be_a_name(chapter: Path) -> None:
    folder = make_widget(chapter, "Dots_2")
    assert [str(p) for p in validate(chapter)] == [
        f"{folder}:1: A widget folder is named in lowercase letters, digits and dashes, not 'Dots_2'."
    ]


def test_a_widget_py_without_its_functions_is_a_problem(chapter: Path) -> None:
    folder = make_widget(chapter, python="def check(settings, names):\n    return []\n")
    assert [str(p) for p in validate(chapter)] == [
        f"{folder / 'widget.py'}:1: A widget's widget.py defines config(settings, names), render(settings, names)."
    ]


def test_a_widget_py_that_fails_to_import_is_located(chapter: Path) -> None:
    folder = make_widget(chapter, python="import math\n\nVALUE = 1 / 0\n")
    (problem,) = validate(chapter)
    assert (
        str(problem)
        == f"{folder / 'widget.py'}:3: Importing this file failed with ZeroDivisionError: division by zero"
    )


def test_a_failing_check_becomes_a_sentence_and_a_failing_config_a_lesson_error(chapter: Path) -> None:
    python = WIDGET_PY.replace('settings.get("dots", 3)', 'settings["dots"]')
    folder = make_widget(chapter, python=python)
    place(chapter, "```{widget} dots\n```\n")
    (problem,) = validate(chapter)
    assert problem.message == f"{folder / 'widget.py'}:3: check() failed with KeyError: 'dots'."
    widgets, problems = load_widgets(chapter)
    dots = widgets.get("dots")
    assert problems == [] and dots is not None
    with pytest.raises(LessonError, match=r"widget\.py:6: config\(\) failed with KeyError: 'dots'"):
        dots.html({}, {})


def test_a_widget_name_is_shared_by_every_chapter(tmp_path: Path) -> None:
    for chapter_id in ("T1", "T2"):
        copy = tmp_path / "content" / chapter_id
        shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
        if chapter_id == "T2":
            toml = copy / "chapter.toml"
            toml.write_text(toml.read_text(encoding="utf-8").replace('"T1', '"T2'), encoding="utf-8")
            for lesson in copy.glob("*/lesson.md"):
                lesson.write_text(
                    lesson.read_text(encoding="utf-8").replace('"T1.', '"T2.'), encoding="utf-8"
                )
        make_widget(copy)
    messages = [problem.message for problem in validate(tmp_path / "content")]
    first = tmp_path / "content" / "T1" / WIDGETS_FOLDER / "dots"
    assert messages == [
        f"The widget 'dots' is also defined in {first}; widget names are shared by all chapters."
    ]


def test_a_chapter_without_widgets_has_none() -> None:
    assert load_widgets(SAMPLE) == (WidgetSet(), [])
    assert load_catalog(SAMPLE).widgets.names() == []
