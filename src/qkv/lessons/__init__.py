"""The lesson engine: lessons written as data, rendered to HTML and checked.

A lesson is a folder with ``lesson.md`` (Markdown with exercise and widget directives) and, where
needed, ``lesson.py`` (variants and named wrong answers) and ``grading.py``; a chapter folder lists its
lessons in ``chapter.toml``, holds the chapter reference and, optionally, ``chapter.py`` with what its
lessons share. The web app and the CLI share this one API::

    >>> from qkv.lessons import load_catalog
    >>> catalog = load_catalog()
    >>> lesson = catalog.lessons[0]                      # the first written lesson
    >>> count = len(catalog.chapters[0].lesson_ids)
    >>> lesson.place.endswith(f"lesson 1 of {count}"), sorted({ex.kind for ex in lesson.exercises.values()})
    (True, ['choice', 'code', 'letter', 'numeric'])
    >>> [section.id for section in lesson.render()][-1]  # every page ends with the chapter reference
    'reference'
    >>> [entry.id.startswith(lesson.id + "/") for entry in catalog.code_exercises()][0]
    True
"""

from qkv.lessons.catalog import Catalog, Chapter, CodeExercise, Lesson
from qkv.lessons.feedback import CHECKER_MISTAKES
from qkv.lessons.loader import BUILTIN_CONTENT, load_catalog, validate
from qkv.lessons.model import (
    SOLUTION_AFTER_FAILED_RUNS,
    Exercise,
    Feedback,
    LessonError,
    LessonPart,
    PlannedLesson,
    Problem,
    RenderedSection,
)

__all__ = [
    "BUILTIN_CONTENT",
    "CHECKER_MISTAKES",
    "SOLUTION_AFTER_FAILED_RUNS",
    "Catalog",
    "Chapter",
    "CodeExercise",
    "Exercise",
    "Feedback",
    "Lesson",
    "LessonError",
    "LessonPart",
    "PlannedLesson",
    "Problem",
    "RenderedSection",
    "load_catalog",
    "validate",
]
