"""Mutants of a reference solution: wrong versions derived by generic operators on its syntax tree.

A lesson's reference solution is a small NumPy program. Most learners' mistakes are one small change of
it: a transposed operand, a sum over another axis, a scale dropped or not square-rooted, an index off by
one, two arguments swapped, one size used for another, a different reduction. :func:`mutations` lists
every such change the operators below can make (each with its words and the reference's line), and
:class:`Mutants` compiles them (alone, and in pairs on demand) once per reference and finds the mutant
whose results equal the learner's.

The operators (each a function of one node of the tree):

========================  ===============================================================================
``transpose``             an operand of ``@`` transposed, or a ``.T`` / ``.transpose(...)`` dropped
``drop``                  one operand of ``*``, ``/``, ``+``, ``-``, ``//`` dropped (a scale, a shift);
                          the right operand of ``@`` (a projection forgotten: ``X @ W`` → ``X``)
``axis``                  ``axis=`` changed (``-1``, ``0``, ``1``, ``-2``) or dropped (the whole array)
``keepdims``              ``keepdims=True`` dropped
``sqrt``                  a square root dropped, or added under a division or product
``scale``                 ``/`` for ``*`` and back
``constant``              a number changed (whole numbers ±1, others ×2 and ÷2)
``index``                 a constant index, ``k=`` or ``[:n]`` bound shifted by one; ``<`` for ``<=`` …;
                          a comparison negated (``>=`` for ``<``)
``swap``                  two arguments of a call, two operands of ``@``, ``-``, ``/``, two returned items
``size``                  one named size of the function used for another
``operand``               another array of the function as an operand of ``@``, ``*``, ``+``, ``-``
``in_place``              ``x = x op y`` written ``x op= y``; a conversion (``np.asarray``) dropped
``reduction``             ``sum``/``mean``, ``max``/``min``, ``var``/``std``, ``tril``/``triu`` exchanged
``call``                  a one-argument NumPy function or function of the reference dropped
                          (``np.exp(x)`` → ``x``, ``normed(S)`` → ``S``)
``check``                 a check that raises left out (``if cond: raise …`` as if ``cond`` were false)
``exception``             a check's exception of another class (``TypeError`` for ``ValueError``)
``strict``                a check ``a.shape[1] != b.shape[1]`` that compares a third array too
``ddof``                  a variance or standard deviation with ``ddof=1`` (divided by the count − 1)
``default``               a parameter read replaced by its default (``1e-05`` for a given ``eps``)
``placement``             a term moved out of a one-argument call or into it (``np.sqrt(v) + eps``)
``sibling``               a numbered name, attribute or key for its sibling (``ln1_g`` for ``ln2_g``),
                          one at a time or all the arguments of a call at once
``residual``              around a sum ``x + branch``: a call on ``x`` in the branch moved around the
                          sum (normalised after the residual), the residual taken from that call, or
                          the input added to a sum once more (:mod:`qkv.grading.rewrites`)
========================  ===============================================================================

The mutants run in the grader's own process, on the grader's copies of the test's inputs: they are the
lesson's reference with one or two small changes, never the learner's code, so the verdict stays judged
outside the sandbox. A mutant that raises counts as no result.
"""

from __future__ import annotations

import ast
import copy
import itertools
import re
import threading
import types
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from qkv.grading.leaks import SolutionSpans
from qkv.grading.quoting import combined, quoted
from qkv.grading.rewrites import rewrites
from qkv.grading.sizes import reference_axes
from qkv.grading.support import Feature, LearnerCode, features, supports

__all__ = ["Mutant", "Mutants", "Mutation", "mutants_for", "mutations", "prepare", "prepare_in_background"]

Path = tuple[tuple[str, int | None], ...]
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
OPERATORS = {ast.Mult: "*", ast.Div: "/", ast.Add: "+", ast.Sub: "-", ast.FloorDiv: "//", ast.MatMult: "@"}
FRAGMENT_LIMIT = 70
MAX_KEPT = 3000  # compiled mutants kept per reference (every single, then pairs up to this many in all)
PRIORITY = (  # the order operators are tried in: the mistakes learners make most first
    "sqrt",
    "size",
    "axis",
    "keepdims",
    "transpose",
    "scale",
    "swap",
    "drop",
    "check",
    "exception",
    "strict",
    "residual",
    "sibling",
    "reduction",
    "ddof",
    "default",
    "placement",
    "operand",
    "index",
    "call",
    "in_place",
    "constant",
)


@dataclass(frozen=True)
class Mutation:
    """One change of the reference.

    Parameters
    ----------
    operator : str
        Which operator made it (``axis``, ``sqrt`` …; see the module's table).
    path : tuple
        Where the changed node is, from the module down (field names and list indices).
    function : str
        The reference's function that holds it.
    line : int
        The reference's line.
    words : str
        What changed, in words ("the sum over axis 0 instead of axis -1").
    before, after : str
        The smallest expression around the change, as the reference has it and as the mutant has it.
    """

    operator: str
    path: Path
    function: str
    line: int
    words: str
    before: str
    after: str
    replacement: ast.AST = field(repr=False, compare=False)
    exchange: tuple[str, str] | None = None  # (the name replaced, the name put there), for a name change
    more: tuple[tuple[Path, ast.AST], ...] = field(default=(), repr=False, compare=False)  # other edits

    @property
    def edits(self) -> tuple[tuple[Path, ast.AST], ...]:
        """Every edit of the change: its path and the node put there (most changes have one)."""
        return ((self.path, self.replacement), *self.more)

    def describe(self, spans: SolutionSpans | None = None) -> str:
        """The change in words, with the mutant's expression (never the reference's): for a learner's
        hint. Words that would quote the reference's code (``spans``) give way to the operator's own."""
        return f"{self.said(spans)}: {self.after} (in {self.function})"

    def said(self, spans: SolutionSpans | None = None) -> str:
        """The change in words: :attr:`words`, or where they hold a run of the reference's code that
        ``spans`` finds, what the operator does in words alone ("with a term left out")."""
        if spans is None or not spans.found(self.words):
            return self.words
        if self.operator == "drop":
            return _dropped_term(self.words)
        return _PLAIN_WORDS.get(self.operator, self.words)


def _dropped_term(words: str) -> str:
    """A term left out, said by its operator only: "without the term after -" for "without the - x"."""
    tokens = words.split()
    symbols = set(OPERATORS.values())
    if len(tokens) > 3 and tokens[2] in symbols:
        return f"without the term after {tokens[2]}"
    if tokens and tokens[-1] in symbols:
        return f"without the term before {tokens[-1]}"
    return "with a term left out"


_PLAIN_WORDS = {  # what an operator whose words quote an expression does, without the expression
    "sqrt": "with a square root added",
    "scale": "with * and / exchanged",
    "index": "with a bound or an index changed by 1",
    "placement": "with a term moved into or out of a call",
    "in_place": "working on an input itself, not on a new array",
}


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError):
        return "…"


def _children(node: ast.AST) -> Iterator[tuple[str, int | None, ast.AST]]:
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            yield name, None, value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield name, index, item


def _walk(node: ast.AST, path: Path = ()) -> Iterator[tuple[Path, ast.AST, list[ast.AST]]]:
    """Every node with its path and its ancestors (nearest last)."""
    stack: list[tuple[Path, ast.AST, list[ast.AST]]] = [(path, node, [])]
    while stack:
        here, current, parents = stack.pop()
        yield here, current, parents
        for name, index, child in reversed(list(_children(current))):
            stack.append(((*here, (name, index)), child, [*parents, current]))


def _np(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name, ctx=ast.Load())


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if isinstance(func, ast.Name):
            return func.id
    return None


Change = tuple[str, ast.AST, str]  # operator, replacement, words


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


OPERATOR_FUNCTIONS: Sequence[Callable[[ast.AST, list[ast.AST]], Iterator[Change]]] = (
    _transpose,
    _drop,
    _keywords,
    _sqrt,
    _constants,
    _index,
    _swap,
    _reduction,
    _calls,
    _in_place,
    _ddof,
    _placement,
    _checks,
)


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


def _statement_line(node: ast.AST, parents: list[ast.AST]) -> int:
    for holder in [node, *reversed(parents)]:
        if isinstance(holder, ast.stmt):
            return holder.lineno
    return getattr(node, "lineno", 0)


def _shown(node: ast.AST, parents: list[ast.AST], replacement: ast.AST) -> tuple[str, str]:
    """The change in its smallest readable expression, before and after."""
    holder = node
    ancestors = [*parents]
    while ancestors and (
        isinstance(holder, ast.Name | ast.Constant | ast.keyword | ast.UnaryOp) or len(_unparse(holder)) < 12
    ):
        parent = ancestors.pop()
        if isinstance(parent, ast.stmt):
            break
        holder = parent
    before = _unparse(holder)
    if holder is node:
        after = _unparse(replacement)
    else:
        changed = copy.deepcopy(holder)
        _replace_within(changed, holder, node, replacement)
        after = _unparse(changed)
    return before, after


def _replace_within(copied: ast.AST, original: ast.AST, target: ast.AST, replacement: ast.AST) -> bool:
    for (name, index, child), (_, _, copied_child) in zip(
        _children(original), _children(copied), strict=True
    ):
        if child is target:
            _set(copied, name, index, replacement)
            return True
        if _replace_within(copied_child, child, target, replacement):
            return True
    return False


def _set(parent: ast.AST, name: str, index: int | None, value: ast.AST) -> None:
    if index is None:
        setattr(parent, name, value)
    else:
        getattr(parent, name)[index] = value


def mutations(source: str) -> list[Mutation]:
    """Every single change the operators make to the functions of ``source`` (a reference solution).

    Functions with a ``while`` loop are left alone: a changed bound could make a mutant run forever.

    Examples
    --------
    >>> found = mutations("import numpy as np\\ndef f(S):\\n    return S / S.sum(axis=-1, keepdims=True)\\n")
    >>> [m.operator for m in found if m.operator in ("axis", "keepdims")]
    ['axis', 'axis', 'axis', 'axis', 'keepdims']
    >>> [m for m in found if m.operator == "keepdims"][0].describe()
    'without keepdims=True: S.sum(axis=-1) (in f)'
    """
    tree = ast.parse(source)
    found: list[Mutation] = []
    defined = frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef))
    for index, function in enumerate(tree.body):
        if not isinstance(function, ast.FunctionDef) or any(
            isinstance(n, ast.While) for n in ast.walk(function)
        ):
            continue
        scope = _scope(function, source, defined)
        for path, node, parents in _walk(function, (("body", index),)):
            if node is function or isinstance(node, ast.arguments | ast.arg):
                continue
            for operator, replacement, words in _node_changes(node, parents, scope):
                made = _mutation(operator, path, function, node, parents, replacement, words)
                if made is not None:
                    found.append(made)
        for rewrite in rewrites(function, (("body", index),)):
            made = _mutation(
                "residual",
                rewrite.path,
                function,
                rewrite.node,
                list(rewrite.parents),
                rewrite.replacement,
                rewrite.words,
            )
            if made is not None:
                for _, original, replacement in rewrite.more:
                    _locate(replacement, original)
                found.append(replace(made, more=tuple((path, new) for path, _, new in rewrite.more)))
    return found


@dataclass(frozen=True)
class _Scope:
    """What the operators that need a function's names know of it."""

    sizes: list[str]  # its named sizes (d_k, n, d_head …)
    arrays: list[str]  # its other parameters and assigned names
    siblings: dict[str, list[str]]  # names, attributes and keys that differ from another only in digits
    defaults: dict[str, ast.expr]  # parameters with a constant default, and that default
    defined: frozenset[str]  # the functions the reference defines


def _scope(function: ast.FunctionDef, source: str, defined: frozenset[str]) -> _Scope:
    sizes = _size_names(function, source)
    arrays = _array_names(function, sizes)
    return _Scope(sizes, arrays, _sibling_names(function), _defaults(function), defined)


def _node_changes(node: ast.AST, parents: list[ast.AST], scope: _Scope) -> list[Change]:
    changes = [change for operator in OPERATOR_FUNCTIONS for change in operator(node, parents)]
    changes += list(_sizes(node, parents, scope.sizes))
    changes += list(_operands(node, parents, scope.arrays))
    changes += list(_stricter(node, parents, scope.arrays))
    changes += list(_siblings(node, parents, scope.siblings))
    changes += list(_default(node, scope.defaults))
    changes += list(_own_calls(node, scope.defined))
    return changes


def _mutation(
    operator: str,
    path: Path,
    function: ast.FunctionDef,
    node: ast.AST,
    parents: list[ast.AST],
    replacement: ast.AST,
    words: str,
) -> Mutation | None:
    """The mutation that puts ``replacement`` where ``node`` is; None when it shows no change."""
    before, after = _shown(node, parents, replacement)
    if before == after:
        return None
    if operator == "check":  # the whole check, not its condition turned False
        before, after = quoted(f"if {before}: raise …", "no check", FRAGMENT_LIMIT)
    else:  # cut around the change, so that a change beyond the first 70 characters still shows
        before, after = quoted(before, after, FRAGMENT_LIMIT)
    line = _statement_line(node, parents)
    _locate(replacement, node)
    exchange = (
        (node.id, replacement.id)
        if isinstance(node, ast.Name) and isinstance(replacement, ast.Name)
        else None
    )
    return Mutation(operator, path, function.name, line, words, before, after, replacement, exchange)


# ----------------------------------------------------------------------------- siblings and defaults
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


def _locate(replacement: ast.AST, original: ast.AST) -> None:
    """Give the new nodes of a replacement the place of the node they replace (compile needs one); the
    nodes it shares with the reference keep theirs."""
    for node in ast.walk(replacement):
        for attribute in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if attribute in node._attributes and getattr(node, attribute, None) is None:
                setattr(node, attribute, getattr(original, attribute, 1) or 1)


def _apply(function: ast.FunctionDef, changes: Sequence[Mutation]) -> ast.Module:
    """A module holding only ``function`` (a statement of the reference), with the changes made.

    Only the nodes on the way to each change are copied; the rest of the tree is shared with the
    reference (compiling reads a tree, it does not change it), which keeps building a mutant cheap.
    """
    root = copy.copy(function)
    for path, replacement in (edit for change in changes for edit in change.edits):
        node: ast.AST = root
        steps = path[1:]
        for name, position in steps[:-1]:
            child = getattr(node, name) if position is None else getattr(node, name)[position]
            child = copy.copy(child)
            _set_copied(node, name, position, child)
            node = child
        name, position = steps[-1]
        _set_copied(node, name, position, replacement)
    return ast.Module(body=[root], type_ignores=[])  # every replacement was located when it was made


def _set_copied(parent: ast.AST, name: str, position: int | None, value: ast.AST) -> None:
    """Set a field of a copied node, copying a list field first (the copy shares it with the original)."""
    if position is None:
        setattr(parent, name, value)
    else:
        listed = list(getattr(parent, name))
        listed[position] = value
        setattr(parent, name, listed)


@dataclass
class Mutant:
    """A compiled mutant: its changes and its functions (None when it did not compile or load)."""

    changes: tuple[Mutation, ...]
    functions: dict[str, Any] | None
    spans: SolutionSpans | None = field(default=None, repr=False, compare=False)  # the reference's code

    def call(self, function: str, args: Sequence[Any]) -> Any:
        """The mutant's result for these arguments (copies of them), or raises whatever it raises."""
        assert self.functions is not None
        with np.errstate(all="ignore"):
            return self.functions[function](*copy.deepcopy(tuple(args)))

    def describe(self) -> str:
        """What the mutant changed, each change in words with the mutant's expression; the same change
        made in several places of one expression is said once, with every place changed. Nothing of
        the reference's code shows: a piece of :data:`~qkv.grading.leaks.LEAK_CHARACTERS` characters
        of it, in the words or the quote, is cut short (:class:`~qkv.grading.leaks.SolutionSpans`)."""
        parts: list[str] = []
        for group in _same_changes(self.changes):
            first = group[0]
            together = combined(first.before, [change.after for change in group]) if len(group) > 1 else None
            if together is None or len(together) > FRAGMENT_LIMIT:
                parts += [change.describe(self.spans) for change in group]
            else:
                parts.append(
                    f"{first.said(self.spans)}, {len(group)} times: {together} (in {first.function})"
                )
        said = "; and ".join(parts)
        return said if self.spans is None else self.spans.redacted(said)


def _same_changes(changes: Sequence[Mutation]) -> list[list[Mutation]]:
    """The changes grouped by what they say and the expression they quote (in the order of the first)."""
    groups: dict[tuple[str, str, str], list[Mutation]] = {}
    for change in changes:
        groups.setdefault((change.function, change.words, change.before), []).append(change)
    return list(groups.values())


def _headers(tree: ast.Module) -> str:
    """The headers of the reference's functions (``def f(S, axis=-1):``), one a line: the exercise names
    them and the learner writes them, so a message may quote them."""
    return "\n".join(
        f"def {node.name}({_unparse(node.args)}):" for node in tree.body if isinstance(node, ast.FunctionDef)
    )


def _code(module: ast.Module, name: str) -> tuple[types.CodeType, Any] | None:
    """The code and defaults of the one function ``module`` defines, or None when it does not compile."""
    try:
        scratch: dict[str, Any] = {"np": np}
        exec(compile(module, "<reference mutant>", "exec"), scratch)  # the lesson's reference, changed
    except Exception:
        return None
    made = scratch.get(name)
    return (made.__code__, made.__defaults__) if isinstance(made, types.FunctionType) else None


class Mutants:
    """The mutants of one reference solution, compiled on first use and kept.

    Parameters
    ----------
    source : str
        The reference solution (a program defining the exercise's functions).
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._tree = ast.parse(source)
        self._spans = SolutionSpans(source, given=_headers(self._tree))
        self._changes = mutations(source)
        self._lock = threading.Lock()
        self._compiled: dict[tuple[int, ...], Mutant] = {}
        self._reach = self._callers()
        self._features: Counter[Feature] | None = None  # the reference's, for what a learner's code shows
        self._globals: dict[str, Any] = {"__name__": "reference"}
        with np.errstate(all="ignore"):
            exec(compile(self._tree, "<reference>", "exec"), self._globals)  # the lesson's own reference
        self._base = {
            name: (value.__code__, value.__defaults__)
            for name, value in self._globals.items()
            if isinstance(value, types.FunctionType)
        }

    def _callers(self) -> dict[str, set[str]]:
        """For each function, the functions of the reference it calls, directly or not (and itself)."""
        calls: dict[str, set[str]] = {}
        defined = {node.name for node in self._tree.body if isinstance(node, ast.FunctionDef)}
        for node in self._tree.body:
            if isinstance(node, ast.FunctionDef):
                calls[node.name] = {
                    name for name in (_call_name(n) for n in ast.walk(node)) if name in defined
                } | {node.name}
        changed = True
        while changed:
            changed = False
            for name, reached in calls.items():
                wider = set().union(*(calls.get(other, {other}) for other in reached))
                if wider != reached:
                    calls[name], changed = wider, True
        return calls

    def singles(self, function: str) -> list[tuple[int, ...]]:
        """The single changes that can alter ``function``'s results (in it or in what it calls), the
        likeliest operators first (:data:`PRIORITY`): a search cut short has tried those."""
        reach = self._reach.get(function, {function})
        found = [(i,) for i, change in enumerate(self._changes) if change.function in reach]
        return sorted(found, key=lambda key: PRIORITY.index(self._changes[key[0]].operator))

    def change(self, index: int) -> Mutation:
        """The single change at ``index``."""
        return self._changes[index]

    def shown_by(self, key: tuple[int, ...], learner: LearnerCode | None) -> bool:
        """Whether the learner's code shows every change of the mutant ``key`` (:mod:`qkv.grading.support`):
        the construct each change makes is in it. True where there is no learner's code to read."""
        if learner is None:
            return True
        if self._features is None:
            self._features = features([self._tree])
        for index in key:
            change = self._changes[index]
            before = [self._node(path) for path, _ in change.edits]
            after = [replacement for _, replacement in change.edits]
            function = self._node(change.path[:1])
            if not supports(learner, self._features, [n for n in before if n is not None], after, function):
                return False
        return True

    def _node(self, path: Path) -> ast.AST | None:
        """The reference's node at ``path`` (None where the path leads nowhere)."""
        node: ast.AST = self._tree
        for name, position in path:
            child = getattr(node, name, None)
            if position is not None:
                child = child[position] if isinstance(child, list) and position < len(child) else None
            if not isinstance(child, ast.AST):
                return None
            node = child
        return node

    def mutant(self, key: tuple[int, ...]) -> Mutant:
        """The mutant with the changes ``key`` (indices into the list of single changes), compiled once.

        Only the changed functions are compiled again; every function of the mutant is rebuilt on a
        namespace of its own, so a caller calls the changed callee.
        """
        with self._lock:
            found = self._compiled.get(key)
        if found is not None:
            return found
        changes = tuple(self._changes[i] for i in key)
        made = Mutant(changes, self._build(changes), self._spans)
        with self._lock:
            # Every single is kept; pairs only up to a bound, so a server's memory stays bounded however
            # many different pairs its learners' programs ask for (a pair compiles again in well under 1 ms).
            if len(key) == 1 or len(self._compiled) < MAX_KEPT:
                self._compiled.setdefault(key, made)
        return made

    def _build(self, changes: Sequence[Mutation]) -> dict[str, Any] | None:
        paths = [path for change in changes for path, _ in change.edits]
        if any(a[: len(b)] == b or b[: len(a)] == a for a, b in itertools.combinations(paths, 2)):
            return None  # one change inside another: not a pair
        codes = dict(self._base)
        for name in {change.function for change in changes}:
            index = next(c.path[0][1] for c in changes if c.function == name)
            function = self._tree.body[index] if index is not None else None
            if not isinstance(function, ast.FunctionDef):
                return None
            built = _code(_apply(function, [c for c in changes if c.function == name]), name)
            if built is None:
                return None
            codes[name] = built
        namespace = dict(self._globals)
        for name, (code, defaults) in codes.items():
            namespace[name] = types.FunctionType(code, namespace, name, defaults)
        return namespace


_CACHE: dict[str, Mutants | None] = {}
_CACHE_LOCK = threading.Lock()
_BUILDING: dict[str, threading.Lock] = {}  # one lock per reference: its mutants are built once


def mutants_for(source: str | None) -> Mutants | None:
    """The (cached) mutants of a reference solution; None without one, or when it does not parse.

    The first call for a reference builds them (tens of milliseconds for a chapter's largest); a call
    while another thread builds them waits for that one.
    """
    if not source:
        return None
    with _CACHE_LOCK:
        if source in _CACHE:
            return _CACHE[source]
        building = _BUILDING.setdefault(source, threading.Lock())
    with building:
        with _CACHE_LOCK:
            if source in _CACHE:
                return _CACHE[source]
        try:
            made: Mutants | None = Mutants(source)
        except SyntaxError:
            made = None
        with _CACHE_LOCK:
            return _CACHE.setdefault(source, made)


def prepare(source: str | None, functions: Sequence[str]) -> None:
    """Build the mutants of a reference and compile every single one that can alter ``functions``.

    Examples
    --------
    >>> prepare("def f(x):\\n    return 2 * x\\n", ["f"])
    >>> mutants_for("def f(x):\\n    return 2 * x\\n").mutant((0,)).functions is not None
    True
    """
    found = mutants_for(source)
    if found is None:
        return
    for function in functions:
        for key in found.singles(function):
            found.mutant(key)


def prepare_in_background(source: str | None, functions: Sequence[str]) -> None:
    """:func:`prepare` in a daemon thread, once per reference: the grader starts it when it grades a
    suite, so that the mutants are ready (or nearly) when the learner's results come back."""
    if not source:
        return
    with _CACHE_LOCK:
        if source in _CACHE or source in _BUILDING:
            return
        _BUILDING[source] = threading.Lock()
    threading.Thread(target=prepare, args=(source, tuple(functions)), daemon=True, name="mutants").start()
