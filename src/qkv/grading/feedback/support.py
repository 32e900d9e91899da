"""Whether the learner's own code shows the change a mutant makes: a cause is said only where it does.

A mutant of the reference (:mod:`qkv.grading.feedback.mutants`) whose results equal the learner's tells what
the results show; it names the learner's mistake only when the learner's code has the construct the mutant
changes. Different code can give the same numbers on a few inputs (a product of a symmetric matrix, a
sum over a size-1 axis), and a sentence that names a change the code does not make would mislead.

Both programs are read as counts of *features* of their syntax trees: the operators (``@`` and the calls
that multiply matrices alike, ``/``, ``*`` …), the functions called by name (``sum``, ``sqrt``, with
``x ** 0.5`` as a square root), transposes (``.T``, ``transpose``, ``swapaxes``), the ``axis=`` of a call
and its value, the other keywords, comparisons, numbers, strings (keys), ``raise`` statements, in-place
operators and names. A change *introduces* the features its new expression has more of than the old one
and *removes* those it has fewer of. The learner's code supports it when

- it has every feature the change introduces (the names among them only where the reference does not
  bind them itself inside the function: a learner's local variables are named as they like);
- where the change removes constructs (an operator, a call, a transpose, a keyword, a comparison, a
  ``raise``: not names, numbers or strings), it has fewer of one of them than the reference has;
- where the change introduces and removes nothing (two operands swapped), it has the changed
  expression's own operator or call.

Nothing here knows a lesson, or what a call computes.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Iterable, Sequence

from qkv.grading.syntax_trees import parse

__all__ = ["LearnerCode", "features", "parsed", "supports"]

Feature = tuple[str, object]
MATMUL_CALLS = frozenset({"matmul", "dot", "einsum", "tensordot", "inner", "vecdot"})
# Comparisons counted by kind: a check written with == under not, or < where <= would do, is the same
# construct as the reference's.
_COMPARED = {"Eq": "eq", "NotEq": "eq", "Lt": "order", "LtE": "order", "Gt": "order", "GtE": "order"}
TRANSPOSES = frozenset({"transpose", "swapaxes", "moveaxis", "permute_dims", "rollaxis"})


def _call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _own(node: ast.AST) -> Iterable[Feature]:
    """The features of one node (not of its children)."""
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow) and _number(node.right) == 0.5:
            yield ("call", "sqrt")
        else:
            yield ("op", type(node.op).__name__)
    elif isinstance(node, ast.AugAssign):
        yield ("op", type(node.op).__name__)
        yield ("augassign", type(node.op).__name__)
    elif isinstance(node, ast.Call):
        name = _call_name(node.func)
        if name in MATMUL_CALLS:
            yield ("op", "MatMult")
        elif name in TRANSPOSES:
            yield ("transpose", None)
        elif name is not None:
            yield ("call", name)
        for keyword in node.keywords:
            value = _number(keyword.value)
            if keyword.arg == "axis":
                yield ("axis", value)
            elif keyword.arg is not None:
                yield ("kw", keyword.arg)
    elif isinstance(node, ast.Attribute):
        if node.attr in ("T", "mT"):
            yield ("transpose", None)
        elif not isinstance(node.ctx, ast.Load) or node.attr not in TRANSPOSES:
            yield ("attr", node.attr)
    elif isinstance(node, ast.Compare):
        # One comparison however chained (a == b == c checks as one condition as a != b or a != c).
        yield from (
            ("cmp", kind) for kind in {_COMPARED.get(type(op).__name__, type(op).__name__) for op in node.ops}
        )
    elif isinstance(node, ast.Raise):
        yield ("raise", None)
    elif isinstance(node, ast.Name):
        yield ("name", node.id)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            yield ("str", node.value)
        elif isinstance(node.value, int | float) and not isinstance(node.value, bool):
            yield ("const", abs(float(node.value)))


def features(nodes: Iterable[ast.AST]) -> Counter[Feature]:
    """The features of these trees, counted (an ``axis=`` value is counted with its keyword alone).

    Examples
    --------
    >>> found = features([ast.parse("E / E.sum(axis=-1, keepdims=True) ** 0.5")])
    >>> found[("axis", -1.0)], found[("kw", "keepdims")], found[("call", "sqrt")], found[("const", 1.0)]
    (1, 1, 1, 0)
    """
    counted: Counter[Feature] = Counter()
    for tree in nodes:
        skip: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.keyword) and node.arg == "axis":
                skip.update(id(inner) for inner in ast.walk(node.value))
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _number(node.right) == 0.5:
                skip.update(id(inner) for inner in ast.walk(node.right))
            counted.update(_own(node))
    return counted


class LearnerCode:
    """The learner's file, read once per grading: its features, counted over the whole file (a learner
    may split a function into helpers, or write one function's steps inline), when first asked for.

    Parameters
    ----------
    tree : ast.Module
        The learner's file, parsed.
    """

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree
        self._counts: Counter[Feature] | None = None

    @property
    def counts(self) -> Counter[Feature]:
        """The file's features, counted (computed on first use: most gradings never ask)."""
        if self._counts is None:
            self._counts = features([self._tree])
        return self._counts

    @classmethod
    def parse(cls, source: str | None) -> LearnerCode | None:
        """The learner's code, or None when there is none to read (then every change counts as shown)."""
        tree = parsed(source)
        return None if tree is None else cls(tree)


@functools.lru_cache(maxsize=16)
def parsed(source: str | None) -> ast.Module | None:
    """The learner's file parsed once (a grading asks for it test by test), or None.

    Examples
    --------
    >>> parsed("x = 1").body[0].__class__.__name__, parsed("def (:") is None
    ('Assign', True)
    """
    if not source:
        return None
    try:
        return parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _bound(function: ast.AST | None) -> frozenset[str]:
    """The names a function of the reference binds itself (its local variables), not its parameters."""
    if not isinstance(function, ast.FunctionDef):
        return frozenset()
    params = {arg.arg for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    stored = {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    return frozenset(stored - params)


def _anchor(nodes: Sequence[ast.AST]) -> Counter[Feature]:
    """The changed expressions' own operators and calls (their top nodes, names left out)."""
    counted: Counter[Feature] = Counter()
    for node in nodes:
        counted.update(f for f in _own(node) if f[0] not in ("name", "const", "str"))
    return counted


def supports(
    learner: LearnerCode,
    reference: Counter[Feature],
    before: Sequence[ast.AST],
    after: Sequence[ast.AST],
    function: ast.AST | None = None,
) -> bool:
    """Whether the learner's code shows a change of the reference from ``before`` to ``after``.

    Parameters
    ----------
    learner : LearnerCode
        The learner's file.
    reference : Counter
        The features of the whole reference (:func:`features`).
    before, after : sequences of ast.AST
        The nodes the change replaces, and those it puts there.
    function : ast.FunctionDef, optional
        The reference's function that holds the change (its own local names need not be the learner's).

    Examples
    --------
    >>> ref = "def f(S):\\n    return S / S.sum(axis=-1, keepdims=True)\\n"
    >>> tree = ast.parse(ref)
    >>> old = tree.body[0].body[0].value.right
    >>> new = ast.parse("S.sum(axis=0, keepdims=True)", mode="eval").body
    >>> made = LearnerCode.parse("def f(S):\\n    return S / S.sum(0, keepdims=True)\\n")
    >>> supports(made, features([tree]), [old], [new], tree.body[0])
    False
    >>> made = LearnerCode.parse("def f(S):\\n    t = S.sum(axis=0, keepdims=True)\\n    return S / t\\n")
    >>> supports(made, features([tree]), [old], [new], tree.body[0])
    True
    """
    old, new = features(before), features(after)
    local = _bound(function)
    introduced = [f for f in new if new[f] > old[f] and not (f[0] == "name" and f[1] in local)]
    # What a change takes away is told by the constructs it removes (an operator, a call, a transpose, a
    # keyword, a comparison, a raise), not by the names, numbers and words around them, which a
    # learner's own version of the same line writes otherwise.
    removed = [f for f in old if old[f] > new[f] and f[0] not in ("name", "const", "str", "attr")]
    if any(learner.counts[f] < 1 for f in introduced):
        return False
    if removed and not any(learner.counts[f] < reference[f] for f in removed):
        return False
    if not introduced and not removed:
        anchor = _anchor(after) or _anchor(before)
        return all(learner.counts[f] >= 1 for f in anchor)
    return True
