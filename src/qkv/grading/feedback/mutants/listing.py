"""Every single change the operator families make to a reference (:func:`mutations`), in the order
learners' mistakes are most common (:data:`PRIORITY`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from qkv.grading.feedback.mutants.arithmetic import (
    _constants,
    _drop,
    _in_place,
    _index,
    _placement,
    _sqrt,
    _swap,
    _transpose,
)
from qkv.grading.feedback.mutants.changes import (
    FRAGMENT_LIMIT,
    Change,
    Mutation,
    Path,
    _locate,
    _shown,
    _statement_line,
    _walk,
)
from qkv.grading.feedback.mutants.names import (
    _array_names,
    _default,
    _defaults,
    _operands,
    _sibling_names,
    _siblings,
    _size_names,
    _sizes,
    _stricter,
)
from qkv.grading.feedback.mutants.numpy_calls import _calls, _checks, _ddof, _keywords, _own_calls, _reduction
from qkv.grading.feedback.quoting import quoted
from qkv.grading.feedback.rewrites import rewrites
from qkv.grading.syntax_trees import parse

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
    tree = parse(source)
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
