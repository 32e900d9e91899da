"""The mutants compiled: one or two changes applied to a copy of the reference's function, built once
per reference (:class:`Mutants`, cached by :func:`mutants_for`) and searched for the one whose results
equal the learner's.
"""

from __future__ import annotations

import ast
import copy
import itertools
import threading
import types
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qkv.grading.feedback.leaks import SolutionSpans
from qkv.grading.feedback.mutants.changes import FRAGMENT_LIMIT, Mutation, Path, _call_name, _unparse
from qkv.grading.feedback.mutants.listing import PRIORITY, mutations
from qkv.grading.feedback.quoting import combined
from qkv.grading.feedback.support import Feature, LearnerCode, features, supports
from qkv.grading.syntax_trees import compile_tree, parse

MAX_KEPT = 3000  # compiled mutants kept per reference (every single, then pairs up to this many in all)


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
        the reference's code shows: a piece of :data:`~qkv.grading.feedback.leaks.LEAK_CHARACTERS` characters
        of it, in the words or the quote, is cut short
        (:class:`~qkv.grading.feedback.leaks.SolutionSpans`)."""
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
        exec(compile_tree(module, "<reference mutant>"), scratch)  # the lesson's reference, changed
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
        self._tree = parse(source)
        self._spans = SolutionSpans(source, given=_headers(self._tree))
        self._changes = mutations(source)
        self._lock = threading.Lock()
        self._compiled: dict[tuple[int, ...], Mutant] = {}
        self._reach = self._callers()
        self._features: Counter[Feature] | None = None  # the reference's, for what a learner's code shows
        self._globals: dict[str, Any] = {"__name__": "reference"}
        with np.errstate(all="ignore"):
            exec(compile_tree(self._tree, "<reference>"), self._globals)  # the lesson's own reference
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
        """Whether the learner's code shows every change of the mutant ``key``
        (:mod:`qkv.grading.feedback.support`): the construct each change makes is in it. True where there is
        no learner's code to read."""
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
