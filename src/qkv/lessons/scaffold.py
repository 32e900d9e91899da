"""A new lesson's first files: ``qkv lessons new`` writes a lesson folder that validates, with its tests.

The folder holds ``lesson.md`` (one exercise of each kind: a number, a letter, a choice and code),
``lesson.py`` (the variants) and ``grading.py`` (the code exercise's hidden tests, with hints), on
request a widget folder of the lesson's own, the lesson's own tests (``tests/test_<id>_content.py`` and
``tests/test_<id>_browser.py``, a walk in Chromium) and its corpus (``corpus/``, or under a folder of
corpora where one is given): right and wrong programs for the code exercise, each wrong one tagged with
the hint it must get. The texts are templates (``new_lesson/*.tmpl``,
data that names no lesson) for the author to replace with the lesson's own.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from qkv.lessons.model import LessonError
from qkv.lessons.widgets import NAME_PATTERN

__all__ = ["NewLesson", "lesson_folder_name", "lesson_tests_prefix", "write_lesson_tests", "write_new_lesson"]

TEMPLATES = Path(__file__).parent / "new_lesson"
CODE_EXERCISE = "functions"  # the template's code exercise: its corpus is <lesson folder>/corpus/functions/
CORPUS = "corpus"  # a lesson folder's corpus folder


@dataclass(frozen=True)
class NewLesson:
    """What ``write_new_lesson`` wrote: the lesson's folder, its corpus folder and every file."""

    folder: Path
    corpus: Path
    tests: Path
    files: list[Path] = field(default_factory=list)


def lesson_folder_name(lesson_id: str, title: str) -> str:
    """The folder of a lesson: its id and its title in lowercase words joined by dashes.

    Examples
    --------
    >>> lesson_folder_name("L9.3", "Positional encodings, in brief")
    'L9.3-positional-encodings-in-brief'
    """
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join([lesson_id, *words])


def lesson_tests_prefix(lesson_id: str) -> str:
    """The part of a lesson's test module names that is the lesson's own, unique in the repository (pytest
    imports a lesson folder's tests by their file name).

    Examples
    --------
    >>> lesson_tests_prefix("L9.3")
    'test_l9_3'
    """
    return "test_" + re.sub(r"[^a-z0-9]+", "_", lesson_id.lower())


def write_new_lesson(
    chapter: Path, corpora: Path | None, lesson_id: str, title: str, *, widget: str | None = None
) -> NewLesson:
    """Write a new lesson's folder into ``chapter``, with its tests (``tests/``) and its corpus (``corpus/``,
    or ``corpora/<lesson_id>/`` where ``corpora`` is given).

    Parameters
    ----------
    chapter : Path
        The chapter folder (with ``chapter.toml``) the lesson joins.
    corpora : Path or None
        A folder of the lessons' corpora by lesson id; None (qkv's own lessons): the lesson's folder.
    lesson_id, title : str
        The lesson's id (the chapter's id, a dot and a number: ``L9.3`` in chapter ``L9``) and title.
    widget : str, optional
        The name of a widget of the lesson's own to write (in ``widgets/NAME/``) and place on its page.

    Returns
    -------
    NewLesson

    Raises
    ------
    LessonError
        If the id does not belong to the chapter, the title is empty, the widget name is not one, or the
        lesson's folder or corpus is there already: nothing is written then.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "L9").mkdir()
    >>> _ = (root / "L9" / "chapter.toml").write_text('id = "L9"\\ntitle = "Demo"\\n')
    >>> new = write_new_lesson(root / "L9", None, "L9.1", "First steps")
    >>> sorted(path.name for path in new.folder.iterdir())
    ['corpus', 'grading.py', 'lesson.md', 'lesson.py', 'tests']
    >>> sorted(path.name for path in new.tests.iterdir())
    ['test_l9_1_browser.py', 'test_l9_1_content.py']
    """
    chapter_id = _chapter_id(chapter)
    _check_new(chapter, corpora, chapter_id, lesson_id, title, widget)
    folder = chapter / lesson_folder_name(lesson_id, title)
    corpus = corpora / lesson_id if corpora is not None else folder / CORPUS
    marks = {"@ID@": lesson_id, "@TITLE@": title.strip().replace('"', "'"), "@WIDGET@": widget or ""}
    marks["@WIDGET_BLOCK@"] = f"\n```{{widget}} {widget}\n```\n" if widget else ""
    files = [
        _write(TEMPLATES / f"{name}.tmpl", folder / name, marks)
        for name in ("lesson.md", "lesson.py", "grading.py")
    ]
    for template in sorted((TEMPLATES / "corpus").rglob("*.tmpl")):
        relative = template.relative_to(TEMPLATES / "corpus").with_suffix("")
        files.append(_write(template, corpus / CODE_EXERCISE / relative, marks))
    for template in sorted((TEMPLATES / "widget").glob("*.tmpl")) if widget else ():
        files.append(_write(template, folder / "widgets" / str(widget) / template.stem, marks))
    files += write_lesson_tests(folder, lesson_id)
    return NewLesson(folder, corpus, folder / "tests", files)


def write_lesson_tests(folder: Path, lesson_id: str) -> list[Path]:
    """Write a lesson's own tests into ``folder/tests/``: a content test (its corpus graded) and a browser
    walk, named after the lesson (``test_l9_1_content.py``, ``test_l9_1_browser.py``).

    Examples
    --------
    >>> import tempfile
    >>> [path.name for path in write_lesson_tests(Path(tempfile.mkdtemp()), "L9.1")]
    ['test_l9_1_browser.py', 'test_l9_1_content.py']
    """
    stem = lesson_tests_prefix(lesson_id)
    marks = {"@ID@": lesson_id, "@SLUG@": stem.removeprefix("test_")}
    written = []
    for template in sorted((TEMPLATES / "tests").glob("test_*.py.tmpl")):
        name = template.name.removesuffix(".py.tmpl").replace("test_", f"{stem}_", 1)
        written.append(_write(template, folder / "tests" / f"{name}.py", marks))
    return written


def _chapter_id(chapter: Path) -> str:
    settings = chapter / "chapter.toml"
    try:
        chapter_id = tomllib.loads(settings.read_text(encoding="utf-8")).get("id")
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LessonError(f"{settings} cannot be read as a chapter's settings: {error}.") from None
    if not isinstance(chapter_id, str) or not chapter_id:
        raise LessonError(f'{settings} gives the chapter no id (id = "...").')
    return chapter_id


def _check_new(
    chapter: Path, corpora: Path | None, chapter_id: str, lesson_id: str, title: str, widget: str | None
) -> None:
    """Refuse, with a sentence, what would not make a new lesson of this chapter; nothing is written."""
    if not re.fullmatch(rf"{re.escape(chapter_id)}\.[1-9][0-9]*", lesson_id):
        raise LessonError(
            f"A lesson of chapter {chapter_id} has an id like {chapter_id}.7 (the chapter's id, a dot and a "
            f"number), not {lesson_id!r}."
        )
    if not title.strip():
        raise LessonError('A new lesson needs a title, such as "Positional encodings".')
    if widget is not None and not NAME_PATTERN.fullmatch(widget):
        raise LessonError(f"A widget is named in lowercase letters, digits and dashes, not {widget!r}.")
    taken = [path for path in chapter.glob(f"{lesson_id}-*") if path.is_dir()]
    taken += [
        path for path in (chapter / lesson_id, corpora and corpora / lesson_id) if path and path.exists()
    ]
    if taken:
        raise LessonError(
            f"Lesson {lesson_id} has files already ({', '.join(str(path) for path in taken)}); pick another "
            "id, or edit those."
        )


def _write(template: Path, target: Path, marks: dict[str, str]) -> Path:
    text = template.read_text(encoding="utf-8")
    for mark, value in marks.items():
        text = text.replace(mark, value)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
