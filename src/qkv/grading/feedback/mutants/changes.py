"""One change of a reference solution (:class:`Mutation`) and the syntax-tree helpers every operator
family shares: walking the tree with each node's path and ancestors, showing a change, placing new nodes.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from qkv.grading.feedback.leaks import SolutionSpans

Path = tuple[tuple[str, int | None], ...]


OPERATORS = {ast.Mult: "*", ast.Div: "/", ast.Add: "+", ast.Sub: "-", ast.FloorDiv: "//", ast.MatMult: "@"}


FRAGMENT_LIMIT = 70


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


def _locate(replacement: ast.AST, original: ast.AST) -> None:
    """Give the new nodes of a replacement the place of the node they replace (compile needs one); the
    nodes it shares with the reference keep theirs."""
    for node in ast.walk(replacement):
        for attribute in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if attribute in node._attributes and getattr(node, attribute, None) is None:
                setattr(node, attribute, getattr(original, attribute, 1) or 1)
