"""The operators on a function's names: one named size for another, another array as an operand, a
stricter check, a numbered name for its sibling, a parameter replaced by its default.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator, Sequence

from qkv.grading.feedback.mutants.arithmetic import CONVERSIONS
from qkv.grading.feedback.mutants.changes import Change, _call_name, _unparse, _walk
from qkv.grading.feedback.sizes import reference_axes


def _size_parameters(function: ast.FunctionDef) -> list[str]:
    """The parameters the function uses as numbers, never as arrays: no attribute, index or ``@`` of
    theirs, and not converted by NumPy (a shape's n_q, n_k and d_v; the h of a split into heads)."""
    params = [arg.arg for arg in function.args.args if arg.arg != "self"]
    arrays: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.value, ast.Name):
            arrays.add(node.value.id)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            arrays |= {side.id for side in (node.left, node.right) if isinstance(side, ast.Name)}
        elif isinstance(node, ast.Call) and _call_name(node) in CONVERSIONS:
            arrays |= {arg.id for arg in node.args if isinstance(arg, ast.Name)}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            arrays |= {e.id for e in node.value.elts if isinstance(e, ast.Name)}  # X, W = (np.asarray(a) …)
    return [name for name in params if name not in arrays]


def _size_names(function: ast.FunctionDef, source: str) -> list[str]:
    axes, derived = reference_axes(source, function.name)
    names = [name for listed in axes.values() for name in listed if name]
    names += _size_parameters(function)
    for assign in derived:
        used = {n.id for n in ast.walk(assign.value) if isinstance(n, ast.Name)}
        pure = all(
            isinstance(n, ast.Name | ast.Constant | ast.BinOp | ast.operator | ast.expr_context)
            for n in ast.walk(assign.value)
        )
        if (
            pure
            and used <= set(names) | {a.arg for a in function.args.args}
            and isinstance(assign.targets[0], ast.Name)
        ):
            names.append(assign.targets[0].id)
    return list(dict.fromkeys(names))


def _sizes(node: ast.AST, parents: list[ast.AST], names: Sequence[str]) -> Iterator[Change]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        for other in names:
            if other != node.id:
                yield "size", ast.Name(id=other, ctx=ast.Load()), f"with {other} where {node.id} belongs"


def _array_names(function: ast.FunctionDef, sizes: Sequence[str]) -> list[str]:
    """The function's parameters and the names it assigns, except its sizes: the operands it has."""
    names = [arg.arg for arg in function.args.args]
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return [name for name in dict.fromkeys(names) if name not in sizes]


def _operands(node: ast.AST, parents: list[ast.AST], names: Sequence[str]) -> Iterator[Change]:
    """Another array of the function in place of one operand of ``@``, ``*``, ``+`` or ``-`` (A @ K for
    A @ V). The change is the operand's own node, so two of them make a pair (two operands exchanged)."""
    if not isinstance(node, ast.Name) or node.id not in names or not parents:
        return
    parent = parents[-1]
    if not isinstance(parent, ast.BinOp) or not isinstance(
        parent.op, ast.MatMult | ast.Mult | ast.Add | ast.Sub
    ):
        return
    for other in names:
        if other != node.id:
            yield "operand", ast.Name(id=other, ctx=ast.Load()), f"with {other} where {node.id} belongs"


def _stricter(node: ast.AST, parents: list[ast.AST], names: Sequence[str]) -> Iterator[Change]:
    """A check that compares one array more: ``a.shape[1] != b.shape[1]`` that also raises where a third
    array ``c`` differs (``… or a.shape[1] != c.shape[1]``), a check stricter than the reference's."""
    holder = parents[-1] if parents else None
    if not (
        isinstance(holder, ast.If)
        and holder.test is node
        and isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.NotEq)
        and all(isinstance(statement, ast.Raise) for statement in holder.body)
    ):
        return
    left, right = _named_once(node.left, names), _named_once(node.comparators[0], names)
    if left is None or right is None or left == right:
        return
    for other in names:
        if other in (left, right):
            continue
        third = _with_name(node.comparators[0], right, other)
        if ast.dump(third) != ast.dump(_with_name(node.left, left, other)):
            continue  # the two sides are not the same expression of two arrays
        assert isinstance(third, ast.expr)  # a copy of the right side, one name changed
        extra = ast.Compare(left=copy.deepcopy(node.left), ops=[ast.NotEq()], comparators=[third])
        yield "strict", ast.BoolOp(op=ast.Or(), values=[node, extra]), f"with {other} compared too"


def _named_once(node: ast.AST, names: Sequence[str]) -> str | None:
    """The one array name an expression reads, or None (none, or several)."""
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in names}
    return found.pop() if len(found) == 1 else None


def _with_name(node: ast.AST, old: str, new: str) -> ast.AST:
    """A copy of ``node`` that reads ``new`` wherever it read ``old``."""
    copied = copy.deepcopy(node)
    for n in ast.walk(copied):
        if isinstance(n, ast.Name) and n.id == old:
            n.id = new
    return copied


def _token(node: ast.AST, parents: list[ast.AST]) -> str | None:
    """The name a node stands for, where another name could take its place: a variable read, an
    attribute (``self.norm1``) or a string key (``p["ln1_g"]``)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        return node.attr
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and parents
        and isinstance(parents[-1], ast.Subscript)
        and parents[-1].slice is node
    ):
        return node.value
    return None


def _sibling_names(function: ast.FunctionDef) -> dict[str, list[str]]:
    """The names, attributes and keys of ``function`` that differ from another of them only in their
    digits (``ln1_g`` and ``ln2_g``, ``norm1`` and ``norm2``, ``W1`` and ``W2``): numbered parts of one
    kind, where using one for the other is a slip that runs."""
    tokens: set[str] = set()
    for _, node, parents in _walk(function):
        token = _token(node, parents)
        if token is not None and any(c.isdigit() for c in token):
            tokens.add(token)
    groups: dict[str, list[str]] = {}
    for token in sorted(tokens):
        groups.setdefault(re.sub(r"\d+", "#", token), []).append(token)
    return {
        token: [o for o in group if o != token]
        for group in groups.values()
        for token in group
        if len(group) > 1
    }


def _renamed(node: ast.AST, token: str) -> ast.AST:
    if isinstance(node, ast.Name):
        return ast.Name(id=token, ctx=ast.Load())
    if isinstance(node, ast.Attribute):
        changed = copy.copy(node)
        changed.attr = token
        return changed
    return ast.Constant(token)


def _siblings(node: ast.AST, parents: list[ast.AST], siblings: dict[str, list[str]]) -> Iterator[Change]:
    """One numbered name for its sibling (``p["ln1_g"]`` for ``p["ln2_g"]``); and every numbered name
    of a call's arguments at once (the call given the parameters of its sibling call)."""
    token = _token(node, parents)
    for other in siblings.get(token or "", []):
        yield "sibling", _renamed(node, other), f"with {other} where {token} belongs"
    if not isinstance(node, ast.Call):
        return
    # The call's own arguments only (a name, an attribute, a key): a nested call has its own turn.
    direct: list[tuple[ast.AST, list[ast.AST]]] = [(arg, [node]) for arg in node.args]
    direct += [(arg.slice, [node, arg]) for arg in node.args if isinstance(arg, ast.Subscript)]
    found = [(arg, holders) for arg, holders in direct if (_token(arg, holders) or "") in siblings]
    if len(found) < 2:
        return
    tokens = [_token(n, p) or "" for n, p in found]
    for digits in sorted({_digits(other) for other in siblings[tokens[0]]}):
        mapping = {t: next((o for o in siblings[t] if _digits(o) == digits), None) for t in tokens}
        if any(other is None for other in mapping.values()):
            continue
        changed = copy.deepcopy(node)
        for copied, original in zip(ast.walk(changed), ast.walk(node), strict=True):
            _retoken(copied, original, mapping, found)
        olds, news = (
            ", ".join(dict.fromkeys(tokens)),
            ", ".join(dict.fromkeys(str(v) for v in mapping.values())),
        )
        yield "sibling", changed, f"with {news} where {olds} belong"


def _digits(token: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\d+", token))


def _retoken(
    copied: ast.AST,
    original: ast.AST,
    mapping: dict[str, str | None],
    found: list[tuple[ast.AST, list[ast.AST]]],
) -> None:
    """Rename ``copied`` (a deep copy of ``original``) when ``original`` is one of the names found."""
    if not any(original is node for node, _ in found):
        return
    if isinstance(copied, ast.Name):
        copied.id = mapping.get(copied.id) or copied.id
    elif isinstance(copied, ast.Attribute):
        copied.attr = mapping.get(copied.attr) or copied.attr
    elif isinstance(copied, ast.Constant) and isinstance(copied.value, str):
        copied.value = mapping.get(copied.value) or copied.value


def _defaults(function: ast.FunctionDef) -> dict[str, ast.expr]:
    arguments = function.args
    positional = arguments.args[len(arguments.args) - len(arguments.defaults) :]
    pairs = [
        *zip(positional, arguments.defaults, strict=True),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]
    return {
        arg.arg: value
        for arg, value in pairs
        if isinstance(value, ast.Constant)
        and isinstance(value.value, int | float)
        and not isinstance(value.value, bool)
    }


def _default(node: ast.AST, defaults: dict[str, ast.expr]) -> Iterator[Change]:
    """A parameter read replaced by its default: the value the caller gave ignored (eps written 1e-5)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defaults:
        value = defaults[node.id]
        words = f"with {_unparse(value)}, the default of {node.id}, where {node.id} belongs"
        yield "default", ast.Constant(getattr(value, "value", None)), words
