"""The named sizes of one call: ``n = 9, d_model = 4, d_k = 3`` for ``project(X, Wq, Wk, Wv)``.

Sentences about a wrong value are written in the call's own terms ("(9, 4) is (n, d_model)"), so the
grader needs the names of the sizes a call holds. They come from three places, none of them a lesson:

* whole-number arguments are sizes under their parameter's name (``shape_of(n_q, n_k, d_v)``);
* a suite may declare the axes of its array parameters (``Suite(shapes={"Q": ("n_q", "d_k")})``);
* the reference solution names them itself: ``n, d_model = X.shape``, ``d_k = np.shape(Q)[1]``,
  ``d_head = d_model // h`` (read from its syntax tree, never run), and the comment on its ``return``
  line names the result's axes: ``return A @ V, A  # (n_q, d_v), (n_q, n_k)``.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from qkv.grading.syntax_trees import parse

__all__ = [
    "AxisNames",
    "call_sizes",
    "output_sizes",
    "reference_axes",
    "reference_outputs",
    "reference_params",
]

AxisNames = Mapping[str, Sequence[str | None]]
"""Per parameter, the name of each of its axes (None for an axis without one)."""


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


@functools.lru_cache(maxsize=256)
def reference_params(source: str | None, function: str) -> list[str] | None:
    """The parameter names of ``function`` in the reference solution, or None when it has none.

    Examples
    --------
    >>> reference_params("def f(Q, K, *, scale=1.0):\\n    return Q\\n", "f")
    ['Q', 'K', 'scale']
    """
    tree = _parse(source)
    found = _function(tree, function) if tree else None
    if found is None:
        return None
    arguments = found.args
    return [arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]


@functools.lru_cache(maxsize=64)
def _parse(source: str | None) -> ast.Module | None:
    """The reference's tree, parsed once per process (the functions below only read it)."""
    if not source:
        return None
    try:
        return parse(source)
    except SyntaxError:
        return None


def _shape_of(node: ast.expr) -> str | None:
    """``P`` when ``node`` is ``P.shape`` or ``np.shape(P)``."""
    if isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name):
        return node.value.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "shape"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    ):
        return node.args[0].id
    return None


@functools.lru_cache(maxsize=256)
def reference_axes(source: str | None, function: str) -> tuple[dict[str, list[str | None]], list[ast.Assign]]:
    """The axes the reference names (``n, d_model = X.shape``) and its other size assignments.

    Returns
    -------
    axes : dict
        Per parameter, a name per axis (None where it names none).
    derived : list of ast.Assign
        Assignments of one name from sizes (``d_head = d_model // h``), in order, to evaluate per call.

    Examples
    --------
    >>> axes, derived = reference_axes(
    ...     "def f(X, h):\\n    n, d = X.shape\\n    k = np.shape(X)[1]\\n    e = d // h\\n", "f")
    >>> axes["X"], [ast.unparse(a) for a in derived]
    (['n', 'd'], ['e = d // h'])
    """
    tree = _parse(source)
    found = _function(tree, function) if tree else None
    axes: dict[str, list[str | None]] = {}
    derived: list[ast.Assign] = []
    if found is None:
        return axes, derived
    for node in ast.walk(found):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        owner = _shape_of(value)
        if owner and isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = [e.id for e in target.elts if isinstance(e, ast.Name)]
            axes[owner] = [*names]
        elif (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Subscript)
            and _shape_of(value.value)
            and isinstance(value.slice, ast.Constant)
            and isinstance(value.slice.value, int)
        ):
            owner, index = _shape_of(value.value), value.slice.value
            assert owner is not None
            listed = axes.setdefault(owner, [])
            listed += [None] * (index + 1 - len(listed))
            listed[index] = listed[index] or target.id
        elif isinstance(target, ast.Name) and isinstance(value, ast.BinOp):
            derived.append(node)
    return axes, derived


def _evaluate(node: ast.expr, known: Mapping[str, int]) -> int | None:
    """A whole-number expression of known sizes (``d_model // h``), or None."""
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, known), _evaluate(node.right, known)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.FloorDiv) and right:
            return left // right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
    return None


def call_sizes(
    args: Sequence[Any],
    params: Sequence[str] | None,
    declared: AxisNames | None = None,
    reference: tuple[dict[str, list[str | None]], list[ast.Assign]] | None = None,
) -> list[tuple[str, int]]:
    """The named sizes of a call, in the order found, each name once.

    Examples
    --------
    >>> call_sizes((np.zeros((9, 4)), np.zeros((4, 3)), 2), ["X", "W", "h"], {"W": ("d_model", "d_k")},
    ...            ({"X": ["n", "d_model"]}, []))
    [('h', 2), ('n', 9), ('d_model', 4), ('d_k', 3)]
    """
    known: dict[str, int] = {}
    if params is None:
        return []
    named = dict(zip(params, args, strict=False))
    for name, value in named.items():
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**9:
            known.setdefault(name, value)
    axes, derived = reference or ({}, [])
    tables: list[Mapping[str, Sequence[str | None]]] = [axes, declared or {}]
    for table in tables:
        for param, names in table.items():
            shape = np.shape(named[param]) if param in named and _has_shape(named[param]) else ()
            for axis, axis_name in zip(shape, names, strict=False):
                if axis_name:
                    known.setdefault(axis_name, int(axis))
    for assign in derived:
        target = assign.targets[0]
        value = _evaluate(assign.value, known)
        if isinstance(target, ast.Name) and value is not None and value > 0:
            known.setdefault(target.id, value)
    return list(known.items())


def _has_shape(value: Any) -> bool:
    try:
        return np.asarray(value).dtype.kind in "biuf"
    except (TypeError, ValueError):
        return False


@functools.lru_cache(maxsize=256)
def reference_outputs(source: str | None, function: str) -> list[list[str]]:
    """The axis names that the comment of ``function``'s return line gives its result, one list per array.

    Examples
    --------
    >>> reference_outputs("def f(Q, V):\\n    return Q @ V, Q  # (n_q, d_v), (n_q, d_k)\\n", "f")
    [['n_q', 'd_v'], ['n_q', 'd_k']]
    """
    tree = _parse(source)
    found = _function(tree, function) if tree else None
    if found is None or source is None:
        return []
    lines = source.splitlines()
    shapes: list[list[str]] = []
    for node in ast.walk(found):
        if not isinstance(node, ast.Return) or node.end_lineno is None:
            continue
        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        comment = text.split("#", 1)[1] if "#" in text else ""
        for group in re.findall(r"\(([^()]*)\)", comment):
            names = [name.strip() for name in group.split(",") if name.strip()]
            if names and all(name.isidentifier() for name in names):
                shapes.append(names)
    return shapes


def output_sizes(expected: Any, outputs: Sequence[Sequence[str]]) -> list[tuple[str, int]]:
    """Sizes named by the reference's return comment, read from the expected value's shapes.

    Examples
    --------
    >>> output_sizes((np.zeros((2, 5)), np.zeros((2, 3))), [["n_q", "d_v"], ["n_q", "n_k"]])
    [('n_q', 2), ('d_v', 5), ('n_k', 3)]
    """
    arrays = list(expected) if isinstance(expected, tuple | list) else [expected]
    found: dict[str, int] = {}
    for value, names in zip(arrays, outputs, strict=False):
        shape = np.shape(value) if _has_shape(value) else ()
        if len(shape) != len(names):
            continue
        for name, size in zip(names, shape, strict=True):
            found.setdefault(name, int(size))
    return list(found.items())
