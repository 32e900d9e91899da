"""What of a reference solution a text holds: the rule that keeps hints and the grader's messages from
telling the answer before it is earned.

Code is compared *squeezed*: whitespace, quotes and backticks ignored, so ``S.sum(axis=-1)`` reads the
same in Markdown, in a sentence or in the solution. The lessons' hints are held to it line by line
(``qkv.lessons.help_ladder``); the grader's mutant messages more strictly, span by span
(:class:`SolutionSpans`): no run of :data:`LEAK_CHARACTERS` squeezed characters of the solution's code
shows in a message, whatever it quotes.
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["KEPT_CHARACTERS", "LEAK_CHARACTERS", "SolutionSpans", "code_lines", "squeezed"]

LEAK_CHARACTERS = 20  # this many characters of the solution's code (whitespace and quotes ignored) tell it
KEPT_CHARACTERS = 12  # of a span that would tell, a message keeps this many before an ellipsis

_IGNORED = re.compile(r"[\s'\"`]")
ELLIPSIS = "…"


def squeezed(text: str) -> str:
    """``text`` without whitespace, quotes and backticks: how code is compared.

    Examples
    --------
    >>> squeezed("`p['W1'] @ x`")
    'p[W1]@x'
    """
    return _IGNORED.sub("", text)


def _depth(code: str) -> int:
    return sum(code.count(o) - code.count(c) for o, c in ("()", "[]", "{}"))


def _comments(solution: str) -> dict[int, int]:
    """Where each line's comment starts (line number to column)."""
    comments: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(solution).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.start[1]
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments


def code_lines(solution: str) -> list[str]:
    """The solution's lines of code without their comments: each line whose brackets close on it, and each
    statement that runs over several lines joined into one.

    Examples
    --------
    >>> code_lines("x = f(  # the sum\\n    a, b\\n)\\n# only a comment\\n")
    ['a, b', 'x = f( a, b )']
    """
    comments = _comments(solution)
    lines: list[str] = []
    pending: list[str] = []
    for number, line in enumerate(solution.splitlines(), start=1):
        code = (line[: comments[number]] if number in comments else line).strip()
        if not code:
            continue
        if not pending and _depth(code) == 0:
            lines.append(code)
            continue
        if pending and _depth(code) == 0:
            lines.append(code)  # a whole line inside a longer statement
        pending.append(code)
        if _depth(" ".join(pending)) <= 0:
            lines.append(" ".join(pending))
            pending = []
    return lines


class SolutionSpans:
    """Every run of :data:`LEAK_CHARACTERS` squeezed characters of a solution's code, to find in a text.

    Parameters
    ----------
    solution : str
        The reference program.
    given : str
        Code the learner is given or writes (the starter code, the functions' headers, the learner's
        own program): a run of it is not the solution's to hide.

    Examples
    --------
    >>> spans = SolutionSpans("def f(S):\\n    return S / S.sum(axis=-1, keepdims=True)\\n")
    >>> spans.found("without keepdims=True: S.sum(axis=-1) (in f)")
    []
    >>> spans.found("the sum S.sum(axis=-1, keepdims=True) is right")
    ['S.sum(axis=-1, keepdims=True)']
    >>> spans.redacted("the sum S.sum(axis=-1, keepdims=True) is right")
    'the sum S.sum(axis=-… is right'
    >>> line = "return S.sum(axis=-1, keepdims=True)"
    >>> SolutionSpans(f"def f(S):\\n    {line}\\n", given=line).found(line)  # the learner wrote it
    []
    """

    def __init__(self, solution: str, given: str = "") -> None:
        size = LEAK_CHARACTERS
        known = "\n".join(squeezed(line) for line in given.splitlines())
        self._windows = {
            piece[start : start + size]
            for piece in (squeezed(line) for line in code_lines(solution))
            for start in range(len(piece) - size + 1)
        }
        self._windows = {window for window in self._windows if window not in known}

    def _regions(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Where each squeezed character of ``text`` stands in it, and the squeezed regions that hold
        the solution's code (each a union of overlapping runs, start and end)."""
        kept = [index for index, character in enumerate(text) if not _IGNORED.match(character)]
        flat = "".join(text[index] for index in kept)
        size = LEAK_CHARACTERS
        regions: list[tuple[int, int]] = []
        for start in range(len(flat) - size + 1):
            if flat[start : start + size] not in self._windows:
                continue
            if regions and start <= regions[-1][1]:
                regions[-1] = (regions[-1][0], start + size)
            else:
                regions.append((start, start + size))
        return kept, regions

    def found(self, text: str) -> list[str]:
        """The pieces of ``text`` that hold the solution's code, as ``text`` writes them (empty for a
        text that does not tell)."""
        kept, regions = self._regions(text)
        return [text[kept[start] : kept[end - 1] + 1] for start, end in regions]

    def redacted(self, text: str) -> str:
        """``text`` with each piece that holds the solution's code cut after :data:`KEPT_CHARACTERS`
        squeezed characters, and an ellipsis for the rest: what is left holds none of it."""
        kept, regions = self._regions(text)
        pieces: list[str] = []
        at = 0
        for start, end in regions:
            cut = kept[start + KEPT_CHARACTERS - 1] + 1
            while cut > kept[start] and _word(text[cut - 1]) and _word(text[cut]):
                cut -= 1  # not in the middle of a name
            pieces += [text[at:cut], ELLIPSIS]
            at = kept[end - 1] + 1
        return "".join([*pieces, text[at:]])


def _word(character: str) -> bool:
    return character.isalnum() or character == "_"
