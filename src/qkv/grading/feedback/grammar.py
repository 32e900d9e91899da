"""A small grammar of factors and offsets written through a call's named sizes: ``√d_k``, ``1/d_k``,
``2/√d_k``, ``d_v·d_model`` …

When a wrong number is the right one times a constant, or plus one, the constant usually has a name in
the call: the learner divided by ``d_k`` where ``√d_k`` belonged, or counted ``d_model·d_v`` once too
often. :func:`name_factor` and :func:`name_offset` search a few hundred such expressions and return the
simplest that equals the constant, written in the call's own terms. Nothing here knows a lesson: the
names are whatever the call's sizes are called (see :mod:`qkv.grading.feedback.sizes`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Term", "name_factor", "name_offset", "terms"]

REL_TOL = 1e-6


@dataclass(frozen=True)
class Term:
    """A value with the way to write it and a cost (fewer and plainer parts cost less)."""

    text: str
    value: float
    cost: int
    names: frozenset[str] = frozenset()


def _atoms(sizes: Sequence[tuple[str, int]]) -> list[Term]:
    """Each named size once (the first name of a value wins only on a tie of cost), and the constant 2."""
    atoms = [Term(name, float(value), 1, frozenset({name})) for name, value in sizes if value > 1]
    return [*atoms, Term("2", 2.0, 3)]  # a named size explains more than a bare 2


def terms(sizes: Sequence[tuple[str, int]]) -> list[Term]:
    """Every factor the grammar knows: an atom, its square root or square, a product or a quotient of two
    atoms, and the square root of those, each also inverted.

    Examples
    --------
    >>> sorted(t.text for t in terms([("d_k", 4)]) if t.cost <= 2)
    ['1/d_k', 'd_k', '√d_k']
    """
    atoms = _atoms(sizes)
    found: list[Term] = []
    for atom in atoms:
        found += [atom, Term(f"√{atom.text}", math.sqrt(atom.value), atom.cost + 1, atom.names)]
        if atom.names:  # 2² is 4, a constant of its own, not a mistake's factor
            found.append(Term(f"{atom.text}²", atom.value**2, atom.cost + 2, atom.names))
    for a, b in itertools.combinations_with_replacement(atoms, 2):
        if a.text == "2" and b.text == "2":
            continue
        names, cost = a.names | b.names, a.cost + b.cost + 1
        found.append(Term(f"{a.text}·{b.text}", a.value * b.value, cost, names))
        found.append(Term(f"√({a.text}·{b.text})", math.sqrt(a.value * b.value), cost + 1, names))
    for a, b in itertools.permutations(atoms, 2):
        names, cost = a.names | b.names, a.cost + b.cost + 1
        found.append(Term(f"{a.text}/{b.text}", a.value / b.value, cost, names))
        found.append(Term(f"{a.text}/√{b.text}", a.value / math.sqrt(b.value), cost + 1, names))
        found.append(Term(f"√({a.text}/{b.text})", math.sqrt(a.value / b.value), cost + 1, names))
    return [*found, *(_inverse(term) for term in found)]


def _inverse(term: Term) -> Term:
    if "/" in term.text and not term.text.startswith("1/"):
        top, bottom = term.text.split("/", 1)
        text = f"{bottom}/{top}"
    else:
        text = term.text.removeprefix("1/") if term.text.startswith("1/") else f"1/{term.text}"
    return Term(text, 1 / term.value, term.cost + 1, term.names)


def _equal(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def _best(found: Iterator[Term]) -> list[Term]:
    """The cheapest terms, every one of that cost (two names may share a value in one call)."""
    listed = sorted(found, key=lambda term: term.cost)
    if not listed:
        return []
    return [term for term in listed if term.cost == listed[0].cost]


def name_factor(factor: float, sizes: Sequence[tuple[str, int]]) -> list[Term]:
    """The simplest ways to write ``factor`` (got = expected × factor) with the call's sizes; [] if none.

    A factor of exactly -1 is "the sign", left to the caller; 1 is no factor.

    Examples
    --------
    >>> [t.text for t in name_factor(0.5, [("d_k", 4), ("n", 3)])]
    ['1/√d_k']
    >>> [t.text for t in name_factor(2 / 3, [("d_k", 9), ("n", 5)])]
    ['2/√d_k']
    >>> name_factor(0.37, [("d_k", 4)])
    []
    """
    if not math.isfinite(factor) or factor == 0 or _equal(abs(factor), 1.0):
        return []
    sign = "-" if factor < 0 else ""
    found = (term for term in terms(sizes) if _equal(term.value, abs(factor)))
    return [Term(f"{sign}{t.text}", factor, t.cost + bool(sign), t.names) for t in _best(found)]


def name_offset(offset: float, sizes: Sequence[tuple[str, int]]) -> list[Term]:
    """The simplest ways to write ``offset`` (got = expected + offset) as a sum of up to two named products,
    with small whole coefficients; [] if none.

    Examples
    --------
    >>> [t.text for t in name_offset(-12.0, [("d_model", 3), ("d_v", 4)])]
    ['- d_model·d_v']
    >>> [t.text for t in name_offset(11.0, [("d_k", 4), ("d_v", 3)])]
    ['+ 2·d_k + d_v']
    """
    if not math.isfinite(offset) or offset == 0:
        return []
    named = [(name, value) for name, value in sizes if value > 1]
    products = [Term(name, float(value), 1, frozenset({name})) for name, value in named]
    for (a, x), (b, y) in itertools.combinations_with_replacement(named, 2):
        products.append(Term(f"{a}·{b}", float(x * y), 2, frozenset({a, b})))
    scaled = [
        Term(f"{k}·{p.text}" if k > 1 else p.text, k * p.value, p.cost + 2 * (k > 1), p.names)
        for p in products
        for k in (1, 2, 3)
    ]
    sign, size = ("+" if offset > 0 else "-"), abs(offset)
    found = [Term(f"{sign} {t.text}", offset, t.cost, t.names) for t in scaled if _equal(t.value, size)]
    if not found:
        for one, two in itertools.combinations(scaled, 2):
            if one.names != two.names and _equal(one.value + two.value, size):
                text = f"{sign} {one.text} + {two.text}" if sign == "+" else f"- ({one.text} + {two.text})"
                found.append(Term(text, offset, one.cost + two.cost + 1, one.names | two.names))
    if not found and float(size).is_integer() and size <= 3:
        found.append(Term(f"{sign} {int(size)}", offset, 4))  # a bare number explains least
    return _best(iter(found))
