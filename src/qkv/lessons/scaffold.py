"""A new lesson's first files: ``qkv lessons new`` writes a lesson folder that validates, and its corpus.

The folder holds ``lesson.md`` (one exercise of each kind: a number, a letter, a choice and code),
``lesson.py`` (the variants) and ``grading.py`` (the code exercise's hidden tests, with hints), and on
request a widget folder of the lesson's own; the corpus folder holds right and wrong programs for the code
exercise, each wrong one tagged with the hint it must get. The texts are templates (``new_lesson/*.tmpl``,
data that names no lesson) for the author to replace with the lesson's own.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from qkv.lessons.model import LessonError
from qkv.lessons.widgets import NAME_PATTERN

__all__ = ["NewLesson", "lesson_folder_name", "write_new_lesson"]

TEMPLATES = Path(__file__).parent / "new_lesson"
CODE_EXERCISE = "functions"  # the template's code exercise: its corpus is <corpora>/<id>/functions/


@dataclass(frozen=True)
class NewLesson:
    """What ``write_new_lesson`` wrote: the lesson's folder, its corpus folder and every file."""

    folder: Path
    corpus: Path
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


def write_new_lesson(
    chapter: Path, corpora: Path, lesson_id: str, title: str, *, widget: str | None = None
) -> NewLesson:
    """Write a new lesson's folder into ``chapter`` and its corpus into ``corpora/<lesson_id>/``.

    Parameters
    ----------
    chapter : Path
        The chapter folder (with ``chapter.toml``) the lesson joins.
    corpora : Path
        The folder of the lessons' corpora (``tests/lesson_corpora`` in qkv's repository).
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
    >>> new = write_new_lesson(root / "L9", root / "corpora", "L9.1", "First steps")
    >>> sorted(path.name for path in new.folder.iterdir())
    ['grading.py', 'lesson.md', 'lesson.py']
    """
    chapter_id = _chapter_id(chapter)
    _check_new(chapter, corpora, chapter_id, lesson_id, title, widget)
    folder = chapter / lesson_folder_name(lesson_id, title)
    corpus = corpora / lesson_id
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
    return NewLesson(folder, corpus, files)


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
    chapter: Path, corpora: Path, chapter_id: str, lesson_id: str, title: str, widget: str | None
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
    taken += [path for path in (chapter / lesson_id, corpora / lesson_id) if path.exists()]
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
