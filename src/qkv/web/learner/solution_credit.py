"""What a solve after the reference solution was shown earns: the instructor's choice.

A learner who was shown an exercise's reference solution and then solved it is marked in the gradebook,
the exports and the LMS score (``solved_after_solution``); so is a first solve with a program that is the
reference solution itself, names, layout, comments and docstrings aside (``Exercise.copies_solution``),
whoever was shown it. How much such a solve counts toward a lesson's
score (the LMS score and the LMS gradebook file) is set with ``qkv serve --after-solution-credit`` (and
``qkv progress export --after-solution-credit``): ``full`` (1, as any solve), ``reduced`` (half) or
``none`` (0). The default is ``reduced`` (docs/instructor.md).
"""

from __future__ import annotations

import enum

__all__ = ["DEFAULT_CREDIT", "AfterSolutionCredit", "credited_score"]


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


def credited_score(solved: int, after_solution: int, credit: AfterSolutionCredit) -> float | int:
    """A lesson's score: every solve counts 1, except those after the solution, which count ``credit``.

    Examples
    --------
    >>> credited_score(3, 1, AfterSolutionCredit.REDUCED), credited_score(3, 1, AfterSolutionCredit.FULL)
    (2.5, 3)
    >>> credited_score(3, 2, AfterSolutionCredit.NONE)
    1
    """
    score = solved - after_solution + after_solution * credit.weight
    return int(score) if float(score).is_integer() else score
