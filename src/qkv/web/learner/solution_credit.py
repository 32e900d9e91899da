"""What a solve after help earns: the instructor's choice, and the one place a lesson's score is computed.

A learner who was shown an exercise's reference solution and then solved it is marked in the gradebook,
the exports and the LMS score (``solved_after_solution``); so is a first solve with a program that is the
reference solution itself, names, layout, comments and docstrings aside (``Exercise.copies_solution``),
whoever was shown it. A learner who was shown hints first solved after hints (``solved_after_hints``; a
solve after the solution counts as that, whatever hints came before). How much such a solve counts toward a
lesson's score is set with ``qkv serve --after-solution-credit`` and ``--after-hint-credit`` (and the same
options of ``qkv progress export``): ``full`` (1, as any solve), ``reduced`` (half) or ``none`` (0). The
defaults are ``reduced`` after the solution and ``full`` after hints, which teach without showing code
(docs/instructor.md). :meth:`HelpPolicy.score` is the one function the class grid, the LMS gradebook file
and the LMS score all compute a lesson's score with.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["DEFAULT_CREDIT", "DEFAULT_HINT_CREDIT", "AfterSolutionCredit", "HelpPolicy", "credited_score"]


class AfterSolutionCredit(enum.Enum):
    """How much a solve after the reference solution was shown counts.

    Examples
    --------
    >>> AfterSolutionCredit("reduced").weight, AfterSolutionCredit.NONE.weight
    (0.5, 0.0)
    """

    FULL = "full"
    REDUCED = "reduced"
    NONE = "none"

    @property
    def weight(self) -> float:
        """The share of one exercise such a solve earns."""
        return {"full": 1.0, "reduced": 0.5, "none": 0.0}[self.value]

    def describe(self) -> str:
        """In words, for the LMS score's comment.

        Examples
        --------
        >>> AfterSolutionCredit.REDUCED.describe()
        'half credit'
        """
        return {"full": "full credit", "reduced": "half credit", "none": "no credit"}[self.value]


DEFAULT_CREDIT = AfterSolutionCredit.REDUCED
DEFAULT_HINT_CREDIT = AfterSolutionCredit.FULL


def credited_score(solved: int, after_solution: int, credit: AfterSolutionCredit) -> float | int:
    """A lesson's score: every solve counts 1, except those after the solution, which count ``credit``.

    Examples
    --------
    >>> credited_score(3, 1, AfterSolutionCredit.REDUCED), credited_score(3, 1, AfterSolutionCredit.FULL)
    (2.5, 3)
    >>> credited_score(3, 2, AfterSolutionCredit.NONE)
    1
    """
    return HelpPolicy(credit).score(solved, after_solution=after_solution)


def _exercises(count: int) -> str:
    return f"{count} exercise{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class HelpPolicy:
    """What a solve after the reference solution, and one after hints only, counts (the instructor's choice).

    Examples
    --------
    >>> policy = HelpPolicy(AfterSolutionCredit.REDUCED, AfterSolutionCredit.REDUCED)
    >>> policy.score(3, after_solution=1, after_hints=1)
    2
    >>> HelpPolicy().score(3, after_solution=1, after_hints=1)
    2.5
    """

    after_solution: AfterSolutionCredit = DEFAULT_CREDIT
    after_hints: AfterSolutionCredit = DEFAULT_HINT_CREDIT

    def score(self, solved: int, *, after_solution: int = 0, after_hints: int = 0) -> float | int:
        """A lesson's score: each solve counts 1, those after the solution and after hints their credit.

        Parameters
        ----------
        solved : int
            Exercises solved (of those that count).
        after_solution, after_hints : int
            Of those, the ones solved after the reference solution was shown, and after hints only.

        Returns
        -------
        int or float
            A whole score as an int, a half one as a float.

        Examples
        --------
        >>> policy = HelpPolicy(AfterSolutionCredit.NONE, AfterSolutionCredit.FULL)
        >>> policy.score(4, after_solution=1, after_hints=2)
        3
        """
        plain = solved - after_solution - after_hints
        score = plain + after_solution * self.after_solution.weight + after_hints * self.after_hints.weight
        return int(score) if float(score).is_integer() else score

    def describe(self) -> str:
        """The policy in words, for the class grid's heading.

        Examples
        --------
        >>> HelpPolicy().describe()
        'half credit after the reference solution, full credit after hints'
        """
        solution, hints = self.after_solution.describe(), self.after_hints.describe()
        return f"{solution} after the reference solution, {hints} after hints"

    def note(self, *, after_solution: int = 0, after_hints: int = 0) -> str | None:
        """The LMS score's comment on the helped solves (None when none was helped).

        Examples
        --------
        >>> print(HelpPolicy().note(after_solution=1, after_hints=2))
        1 exercise solved after the reference solution was shown (half credit);
        2 exercises solved after hints (full credit).
        >>> HelpPolicy().note() is None
        True
        """
        parts = []
        if after_solution:
            shown = "solved after the reference solution was shown"
            parts.append(f"{_exercises(after_solution)} {shown} ({self.after_solution.describe()})")
        if after_hints:
            parts.append(f"{_exercises(after_hints)} solved after hints ({self.after_hints.describe()})")
        return "; ".join(parts) + "." if parts else None
