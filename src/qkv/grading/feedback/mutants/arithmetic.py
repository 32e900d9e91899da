"""The operators on arithmetic: an operand of ``@`` transposed, a term dropped, a square root dropped or
added, ``*`` for ``/``, a number changed, an index or bound shifted, two operands swapped, a term moved
into or out of a call, an array changed in place (the module table of :mod:`qkv.grading.feedback.mutants`).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

from qkv.grading.feedback.mutants.changes import FRAGMENT_LIMIT, OPERATORS, Change, _call_name, _np, _unparse

CONVERSIONS = ("asarray", "array", "asanyarray", "copy")


COMPARISONS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}


NEGATIONS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def _transpose(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        for side in ("left", "right"):
            operand = getattr(node, side)
            if isinstance(operand, ast.Attribute) and operand.attr == "T":
                continue
            changed = copy.copy(node)
            setattr(changed, side, ast.Attribute(value=operand, attr="T", ctx=ast.Load()))
            yield "transpose", changed, f"the {side} operand of @ transposed"
    if isinstance(node, ast.Attribute) and node.attr == "T":
        yield "transpose", node.value, "without the transpose (.T)"
    if (
        _call_name(node) == "transpose"
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
    ):
        yield "transpose", node.func.value, "without the transpose"


def _drop(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if not isinstance(node, ast.BinOp) or type(node.op) not in OPERATORS:
        return
    symbol = OPERATORS[type(node.op)]
    # For @, only the right operand goes: a projection forgotten (X @ W → X); X alone never is one.
    yield "drop", node.left, f"without the {symbol} {_unparse(node.right)}"[: FRAGMENT_LIMIT + 20]
    if isinstance(node.op, ast.MatMult):
        return
    if isinstance(node.op, ast.Mult | ast.Add):
        yield "drop", node.right, f"without the {_unparse(node.left)} {symbol}"[: FRAGMENT_LIMIT + 20]


def _constant_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _constant_int(node.operand)
        return None if inner is None else -inner
    return None


def _sqrt(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if _call_name(node) == "sqrt" and isinstance(node, ast.Call) and len(node.args) == 1:
        yield "sqrt", node.args[0], "without the square root"
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div | ast.Mult)
        and _call_name(node.right) != "sqrt"
        and not isinstance(node.right, ast.Constant)
    ):
        rooted = copy.copy(node)
        rooted.right = ast.Call(func=_np("sqrt"), args=[node.right], keywords=[])
        yield "sqrt", rooted, f"with the square root of {_unparse(node.right)}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Mult):
        changed = copy.copy(node)
        changed.op = ast.Mult() if isinstance(node.op, ast.Div) else ast.Div()
        how = "multiplied by" if isinstance(node.op, ast.Div) else "divided by"
        yield "scale", changed, f"{how} {_unparse(node.right)} instead"


def _constants(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return
    holder = parents[-2:-1] if parents and isinstance(parents[-1], ast.UnaryOp) else parents[-1:]
    if holder and isinstance(holder[0], ast.keyword | ast.Subscript):
        return  # axis=, k= and indices (-1 too) have operators of their own
    value = node.value
    if isinstance(value, int):
        for whole in (value + 1, value - 1):
            yield "constant", ast.Constant(whole), f"with {whole} instead of {value}"
    elif isinstance(value, float):
        for number in (value * 2, value / 2):
            yield "constant", ast.Constant(number), f"with {number:g} instead of {value:g}"


def _index(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if isinstance(node, ast.Subscript):
        index = _constant_int(node.slice)
        if index is not None:
            for step in (1, -1):
                changed = copy.copy(node)
                changed.slice = ast.Constant(index + step)
                yield "index", changed, f"with index {index + step} instead of {index}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in NEGATIONS:
        negated = copy.copy(node)
        negated.ops = [NEGATIONS[type(node.ops[0])]()]
        yield "index", negated, "with the opposite comparison"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:
        compared = copy.copy(node)
        compared.ops = [COMPARISONS[type(node.ops[0])]()]
        symbol = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}[type(compared.ops[0])]
        yield "index", compared, f"comparing with {symbol}"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        for side in ("left", "right"):
            operand = node.left if side == "left" else node.comparators[0]
            for op, sign in ((ast.Add(), "+"), (ast.Sub(), "-")):
                shifted = copy.copy(node)
                moved = ast.BinOp(left=operand, op=op, right=ast.Constant(1))
                if side == "left":
                    shifted.left = moved
                else:
                    shifted.comparators = [moved]
                yield "index", shifted, f"with {_unparse(operand)} {sign} 1 where {_unparse(operand)} belongs"


def _swap(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        for i in range(len(node.args) - 1):
            changed = copy.copy(node)
            changed.args = [*node.args]
            changed.args[i], changed.args[i + 1] = node.args[i + 1], node.args[i]
            yield (
                "swap",
                changed,
                f"with the arguments {_unparse(node.args[i])} and {_unparse(node.args[i + 1])} swapped",
            )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult | ast.Sub | ast.Div):
        swapped = copy.copy(node)
        swapped.left, swapped.right = node.right, node.left
        yield "swap", swapped, "with the two operands swapped"
    if (
        isinstance(node, ast.Tuple)
        and parents
        and isinstance(parents[-1], ast.Return)
        and len(node.elts) >= 2
    ):
        reordered = copy.copy(node)
        reordered.elts = [*reversed(node.elts)]
        yield "swap", reordered, "returning the items in the other order"


def _placement(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    """A term added inside a one-argument call moved outside it, and back: ``np.sqrt(var) + eps`` for
    ``np.sqrt(var + eps)``, ``np.log(x) + 1`` for ``np.log(x + 1)``."""
    name = _call_name(node)
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.BinOp)
        and isinstance(node.args[0].op, ast.Add | ast.Sub)
    ):
        inner = node.args[0]
        called = copy.copy(node)
        called.args = [inner.left]
        term = _unparse(inner.right)
        yield (
            "placement",
            ast.BinOp(left=called, op=inner.op, right=inner.right),
            f"with {term} outside {name}(…)",
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        call = node.left
        if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords:
            moved = copy.copy(call)
            moved.args = [ast.BinOp(left=call.args[0], op=node.op, right=node.right)]
            term = _unparse(node.right)
            yield "placement", moved, f"with {term} inside {_call_name(call)}(…)"


def _in_place(node: ast.AST, parents: list[ast.AST]) -> Iterator[Change]:
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.left, ast.Name)
        and node.value.left.id == node.targets[0].id
        and type(node.value.op) in OPERATORS
    ):
        target = ast.Name(id=node.targets[0].id, ctx=ast.Store())
        changed = ast.AugAssign(target=target, op=node.value.op, value=node.value.right)
        yield "in_place", changed, "changing the array in place"
