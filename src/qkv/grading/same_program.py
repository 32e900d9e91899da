"""Whether two programs are the same program: equal once names, layout, comments and docstrings are set aside.

A program is reduced to a canonical text (``canonical_program``): it is parsed, every docstring is dropped
(comments and layout never reach the syntax tree), and the names each function binds for itself (its
parameters, the variables it assigns, its loop and ``with`` and ``except`` names, those of its
comprehensions) are renamed in the order they first appear, ``_v0``, ``_v1``, …; then the tree is written
back out with ``ast.unparse``. The names a program shares with its callers (the functions it defines, the
modules it imports, globals, attributes, keyword arguments) keep theirs, so two programs with the same
canonical text compute the same way with the same parts. Used to notice a program that is an exercise's
reference solution, whoever was shown it, and to group learners whose programs are the same.
"""

from __future__ import annotations

import ast

from qkv.grading.syntax_trees import parse

__all__ = ["canonical_program", "same_program"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def canonical_program(source: str) -> str | None:
    """The program's canonical text, or None when it is not valid Python.

    Parameters
    ----------
    source : str
        A program's text.

    Returns
    -------
    str or None
        Equal for two programs that differ only in their functions' own names, layout, comments and
        docstrings.

    Examples
    --------
    >>> print(canonical_program('def area(w, h):\\n    "The area."\\n    return w * h  # width times height'))
    def area(_v0, _v1):
        return _v0 * _v1
    >>> canonical_program("def broken(:") is None
    True
    """
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    _drop_docstrings(tree)
    for function in _outermost_functions(tree):
        _rename_locals(function)
    try:
        return ast.unparse(tree)
    except RecursionError:
        return None


def same_program(first: str, second: str) -> bool:
    """Whether two programs have the same canonical text (and both are valid Python).

    Examples
    --------
    >>> mine = "def f(a):  # mine\\n    b = a+1\\n    return b"
    >>> same_program("def f(x):\\n    y = x + 1\\n    return y\\n", mine)
    True
    >>> same_program("def f(x):\\n    return x + 1\\n", "def f(x):\\n    return 1 + x\\n")
    False
    """
    canonical = canonical_program(first)
    return canonical is not None and canonical == canonical_program(second)


def _drop_docstrings(tree: ast.Module) -> None:
    """Remove the docstring of the module, of each class and of each function (a body keeps a ``pass``)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]


def _rename_locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
    """Rename the names ``function`` binds for itself (not those it declares global or nonlocal)."""
    nodes = list(ast.walk(function))  # walked once: the walk costs more than the three loops over it
    shared: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Global | ast.Nonlocal):
            shared.update(node.names)
    own = [name for name in _bound_names(nodes) if name not in shared]
    canonical = {name: f"_v{index}" for index, name in enumerate(dict.fromkeys(own))}
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in canonical:
            node.id = canonical[node.id]
        elif isinstance(node, ast.arg) and node.arg in canonical:
            node.arg = canonical[node.arg]
        elif isinstance(node, ast.ExceptHandler) and node.name in canonical:
            node.name = canonical[node.name]


def _outermost_functions(node: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda]:
    """The functions (and lambdas) not inside another function: a nested one is part of its scope."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _FUNCTIONS):
            found.append(child)
        else:
            found += _outermost_functions(child)
    return found


def _bound_names(nodes: list[ast.AST]) -> list[str]:
    """The names a function's ``nodes`` (with those of the functions inside it) bind, in the order of
    its text."""
    found: list[tuple[int, int, str]] = []
    for node in nodes:
        if isinstance(node, ast.arg):
            found.append((node.lineno, node.col_offset, node.arg))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.col_offset, node.id))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.append((node.lineno, node.col_offset, node.name))
    return [name for _, _, name in sorted(found)]
