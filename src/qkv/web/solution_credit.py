"""What a solve after help earns: the instructor's choice, and the one place a lesson's score is computed.

A learner who was shown an exercise's reference solution and then solved it is marked in the gradebook,
the exports and the LMS score (``solved_after_solution``); so is a first solve with a program that is the
reference solution itself, names, layout, comments and docstrings aside (``Exercise.copies_solution``),
whoever was shown it. A learner who was shown hints first solved after hints (``solved_after_hints``; a
solve after the solution counts as that, whatever hints came before). How much such a solve counts toward a
lesson's score is set with ``qkv serve --after-solution-credit`` and ``--after-hint-credit`` (and the same
options of ``qkv progress export``): ``full`` (1, as any solve), ``reduced`` (half) or ``none`` (0). The
defaults are ``reduced`` after the solution and ``full`` after hints, which teach without showing code
(docs/instructor.md). :meth:`HelpPolicy.credit` is the one function the class grid, the gradebook, the LMS
gradebook file and the LMS score all compute a lesson's score with: each solve weighs its help credit, times
its late credit when the lesson has a due date (``qkv courses due``): in full up to the due date in force for
the learner (an extension moves it), the lesson's late credit after it, nothing after the close.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from qkv.store.instructor.due_dates import DatesInForce, Standing

__all__ = [
    "DEFAULT_CREDIT",
    "DEFAULT_HINT_CREDIT",
    "AfterSolutionCredit",
    "HelpPolicy",
    "Solve",
    "credit_words",
    "credited_score",
    "late_note",
]


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


@dataclass(frozen=True)
class Solve:
    """One exercise that counts, solved: how it was helped and when it was first solved.

    ``helped`` is ``"solution"`` (after the reference solution was shown), ``"hints"`` (after hints only)
    or ``""``; ``at`` is the time of the first solve (naive UTC; None: unknown, counted on time).
    """

    helped: str = ""
    at: datetime | None = None

    def standing(self, dates: DatesInForce | None) -> Standing:
        """On time, late or closed, against the learner's dates of the lesson (None: no dates, on time).

        Examples
        --------
        >>> due = DatesInForce("L1.1", datetime(2026, 1, 10), None, 0.5, extended=False)
        >>> Solve("", datetime(2026, 1, 11)).standing(due).value, Solve("", None).standing(due).value
        ('late', 'on time')
        """
        if dates is None or self.at is None:
            return Standing.ON_TIME
        return dates.standing_at(self.at)


def _exercises(count: int) -> str:
    return f"{count} exercise{'' if count == 1 else 's'}"


def credit_words(credit: float) -> str:
    """What late work earns, as the learner (and the LMS's comment) reads it.

    Examples
    --------
    >>> credit_words(1.0), credit_words(0.5), credit_words(0.25), credit_words(0.0)
    ('counts in full', 'counts at half', 'counts at 25%', 'earns nothing')
    """
    if credit >= 1.0:
        return "counts in full"
    if credit <= 0.0:
        return "earns nothing"
    return "counts at half" if credit == 0.5 else f"counts at {credit:.0%}"


def late_note(late: int, closed: int, late_credit: float) -> str | None:
    """The LMS score's comment on the solves after the due date in force (None when none was late).

    Examples
    --------
    >>> print(late_note(2, 1, 0.5))
    2 exercises solved late (counts at half); 1 exercise solved after the lesson closed (earns nothing).
    >>> late_note(0, 0, 0.5) is None
    True
    """
    parts = []
    if late:
        parts.append(f"{_exercises(late)} solved late ({credit_words(late_credit)})")
    if closed:
        parts.append(f"{_exercises(closed)} solved after the lesson closed (earns nothing)")
    return "; ".join(parts) + "." if parts else None


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
        solves = [Solve("solution")] * after_solution + [Solve("hints")] * after_hints + [Solve()] * plain
        return self.credit(solves)

    def weight(self, helped: str) -> float:
        """What one solve earns for its help (``Solve.helped``), before any lateness.

        Examples
        --------
        >>> HelpPolicy().weight("solution"), HelpPolicy().weight("hints"), HelpPolicy().weight("")
        (0.5, 1.0, 1.0)
        """
        if helped == "solution":
            return self.after_solution.weight
        return self.after_hints.weight if helped == "hints" else 1.0

    def credit(self, solves: Iterable[Solve], dates: DatesInForce | None = None) -> float | int:
        """A lesson's score: each solve weighs its help credit times its late credit (``dates``: the
        learner's dates of the lesson, an extension included; None: no due date, every solve on time).

        The one computation of a lesson's score: the class grid, the gradebook's ``late_credit``, the LMS
        gradebook file and the LMS score all come here, so they agree.

        Parameters
        ----------
        solves : iterable of Solve
            The lesson's counted exercises solved.
        dates : DatesInForce, optional
            The due date, close and late credit in force for the learner.

        Returns
        -------
        int or float
            A whole score as an int, another one as a float (to a millionth).

        Examples
        --------
        >>> due = DatesInForce("L1.1", datetime(2026, 1, 10), datetime(2026, 1, 12), 0.5, extended=False)
        >>> on_time, late, closed = (Solve("", datetime(2026, 1, day)) for day in (9, 11, 13))
        >>> HelpPolicy().credit([on_time, late, closed], due), HelpPolicy().credit([on_time, late, closed])
        (1.5, 3)
        >>> HelpPolicy().credit([Solve("solution", datetime(2026, 1, 11))], due)
        0.25
        """
        total = 0.0
        for solve in solves:
            late = 1.0 if dates is None or solve.at is None else dates.credit_at(solve.at)
            total += self.weight(solve.helped) * late
        total = round(total, 6)
        return int(total) if total.is_integer() else total

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
