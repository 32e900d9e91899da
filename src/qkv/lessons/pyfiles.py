"""Importing the Python files of a lesson folder (``lesson.py``, ``grading.py``) as modules of their own.

A lesson folder is data, not a package of qkv: its files are imported by path, each under a module name
made from its folder, and every failure becomes a located :class:`Problem` instead of an exception.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType

from qkv.lessons.model import Problem

__all__ = ["import_lesson_file", "line_in"]


def import_lesson_file(path: Path) -> tuple[ModuleType | None, list[Problem]]:
    """Import ``path`` (a ``.py`` file of a lesson folder); None and the reason when it cannot be.

    Examples
    --------
    >>> import_lesson_file(Path("/nonexistent/lesson.py"))
    (None, [Problem(file=PosixPath('/nonexistent/lesson.py'), line=1, message='This file does not exist.')])
    """
    if not path.is_file():
        return None, [Problem(path, 1, "This file does not exist.")]
    name = "qkv_lesson_" + re.sub(r"\W", "_", f"{path.parent.parent.name}_{path.parent.name}_{path.stem}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None, [Problem(path, 1, "This file cannot be imported as a Python module.")]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        return None, [Problem(path, error.lineno or 1, f"Syntax error: {error.msg}.")]
    except Exception as error:  # the author's code may raise anything; it becomes a located problem
        del sys.modules[name]
        message = f"Importing this file failed with {type(error).__name__}: {error}"
        return None, [Problem(path, line_in(error, path), message)]
    return module, []


def line_in(error: BaseException, path: Path) -> int:
    """The last line of ``path`` in the error's traceback (1 when the file is not in it)."""
    lines = [
        frame.lineno for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename) == path
    ]
    return (lines[-1] or 1) if lines else 1
