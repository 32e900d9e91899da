"""Python syntax trees made and compiled one thread at a time in this process.

CPython 3.11 counts the depth of its conversion between its own syntax tree and Python's ``ast`` objects
in state the whole interpreter shares. Two threads converting at once (a garbage collection in one lets
the other run) can make either fail with ``SystemError: AST constructor recursion depth mismatch``
(CPython issue 106905, fixed in later versions). A server makes trees on many threads: a program's
canonical form on every run, the feedback's reading of a failed program, the reference's mutants. So
every ``ast.parse`` and every compilation of a tree in qkv goes through :func:`parse` and
:func:`compile_tree`, which take one lock (``tests/grading/test_syntax_trees.py`` holds the rule). Compiling
source text makes no ``ast`` objects and needs no lock.
"""

from __future__ import annotations

import ast
import threading
from types import CodeType

__all__ = ["compile_tree", "parse"]

_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time.

    Parameters
    ----------
    source : str
        Python source text: a module.

    Returns
    -------
    ast.Module
        Its tree.

    Raises
    ------
    SyntaxError
        If the text is no valid Python (and ``ValueError`` for a NUL in it, as ``ast.parse``).

    Examples
    --------
    >>> type(parse("x = 1")).__name__
    'Module'
    >>> parse("x +")
    Traceback (most recent call last):
    ...
    SyntaxError: invalid syntax
    """
    with _LOCK:
        return ast.parse(source)


def compile_tree(tree: ast.Module, filename: str) -> CodeType:
    """``compile(tree, filename, "exec")`` of a module's syntax tree, one thread at a time.

    Parameters
    ----------
    tree : ast.Module
        A tree made by :func:`parse`, changed or not.
    filename : str
        The name tracebacks give the code.

    Returns
    -------
    types.CodeType

    Examples
    --------
    >>> namespace = {}
    >>> exec(compile_tree(parse("y = 6 * 7"), "<example>"), namespace)
    >>> namespace["y"]
    42
    """
    with _LOCK:
        return compile(tree, filename, "exec")
