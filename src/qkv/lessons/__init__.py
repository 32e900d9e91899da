"""The lesson engine: lessons written as data, rendered to HTML and checked.

A lesson is a folder with ``lesson.md`` (Markdown with exercise and widget directives) and, where
needed, ``lesson.py`` (variants and named wrong answers); a chapter folder lists its lessons in
``chapter.toml`` and holds the chapter reference. The web app and the CLI share this one API::

    >>> from qkv.lessons import load_catalog
    >>> lesson = load_catalog().lesson("L4.1")
    >>> lesson.title, list(lesson.exercises)
    ('Queries, keys and values', ['q', 'k', 'v', 'averaged', 'functions', 'quiz'])
    >>> lesson.check("q", "[3, 2]").correct
    True
    >>> [section.id for section in lesson.render()]
    ['idea', 'part1', 'part2', 'quiz', 'reference']
"""

from qkv.lessons.catalog import Catalog, Chapter, CodeExercise, Lesson
from qkv.lessons.loader import BUILTIN_CONTENT, load_catalog, validate
from qkv.lessons.model import (
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
