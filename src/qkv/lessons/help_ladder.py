"""The "Stuck?" ladder of a code exercise: when each hint is earned, and hints that must not tell.

A code exercise's hints are a ladder. Hint 1 opens after the learner's first counted failed run (a program
of their own that defined the functions, ran the tests and did not pass them all; the same program again,
or the starter code, does not count), and each next hint after one more such run; a solved exercise opens
every hint. A hint the lesson marks as showing the solution (``{text = "...", shows_solution = true}`` in
the ``hints`` list) opens with the reference solution, and reading it counts as being shown the solution.

Every other hint teaches without telling: :func:`leaked_lines` finds the lines of the reference solution a
hint holds (each line of at least :data:`LEAK_CHARACTERS` characters of code, whitespace and quotes
ignored, or the expression it returns or assigns), and the lesson's validation refuses such a hint.
"""

from __future__ import annotations

import re

from qkv.grading.feedback.leaks import LEAK_CHARACTERS, code_lines, squeezed
from qkv.lessons.model import SOLUTION_AFTER_FAILED_RUNS

__all__ = [
    "HINT_EVERY_FAILED_RUNS",
    "LEAK_CHARACTERS",
    "hint_open",
    "hints_open",
    "leaked_lines",
    "next_hint_sentence",
]

HINT_EVERY_FAILED_RUNS = 1  # one more counted failed run opens the next hint

_TARGET = re.compile(r"^(?:return\s+|[\w\s,\[\]().]+?(?<![=!<>])=(?!=)\s*)(?P<value>.+)$")


def hint_open(number: int, *, solved: bool, failed_runs: int, shows_solution: bool = False) -> bool:
    """Whether hint ``number`` (from 1) is earned: solved, or ``number`` counted failed runs (the
    solution's runs for a hint that shows the solution).

    Examples
    --------
    >>> hint_open(1, solved=False, failed_runs=0), hint_open(1, solved=False, failed_runs=1)
    (False, True)
    >>> hint_open(3, solved=True, failed_runs=0)
    True
    >>> hint_open(2, solved=False, failed_runs=2, shows_solution=True)
    False
    """
    if solved:
        return True
    needed = SOLUTION_AFTER_FAILED_RUNS if shows_solution else number * HINT_EVERY_FAILED_RUNS
    return failed_runs >= needed


def hints_open(total: int, solution_hints: tuple[int, ...], *, solved: bool, failed_runs: int) -> int:
    """How many hints, from the first, are open (the ladder is climbed in order).

    Examples
    --------
    >>> hints_open(3, (), solved=False, failed_runs=2), hints_open(3, (3,), solved=False, failed_runs=9)
    (2, 3)
    >>> hints_open(3, (2,), solved=False, failed_runs=2)
    1
    """
    opened = 0
    for number in range(1, total + 1):
        shows = number in solution_hints
        if not hint_open(number, solved=solved, failed_runs=failed_runs, shows_solution=shows):
            break
        opened = number
    return opened


def next_hint_sentence(total: int, opened: int, failed_runs: int, solution_hints: tuple[int, ...]) -> str:
    """What opens the next hint, in a sentence for the page and for a refused request.

    Examples
    --------
    >>> next_hint_sentence(3, 0, 0, ())
    'Hint 1 of 3 opens after a run of your own code that does not pass all the tests.'
    >>> next_hint_sentence(3, 1, 1, ())
    'Hint 2 of 3 opens after 1 more run of your own code that does not pass all the tests (a program you \
ran before does not count).'
    >>> "(a program you ran before does not count, or once" in next_hint_sentence(3, 2, 2, (3,))
    True
    >>> next_hint_sentence(3, 3, 3, ())
    'Every hint is open.'
    """
    if opened >= total:
        return "Every hint is open."
    number = opened + 1
    shows = number in solution_hints
    needed = SOLUTION_AFTER_FAILED_RUNS if shows else number * HINT_EVERY_FAILED_RUNS
    left = max(1, needed - failed_runs)
    more = " more" if failed_runs else ""
    runs = "a run" if left == 1 and not more else f"{left}{more} run{'' if left == 1 else 's'}"
    sentence = (
        f"Hint {number} of {total} opens after {runs} of your own code that does not pass all the tests"
    )
    # The same failing program sent again is no new try: say so, as the solution's note does.
    again = "a program you ran before does not count" if failed_runs else ""
    if shows:
        sentence += (
            f" ({again + ', ' if again else ''}or once you have solved the exercise); it shows the reference "
            "solution's code, so reading it counts as being shown the solution"
        )
    elif again:
        sentence += f" ({again})"
    return sentence + "."


def leaked_lines(hint: str, solution: str, given: str = "") -> list[str]:
    """The lines of ``solution`` that ``hint`` holds: a line of code of at least ``LEAK_CHARACTERS``
    characters (whitespace, quotes and backticks ignored), or the expression a line returns or assigns,
    when that is as long; lines the learner is ``given`` (the starter code) are not the solution's.

    Parameters
    ----------
    hint : str
        A hint's Markdown text.
    solution : str
        The exercise's reference program.
    given : str
        The exercise's starter code.

    Returns
    -------
    list of str
        The solution's lines found in the hint, as the solution writes them; empty for a hint that
        does not tell.

    Examples
    --------
    >>> solution = "def f(Q, K):\\n    return Q @ K.T / np.sqrt(Q.shape[1])  # scaled\\n"
    >>> leaked_lines("Divide by the square root of d_k, the number of columns.", solution)
    []
    >>> leaked_lines("It is `S = Q @ K.T / np.sqrt(Q.shape[1])`.", solution)
    ['return Q @ K.T / np.sqrt(Q.shape[1])']
    """
    squeezed_hint = squeezed(hint)
    starter = {squeezed(line) for line in code_lines(given)}
    found = []
    for line in code_lines(solution):
        if squeezed(line) in starter:
            continue
        candidates = [line]
        target = _TARGET.match(line)
        if target:
            candidates.append(target.group("value"))
        for candidate in candidates:
            piece = squeezed(candidate)
            if len(piece) >= LEAK_CHARACTERS and piece in squeezed_hint:
                found.append(line)
                break
    return found
