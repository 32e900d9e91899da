"""Short quotes of a change: the piece of a long expression around where two versions differ.

A mutant's hint quotes the mutant's expression, at most a few dozen characters (never the reference's:
``qkv.grading.feedback.leaks`` keeps the reference's code out of a message). Cutting it at a fixed length
would lose a change that lies beyond the cut (``p["W2"]`` for ``p["W1"]`` near the end of a long line): the
quote would read as the reference does. :func:`quoted` cuts both versions around the part that differs
instead, with the same context on either side of it in both, and an ellipsis where something was cut.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

ELLIPSIS = "…"


def quoted(before: str, after: str, limit: int) -> tuple[str, str]:
    """Both versions of an expression, cut to ``limit`` characters around the part where they differ.

    Parameters
    ----------
    before, after : str
        The expression as the reference has it and as the mutant has it.
    limit : int
        The most characters of each quote, ellipses included (at least 3).

    Returns
    -------
    tuple of str
        The two quotes. They are the expressions themselves when both fit; otherwise each is the
        same window of context around its differing part, with ``…`` where it was cut. Where the
        expressions differ, the quotes differ too.

    Raises
    ------
    ValueError
        If ``limit`` is below 3 (no room for a character between two ellipses).

    Examples
    --------
    >>> quoted("f(x)", "g(x)", 70)
    ('f(x)', 'g(x)')
    >>> quoted("a + b + c + d + e", "a + b + c + d + E", 11)
    ('…c + d + e', '…c + d + E')
    """
    if limit < 3:
        raise ValueError(f"A quote needs at least 3 characters (two ellipses and one of code); got {limit}.")
    if len(before) <= limit and len(after) <= limit:
        return before, after
    prefix = _common_prefix(before, after)
    suffix = _common_prefix(before[prefix:][::-1], after[prefix:][::-1])
    changed = max(len(before), len(after)) - prefix - suffix
    room = max(0, limit - changed - 2)  # context either side, once two ellipses are counted
    left = min(prefix, room // 2)
    right = min(suffix, room - left)
    left = min(prefix, room - right)  # what the right side did not need goes to the left
    start = _word_start(before, prefix - left, prefix)
    return (
        _window(before, start, len(before) - suffix + right, limit),
        _window(after, start, len(after) - suffix + right, limit),
    )


def combined(before: str, afters: Sequence[str]) -> str | None:
    """One quote with every change made: each of ``afters`` changes one part of ``before``, and where
    those parts do not overlap, all of them applied at once; None where they overlap.

    Parameters
    ----------
    before : str
        The expression as the reference has it.
    afters : sequence of str
        The same expression with one change each.

    Returns
    -------
    str or None
        ``before`` with every change made, or None when two changes touch the same characters.

    Examples
    --------
    >>> combined("(X @ Wq, X @ Wk)", ["(X @ Wq.T, X @ Wk)", "(X @ Wq, X @ Wk.T)"])
    '(X @ Wq.T, X @ Wk.T)'
    >>> combined("a + b", ["a - b", "a * b"]) is None
    True
    """
    edits = []
    for after in afters:
        prefix = _common_prefix(before, after)
        suffix = _common_prefix(before[prefix:][::-1], after[prefix:][::-1])
        edits.append((prefix, len(before) - suffix, after[prefix : len(after) - suffix]))
    edits.sort()
    for (start, end, _), (next_start, next_end, _) in itertools.pairwise(edits):
        if next_start < end or (next_start == start and (end == start or next_end == next_start)):
            return None  # two changes of the same characters, or two insertions at one place
    pieces, at = [], 0
    for start, end, text in edits:
        pieces += [before[at:start], text]
        at = end
    return "".join([*pieces, before[at:]])


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _word_start(text: str, start: int, prefix: int) -> int:
    """Move a cut forward to just after a space, a comma or an opening bracket, so a quote starts at a
    whole term rather than in the middle of a name or a key (never past where the change starts)."""
    while 0 < start < prefix and text[start - 1] not in " ,([":
        start += 1
    return start


def _window(text: str, start: int, end: int, limit: int) -> str:
    """``text[start:end]`` with an ellipsis at either side that was cut, at most ``limit`` characters."""
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""
    body = text[start:end]
    if len(head) + len(body) + len(tail) > limit:  # a change longer than the limit: keep its start
        tail = ELLIPSIS
        body = body[: limit - len(head) - 1]
    return head + body + tail
