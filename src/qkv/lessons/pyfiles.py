"""Importing the Python files of lesson content as modules of their own.

A lesson folder is data, not a package of qkv: its files (``lesson.py``, ``grading.py``) are imported by
path, each under a module name made from its folder, and every failure becomes a located :class:`Problem`
instead of an exception.

A chapter folder may hold a ``chapter.py`` with what its lessons share. It is imported once (again only
when the file changes) under a module name made from its path, so that two content folders with a chapter
of the same name never meet in ``sys.modules``. While one of the chapter's lesson files is imported, the
chapter module, and only it, answers to the name :data:`CHAPTER_MODULE`: a lesson file writes
``from chapter import WORKED`` at its top level, and the name means nothing anywhere else.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
import traceback
from pathlib import Path
from types import ModuleType

from qkv.lessons.model import Problem

__all__ = ["CHAPTER_FILE", "CHAPTER_MODULE", "import_chapter_module", "import_lesson_file", "line_in"]

CHAPTER_FILE = "chapter.py"
CHAPTER_MODULE = "chapter"
_CHAPTER_SETTINGS = "chapter.toml"

# Lesson files are imported while CHAPTER_MODULE names their chapter: one import at a time, so that two
# threads loading two chapters never see each other's. Re-entrant: a chapter module imports no lesson
# file, but nothing is lost if a lesson file ever triggers another load.
_IMPORTING = threading.RLock()
# The chapter modules imported so far, by file: the (mtime, size) they were imported at, the module and
# why it could not be imported. A chapter edited on disk (as the tests do) is imported afresh.
_CHAPTERS: dict[Path, tuple[tuple[int, int], ModuleType | None, list[Problem]]] = {}


def import_lesson_file(path: Path) -> tuple[ModuleType | None, list[Problem]]:
    """Import ``path`` (a ``.py`` file of a lesson folder); None and the reason when it cannot be.

    When the lesson's chapter folder holds a ``chapter.py``, the file may import it as ``chapter``; when
    that module cannot be imported, neither can the file, and the reason given is the chapter's.

    Examples
    --------
    >>> import_lesson_file(Path("/nonexistent/lesson.py"))
    (None, [Problem(file=PosixPath('/nonexistent/lesson.py'), line=1, message='This file does not exist.')])
    """
    if not path.is_file():
        return None, [Problem(path, 1, "This file does not exist.")]
    name = "qkv_lesson_" + re.sub(r"\W", "_", f"{path.parent.parent.name}_{path.parent.name}_{path.stem}")
    with _IMPORTING:
        chapter, problems = import_chapter_module(path.parent.parent)
        if problems:
            return None, problems
        return _exec_file(path, name, chapter)


def import_chapter_module(folder: Path) -> tuple[ModuleType | None, list[Problem]]:
    """The ``chapter.py`` of the chapter folder ``folder``, imported once; None when there is none.

    Parameters
    ----------
    folder : Path
        A chapter folder (one with ``chapter.toml``); any other folder has no chapter module.

    Returns
    -------
    module : module or None
        None when the folder has no chapter module, or when it cannot be imported.
    problems : list of Problem
        Why it cannot be imported, located as ``file:line``.

    Examples
    --------
    >>> import_chapter_module(Path("/nonexistent"))
    (None, [])
    """
    path = folder / CHAPTER_FILE
    if not (folder / _CHAPTER_SETTINGS).is_file() or not path.is_file():
        return None, []
    key = path.resolve()
    status = key.stat()
    stamp = (status.st_mtime_ns, status.st_size)
    with _IMPORTING:
        known = _CHAPTERS.get(key)
        if known is not None and known[0] == stamp:
            return known[1], list(known[2])
        # The path's digest keeps two copies of one chapter (a test's temporary copy) apart.
        digest = hashlib.sha256(str(key).encode()).hexdigest()[:12]
        name = "qkv_chapter_" + re.sub(r"\W", "_", folder.name) + "_" + digest
        module, problems = _exec_file(path, name, None)
        _CHAPTERS[key] = (stamp, module, problems)
        return module, list(problems)


def _exec_file(path: Path, name: str, chapter: ModuleType | None) -> tuple[ModuleType | None, list[Problem]]:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None, [Problem(path, 1, "This file cannot be imported as a Python module.")]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    shadowed = sys.modules.get(CHAPTER_MODULE)
    if chapter is not None:
        sys.modules[CHAPTER_MODULE] = chapter
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        return None, [Problem(path, error.lineno or 1, f"Syntax error: {error.msg}.")]
    except Exception as error:  # the author's code may raise anything; it becomes a located problem
        del sys.modules[name]
        message = f"Importing this file failed with {type(error).__name__}: {error}"
        return None, [Problem(path, line_in(error, path), message)]
    finally:
        if chapter is not None:  # the name is the chapter's only while its lesson file runs
            if shadowed is None:
                del sys.modules[CHAPTER_MODULE]
            else:
                sys.modules[CHAPTER_MODULE] = shadowed
    return module, []


def line_in(error: BaseException, path: Path) -> int:
    """The last line of ``path`` in the error's traceback (1 when the file is not in it)."""
    lines = [
        frame.lineno for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == path
    ]
    return (lines[-1] or 1) if lines else 1
