"""The plain data of the lesson engine: exercises, feedback, rendered sections and load problems."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from qkv.grading.same_program import canonical_program

if TYPE_CHECKING:
    from qkv.grading import Suite

ExerciseKind = Literal["numeric", "letter", "choice", "code"]
EXERCISE_KINDS: tuple[str, ...] = ("numeric", "letter", "choice", "code")


SOLUTION_AFTER_FAILED_RUNS = 3
"""A code exercise's reference solution opens once it is solved, or after this many runs that did not pass."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a lesson file, located as ``file:line``.

    Examples
    --------
    >>> str(Problem(Path("lesson.md"), 12, "The exercise 'q' has no prompt."))
    "lesson.md:12: The exercise 'q' has no prompt."
    """

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class LessonError(Exception):
    """A lesson could not be loaded or used; the message is a sentence a person can act on.

    Parameters
    ----------
    message : str
        What went wrong.
    problems : sequence of Problem, optional
        The located problems behind it, when the error comes from loading files.

    Examples
    --------
    >>> error = LessonError("The lesson 'L9.9' does not exist.")
    >>> str(error), error.problems
    ("The lesson 'L9.9' does not exist.", ())
    """

    def __init__(self, message: str, problems: tuple[Problem, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True)
class Feedback:
    """The verdict on one typed answer.

    ``counted_as_attempt`` is false when the answer could not be read (empty, wrong number of
    components, not a number): the learner gets a format message and no attempt is used up.
    ``mistake`` is the key of the exercise's ``[mistakes]`` table that the answer matched (for a
    choice exercise, the letter of the wrong choice picked), or None; the store keeps it with the
    answer so an instructor can count named mistakes exactly. It is bookkeeping, not part of the
    verdict, so two feedbacks that say the same thing compare equal whatever their ``mistake``.

    Examples
    --------
    >>> Feedback(True, "Correct: q = [3, 2].", True).to_dict()
    {'correct': True, 'message': 'Correct: q = [3, 2].', 'counted_as_attempt': True}
    """

    correct: bool
    message: str
    counted_as_attempt: bool
    mistake: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, bool | str]:
        """Return the feedback as plain JSON types.

        Returns
        -------
        dict
            ``{"correct": bool, "message": str, "counted_as_attempt": bool}``.

        Examples
        --------
        >>> Feedback(False, "Type a number.", False).to_dict()["counted_as_attempt"]
        False
        """
        return {
            "correct": self.correct,
            "message": self.message,
            "counted_as_attempt": self.counted_as_attempt,
        }


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice exercise, with the feedback shown when it is picked."""

    letter: str
    text: str
    correct: bool
    feedback: str


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson, as declared by an ``{exercise}`` block in ``lesson.md``.

    Text fields may hold ``{{name}}`` placeholders that are filled from the lesson's variant;
    ``prompt`` is already filled with the seed page's own numbers.

    Examples
    --------
    >>> ex = Exercise(id="q", kind="numeric", part="practice", prompt="Type q", prompt_template="Type q")
    >>> ex.kind, ex.answer, ex.suite
    ('numeric', '', None)
    """

    id: str
    kind: ExerciseKind
    part: str
    prompt: str
    prompt_template: str
    source: Path = Path("lesson.md")
    line: int = 1
    # numeric: the variant key holding the expected value; letter/choice: the correct letter
    answer: str = ""
    name: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    hint: str = ""
    correct_message: str = ""
    # a key of the variant (or of the lesson's named wrong answers) -> the sentence naming that mistake
    mistakes: Mapping[str, str] = field(default_factory=dict)
    # letter exercises: each letter -> the words also accepted for it
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    choices: tuple[Choice, ...] = ()
    starter_code: str | None = None
    # code: hints shown one at a time by "Stuck?", and the reference solution, which the page gets only
    # once it is earned (never rendered into the page)
    hints: tuple[str, ...] = ()
    # code: the numbers (from 1) of the hints marked ``shows_solution``: they open with the reference solution
    # and reading one counts as being shown it (qkv.lessons.help_ladder)
    solution_hints: tuple[int, ...] = ()
    solution: str | None = field(default=None, repr=False)
    # code: the hidden tests, from the lesson's grading module, and the functions they call
    suite: Suite | None = field(default=None, repr=False)
    functions: tuple[str, ...] = ()
    label: str = ""

    def copies_solution(self, source: str) -> bool:
        """Whether ``source`` is this exercise's reference solution, once names of the functions' own,
        layout, comments and docstrings are set aside (``qkv.grading.same_program``).

        Examples
        --------
        >>> ex = Exercise(id="f", kind="code", part="p", prompt="", prompt_template="",
        ...               solution="def area(w, h):\\n    return w * h\\n")
        >>> ex.copies_solution("def area(width, height):  # mine\\n    return width*height")
        True
        >>> ex.copies_solution("def area(w, h):\\n    return h * w\\n")
        False
        """
        if self.solution is None:
            return False
        canonical = canonical_program(source)
        return canonical is not None and canonical == _canonical_solution(self.solution)

    def solved_with_solution(self, source: str, result: Mapping[str, Any]) -> bool:
        """Whether a graded run is a solve with the reference solution (:meth:`copies_solution`): only a
        passing run is compared, as only a solve is marked for it, and the comparison parses the program
        (a few percent of a server's CPU per run).

        Examples
        --------
        >>> ex = Exercise(id="f", kind="code", part="p", prompt="", prompt_template="",
        ...               solution="def area(w, h):\\n    return w * h\\n")
        >>> ex.solved_with_solution("def area(w, h):\\n    return w * h\\n", {"status": "pass"})
        True
        >>> ex.solved_with_solution("def area(w, h):\\n    return w * h\\n", {"status": "error"})
        False
        """
        return result.get("status") == "pass" and self.copies_solution(source)


@functools.lru_cache(maxsize=64)
def _canonical_solution(solution: str) -> str | None:
    """A reference solution's canonical text, worked out once per solution."""
    return canonical_program(solution)


@dataclass(frozen=True)
class LessonPart:
    """A part of a lesson page, as declared by a ``[[parts]]`` table in the front matter of ``lesson.md``.

    A part is one ``::::section`` of the page that holds exercises; every exercise names its part.

    Attributes
    ----------
    id : str
        The id of the page section that the part is.
    title : str
        Its name in the progress panel.
    changes_with_variant : bool
        True when "another variant" re-renders the section with new numbers; its saved answers then
        belong to the variant they were given for.
    counts_toward_done : bool
        False for a part whose exercises are shown but left out of the lesson's done count.

    Examples
    --------
    >>> part = LessonPart("practice", "Practice", changes_with_variant=True)
    >>> part.id, part.title, part.changes_with_variant, part.counts_toward_done
    ('practice', 'Practice', True, True)
    """

    id: str
    title: str
    changes_with_variant: bool = False
    counts_toward_done: bool = True


@dataclass(frozen=True)
class RenderedSection:
    """One section of a rendered lesson page.

    Examples
    --------
    >>> RenderedSection("idea", "The idea", "<section>…</section>").id
    'idea'
    """

    id: str
    title: str
    html: str


@dataclass(frozen=True)
class PlannedLesson:
    """An entry of a chapter's lesson list: every lesson has an id and title, written or not."""

    id: str
    title: str
