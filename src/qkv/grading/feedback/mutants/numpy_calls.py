"""The operators on NumPy calls and checks: ``axis=`` and ``keepdims=`` changed or dropped, a reduction
for its sibling, ``ddof=1``, a one-argument call dropped, a check left out or raising another class.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from qkv.grading.feedback.mutants.arithmetic import CONVERSIONS, _constant_int
from qkv.grading.feedback.mutants.changes import Change, _call_name, _unparse

AXES = (-1, 0, 1, -2)


REDUCTIONS = {
    "sum": ("mean", "max"),
    "mean": ("sum",),
    "max": ("min", "sum"),
    "min": ("max",),
    "var": ("std",),
    "std": ("var",),
    "tril": ("triu",),
    "triu": ("tril",),
    "amax": ("amin",),
    "amin": ("amax",),
}


def _keywords(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if not isinstance(node, ast.Call):
        return
    for index, keyword in enumerate(node.keywords):
        value = keyword.value
        if keyword.arg == "axis":
            current = _constant_int(value)
            for axis in AXES:
                if axis != current:
                    changed = copy.copy(node)
                    changed.keywords = [*node.keywords]
                    changed.keywords[index] = ast.keyword(arg="axis", value=ast.Constant(axis))
                    yield "axis", changed, f"over axis {axis} instead of axis {_unparse(value)}"
            changed = copy.copy(node)
            changed.keywords = [k for k in node.keywords if k.arg not in ("axis", "keepdims")]
            yield "axis", changed, "over the whole array instead of one axis"
        elif keyword.arg == "keepdims" and isinstance(value, ast.Constant) and value.value is True:
            changed = copy.copy(node)
            changed.keywords = [k for k in node.keywords if k.arg != "keepdims"]
            yield "keepdims", changed, "without keepdims=True"
        elif keyword.arg == "k" and _constant_int(value) is not None:
            for step in (1, -1):
                changed = copy.copy(node)
                changed.keywords = [*node.keywords]
                number = (_constant_int(value) or 0) + step
                changed.keywords[index] = ast.keyword(arg="k", value=ast.Constant(number))
                yield "index", changed, f"with k={number} instead of k={_unparse(value)}"


def _reduction(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    name = _call_name(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and name in REDUCTIONS:
        for other in REDUCTIONS[name]:
            changed = copy.copy(node)
            changed.func = ast.Attribute(value=node.func.value, attr=other, ctx=ast.Load())
            yield "reduction", changed, f"with {other} instead of {name}"


def _ddof(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    """A variance or a standard deviation divided by the count − 1 (``ddof=1``), the sample estimate."""
    if (
        isinstance(node, ast.Call)
        and _call_name(node) in ("var", "std", "nanvar", "nanstd")
        and not any(keyword.arg == "ddof" for keyword in node.keywords)
    ):
        changed = copy.copy(node)
        changed.keywords = [*node.keywords, ast.keyword(arg="ddof", value=ast.Constant(1))]
        yield "ddof", changed, "with ddof=1, dividing by the count − 1 instead of the count"


EXCEPTIONS = ("ValueError", "TypeError")  # the classes a check raises, each for the other


def _checks(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    """A check that raises left out (``if cond: raise …`` as if ``cond`` were never true), or its
    exception of another class (``TypeError`` for ``ValueError``)."""
    holder = parents[-1] if parents else None
    if (
        isinstance(holder, ast.If)
        and holder.test is node
        and not holder.orelse
        and all(isinstance(statement, ast.Raise) for statement in holder.body)
    ):
        yield "check", ast.Constant(False), "without the input check that raises"
    if (
        isinstance(node, ast.Name)
        and node.id in EXCEPTIONS
        and len(parents) >= 2
        and isinstance(parents[-1], ast.Call)
        and parents[-1].func is node
        and isinstance(parents[-2], ast.Raise)
    ):
        for other in EXCEPTIONS:
            if other != node.id:
                yield "exception", ast.Name(id=other, ctx=ast.Load()), f"raising {other} instead of {node.id}"


def _calls(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    name = _call_name(node)
    if not isinstance(node, ast.Call) or not node.args or name == "sqrt":
        return
    func = node.func
    numpy_call = (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "np"
    )
    if name in CONVERSIONS and numpy_call:
        yield "in_place", node.args[0], f"working on {_unparse(node.args[0])} itself, not a new array"
    elif numpy_call and len(node.args) == 1 and not node.keywords:
        yield "call", node.args[0], f"without np.{name}"


def _own_calls(node: ast.AST, defined: AbstractSet[str]) -> Iterator[Change]:
    """A call of one of the reference's own functions, of one argument, dropped (``normed(S)`` → ``S``)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in defined
        and len(node.args) == 1
        and not node.keywords
    ):
        yield "call", node.args[0], f"without {node.func.id}(…)"
