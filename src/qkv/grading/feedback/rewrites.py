"""Mutations that move or copy a piece of a reference across its statements: a residual connection
(``x + f(g(x))``) with the call on ``x`` taken out of the branch and put around the sum, the residual
taken from that call instead of from ``x``, and the input added to a sum once more.

They are the mistakes of where a normalisation or a residual goes (a learner's block that normalises
after adding instead of before, that adds the normalised input back, that adds its input twice), said
generically: nothing here knows what the call does, only where it stands. A rewrite may change two
statements at once (a call in ``y = f(g(x))`` and the sum in ``z = x + y``), so each is a list of edits,
each an AST path and the node that replaces the one there. :mod:`qkv.grading.feedback.mutants` turns them into
mutations.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Rewrite", "rewrites"]

Path = tuple[tuple[str, int | None], ...]


@dataclass(frozen=True)
class Rewrite:
    """One rewrite: the main edit (whose expression the words quote), other edits, and the words."""

    path: Path
    node: ast.AST
    parents: tuple[ast.AST, ...]
    replacement: ast.AST
    words: str
    more: tuple[tuple[Path, ast.AST, ast.AST], ...] = ()  # (path, the node there, what replaces it)


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "…"


def _nodes(root: ast.AST, path: Path) -> Iterator[tuple[Path, ast.AST, tuple[ast.AST, ...]]]:
    """Every node under ``root`` with its path and its ancestors (nearest last)."""
    stack: list[tuple[Path, ast.AST, tuple[ast.AST, ...]]] = [(path, root, ())]
    while stack:
        here, node, parents = stack.pop()
        yield here, node, parents
        for field, value in ast.iter_fields(node):
            if not isinstance(value, ast.AST | list):
                continue
            items = [(None, value)] if isinstance(value, ast.AST) else list(enumerate(value))
            for index, child in items:
                if isinstance(child, ast.AST):
                    stack.append(((*here, (field, index)), child, (*parents, node)))


def _single_assignments(function: ast.FunctionDef, path: Path) -> dict[str, tuple[Path, ast.AST]]:
    """The names the function assigns exactly once (``y = …``), with the path and node of the value."""
    counts: dict[str, int] = {}
    values: dict[str, tuple[Path, ast.AST]] = {}
    for index, statement in enumerate(function.body):
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            counts[name.id] = counts.get(name.id, 0) + 1
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            values[statement.targets[0].id] = ((*path, ("body", index), ("value", None)), statement.value)
    return {name: found for name, found in values.items() if counts.get(name) == 1}


def _call_on(name: str, root: ast.AST, path: Path) -> tuple[Path, ast.Call, tuple[ast.AST, ...]] | None:
    """The first call under ``root`` (not ``root`` itself) whose first argument is the name ``name``."""
    for here, node, parents in _nodes(root, path):
        if (
            node is not root
            and isinstance(node, ast.Call)
            and node.args
            and _name(node.args[0]) == name
            and not node.keywords
        ):
            return here, node, parents
    return None


def rewrites(function: ast.FunctionDef, path: Path) -> list[Rewrite]:
    """Every rewrite of ``function`` (a function of the reference at ``path``) around its sums.

    Examples
    --------
    >>> tree = ast.parse("def f(x, g):\\n    y = h(norm(x, g))\\n    return x + y\\n")
    >>> for rewrite in rewrites(tree.body[0], (("body", 0),)):
    ...     print(rewrite.words)
    with norm applied after the residual + instead of before the branch
    with the residual taken from norm(x, …) instead of x
    """
    assigned = _single_assignments(function, path)
    params = {arg.arg for arg in function.args.args}
    added = [n for n in ast.walk(function) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add)]
    residuals = {_name(side) for n in added for side in (n.left, n.right)} & params  # inputs added to
    found: list[Rewrite] = []
    for here, node, parents in _nodes(function, path):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add):
            continue
        for side in ("left", "right"):
            found += _around(node, side, here, parents, assigned)
        holder = parents[-1] if parents else None
        if isinstance(holder, ast.Return | ast.Assign) and holder.value is node:
            found += _extra_terms(node, here, parents, residuals)
    return found


def _around(
    node: ast.BinOp,
    side: str,
    path: Path,
    parents: tuple[ast.AST, ...],
    assigned: dict[str, tuple[Path, ast.AST]],
) -> list[Rewrite]:
    """``x + branch`` where the branch (or the value of the name it is) holds a call on ``x``."""
    stream = _name(getattr(node, side))
    other_side = "right" if side == "left" else "left"
    branch = getattr(node, other_side)
    if stream is None:
        return []
    through = assigned.get(_name(branch) or "")
    root_path, root = through if through is not None else ((*path, (other_side, None)), branch)
    found = _call_on(stream, root, root_path)
    if found is None:
        return []
    call_path, call, _ = found
    rest = [copy.deepcopy(arg) for arg in call.args[1:]]
    stream_node = ast.Name(id=stream, ctx=ast.Load())
    if through is None:  # the call is inside the sum: one edit, the sum rebuilt with x in the call's place
        summed = copy.deepcopy(node)
        _swap_in(summed, node, call, stream_node)
        more: tuple[tuple[Path, ast.AST, ast.AST], ...] = ()
    else:
        summed = node
        more = ((call_path, call, stream_node),)
    moved = ast.Call(func=call.func, args=[summed, *rest], keywords=[])
    name = _callee(call)
    return [
        Rewrite(
            path,
            node,
            parents,
            moved,
            f"with {name} applied after the residual + instead of before the branch",
            more,
        ),
        Rewrite(
            (*path, (side, None)),
            getattr(node, side),
            (*parents, node),
            copy.deepcopy(call),
            f"with the residual taken from {name}({stream}, …) instead of {stream}",
        ),
    ]


def _swap_in(copied: ast.AST, original: ast.AST, target: ast.AST, replacement: ast.AST) -> bool:
    """In ``copied`` (a deep copy of ``original``), put ``replacement`` where ``target`` was."""
    for (field, value), (_, copied_value) in zip(
        ast.iter_fields(original), ast.iter_fields(copied), strict=True
    ):
        pairs = (
            [(None, value, copied_value)]
            if isinstance(value, ast.AST)
            else list(zip(range(len(value)), value, copied_value, strict=True))
            if isinstance(value, list)
            else []
        )
        for index, child, copied_child in pairs:
            if child is target:
                if index is None:
                    setattr(copied, field, replacement)
                else:
                    getattr(copied, field)[index] = replacement
                return True
            if isinstance(child, ast.AST) and _swap_in(copied_child, child, target, replacement):
                return True
    return False


def _extra_terms(
    node: ast.BinOp, path: Path, parents: tuple[ast.AST, ...], residuals: set[str | None]
) -> list[Rewrite]:
    """``a + b`` (a whole returned or assigned sum) with a residual input added once more."""
    operands = {_name(n) for n in ast.walk(node)}
    found = []
    for name in sorted(n for n in residuals if n is not None and n not in operands):
        extra = ast.BinOp(
            left=ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=ast.Add(), right=node.left),
            op=ast.Add(),
            right=node.right,
        )
        found.append(Rewrite(path, node, parents, extra, f"with {name} added once more"))
    return found
