"""The objects the web app and the CLI use: a catalog of chapters, and lessons that render and check.

Build them with :func:`qkv.lessons.load_catalog`; these classes hold no file handling of their own.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkv.grading import Suite
from qkv.lessons.exercise_texts import ExerciseTexts, exercise_texts
from qkv.lessons.feedback import check_answer
from qkv.lessons.model import Exercise, Feedback, LessonError, LessonPart, PlannedLesson, RenderedSection
from qkv.lessons.render import render_reference, render_sections
from qkv.lessons.unearned import answers_given_away, inputs_of_variant
from qkv.lessons.variants import LessonHooks, check_seed
from qkv.lessons.widgets import WidgetSet

__all__ = ["Catalog", "Chapter", "CodeExercise", "Lesson"]

VARIANTS_KEPT = 512  # drawn variants kept per lesson: a class's worth of learners, each with a few


@dataclass(eq=False)
class Chapter:
    """A chapter: its lessons in order (written or planned) and its reference, written once.

    Attributes
    ----------
    id, title : str
        ``"L4"``, ``"Attention"``.
    lesson_ids : list of str
        Every lesson of the chapter in teaching order, including the planned ones.
    planned : list of PlannedLesson
        Id and title of every lesson, in the same order.
    widgets : WidgetSet
        The widgets of the chapter's ``widgets`` folder, which its lessons and reference may place.
    reference_widgets : tuple of str
        The names of the widgets its reference places.
    """

    id: str
    title: str
    lesson_ids: list[str]
    planned: list[PlannedLesson]
    reference_text: str = ""
    source: Path = Path("chapter.toml")
    widgets: WidgetSet = field(default_factory=WidgetSet, repr=False)
    reference_widgets: tuple[str, ...] = ()
    _reference: RenderedSection | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reference(self) -> RenderedSection:
        """The chapter reference as a page section (rendered on first use, then reused).

        Returns
        -------
        RenderedSection
            With id ``"reference"``.

        Examples
        --------
        >>> chapter = Chapter("L9", "Demo", ["L9.1"], [], "## Reference\\n\\nSame on every page.\\n")
        >>> chapter.reference().title
        'Reference'
        """
        with self._lock:
            if self._reference is None:
                self._reference = render_reference(self.reference_text, self.widgets)
            return self._reference

    def position(self, lesson_id: str) -> str:
        """The place line of a lesson, such as ``"L9.1 · lesson 1 of 6"``.

        Examples
        --------
        >>> Chapter("L9", "Demo", ["L9.1", "L9.2"], []).position("L9.2")
        'L9.2 · lesson 2 of 2'
        """
        return f"{lesson_id} · lesson {self.lesson_ids.index(lesson_id) + 1} of {len(self.lesson_ids)}"


@dataclass(frozen=True, eq=False)
class Lesson:
    """One written lesson: its text, exercises and variant hooks.

    Attributes
    ----------
    id, title, goal, chapter_id, place : str
        For example ``"L9.1"``, ``"Rectangles"``, the goal sentence, ``"L9"``,
        ``"L9.1 · lesson 1 of 6"``.
    exercises : dict of str to Exercise
        In page order.
    parts : tuple of LessonPart
        The sections of the page that hold exercises, as the front matter declares them.
    widget_names : tuple of str
        The widgets its page shows (the chapter reference's included), each once: the page loads
        their styles.
    """

    id: str
    title: str
    goal: str
    chapter_id: str
    place: str
    exercises: dict[str, Exercise]
    text: str = field(repr=False)
    source: Path
    hooks: LessonHooks = field(repr=False)
    chapter: Chapter = field(repr=False)
    parts: tuple[LessonPart, ...] = ()
    # Drawn variants by seed: checking an answer or rendering a page draws the same variant again and
    # again (a few ms each), so the most recent ones are kept. Callers get copies; the cache stays as drawn.
    _drawn: OrderedDict[int | None, tuple[dict[str, Any], dict[str, Any]]] = field(
        default_factory=OrderedDict, init=False, repr=False
    )
    _drawn_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    widget_names: tuple[str, ...] = ()

    def variant_section_ids(self) -> list[str]:
        """The ids of the sections that another variant re-renders, in declaration order.

        Examples
        --------
        >>> from qkv.lessons import load_catalog
        >>> lesson = load_catalog().lessons[0]
        >>> lesson.variant_section_ids() == [p.id for p in lesson.parts if p.changes_with_variant]
        True
        """
        return [part.id for part in self.parts if part.changes_with_variant]

    def exercise(self, exercise_id: str) -> Exercise:
        """The exercise with this id.

        Raises
        ------
        LessonError
            If the lesson has no such exercise; the message lists the ones it has.
        """
        if not isinstance(exercise_id, str) or exercise_id not in self.exercises:
            raise LessonError(
                f"Lesson {self.id} has no exercise {exercise_id!r}; its exercises are "
                f"{', '.join(self.exercises)}."
            )
        return self.exercises[exercise_id]

    def variant(self, seed: int | None) -> dict[str, Any]:
        """The numbers of one variant, JSON-able: ``{"seed": ..., "x": ..., "q": ..., ...}``.

        Parameters
        ----------
        seed : int or None
            None gives the seed page's own numbers; a whole number gives the same new numbers
            every time.

        Raises
        ------
        LessonError
            If the seed is not None or a whole number from 0 to 2**63 - 1.
        """
        return copy.deepcopy(self._variant_and_names(seed)[0])

    def _variant_and_names(self, seed: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """The variant and its namespace (with the named wrong answers), drawn once per recent seed."""
        seed = check_seed(seed)  # first: True == 1 as a key, but True is no seed
        with self._drawn_lock:
            if seed in self._drawn:
                self._drawn.move_to_end(seed)
                return self._drawn[seed]
        data = self.hooks.variant(seed)  # outside the lock: drawing takes milliseconds
        drawn = (data, self.hooks.namespace(data))
        with self._drawn_lock:
            self._drawn[seed] = drawn
            while len(self._drawn) > VARIANTS_KEPT:
                self._drawn.popitem(last=False)
        return drawn

    def texts(self, exercise_id: str, variant_seed: int | None = None) -> ExerciseTexts:
        """An exercise's question and named mistakes as a learner in that variant read them.

        Raises
        ------
        LessonError
            For an unknown exercise or an invalid seed.

        Examples
        --------
        >>> from qkv.lessons import load_catalog
        >>> lesson = load_catalog().lessons[0]
        >>> texts = lesson.texts(next(iter(lesson.exercises)))
        >>> "{{" in texts.prompt or any("{{" in m for m in texts.mistakes.values())
        False
        """
        exercise = self.exercise(exercise_id)
        return exercise_texts(exercise, self._variant_and_names(variant_seed)[1])

    def check(self, exercise_id: str, answer: str, variant_seed: int | None = None) -> Feedback:
        """Check a typed answer to a numeric, letter or choice exercise.

        Parameters
        ----------
        exercise_id : str
            For example ``"q"``.
        answer : str
            What the learner typed.
        variant_seed : int or None
            The variant the learner saw (None: the seed page's numbers).

        Returns
        -------
        Feedback

        Raises
        ------
        LessonError
            For an unknown exercise, an invalid seed, or a code exercise (the grader checks those).
        """
        exercise = self.exercise(exercise_id)
        return check_answer(exercise, answer, self._variant_and_names(variant_seed)[1])

    def answers_given_away(
        self,
        shown: Iterable[Sequence[float | None]],
        *,
        variant_seed: int | None,
        earned: Collection[str],
        inputs: Sequence[Any] = (),
    ) -> list[Exercise]:
        """The numeric exercises, not yet earned, whose answer a widget's result would give away.

        Parameters
        ----------
        shown : iterable of sequences of float or None
            The vectors the widget would show (None for a number it cannot show).
        variant_seed : int or None
            The variant the learner sees.
        earned : collection of str
            Ids of the exercises answered correctly for that variant.
        inputs : sequence, optional
            The vectors and matrices the result was computed from: when every one is a value of the
            variant, whole-number answers are guarded too (``qkv.lessons.unearned.inputs_of_variant``).

        Returns
        -------
        list of Exercise
            See :func:`qkv.lessons.unearned.answers_given_away` for what counts as giving one away.

        Raises
        ------
        LessonError
            If the seed is not valid.

        Examples
        --------
        >>> from qkv.lessons import load_catalog
        >>> lesson = load_catalog().lessons[0]
        >>> variant = lesson.variant(None)
        >>> numeric = [ex for ex in lesson.exercises.values() if ex.kind == "numeric"]
        >>> first = next(ex for ex in numeric if any(v != round(v) for v in variant[ex.answer]))
        >>> answer = variant[first.answer]
        >>> first in lesson.answers_given_away([answer], variant_seed=None, earned=set())
        True
        >>> lesson.answers_given_away([answer], variant_seed=None, earned=set(lesson.exercises))
        []
        """
        names = self._variant_and_names(variant_seed)[1]
        whole = inputs_of_variant(inputs, names)  # the lesson's own inputs: its whole-number answers too
        return answers_given_away(self.exercises.values(), names, earned, shown, whole_numbers=whole)

    def render(self, variant_seed: int | None = None) -> list[RenderedSection]:
        """Every section of the page in order, ending with the chapter reference.

        Parameters
        ----------
        variant_seed : int or None
            The variant whose numbers the page shows (None: the seed page's numbers).

        Returns
        -------
        list of RenderedSection

        Raises
        ------
        LessonError
            If the seed is not valid.
        """
        names = self._variant_and_names(variant_seed)[1]
        sections = render_sections(self.text, names, self.exercises, self.chapter.widgets)
        return [*sections, self.chapter.reference()]


@dataclass(frozen=True)
class CodeExercise:
    """A code exercise with its place: ``id`` is ``"LESSON/EXERCISE"``, e.g. ``"L9.1/area"``."""

    id: str
    lesson: Lesson
    exercise: Exercise

    @property
    def suite(self) -> Suite:
        """The exercise's hidden tests (every loaded code exercise has them)."""
        assert self.exercise.suite is not None, "the loader refuses a code exercise without a suite"
        return self.exercise.suite


@dataclass(frozen=True, eq=False)
class Catalog:
    """Every chapter and every written lesson, in order, and the widgets of all the chapters.

    Examples
    --------
    >>> Catalog([], []).lesson("L9.1")
    Traceback (most recent call last):
    ...
    qkv.lessons.model.LessonError: There is no written lesson 'L9.1'; the written lessons are: none.
    """

    chapters: list[Chapter]
    lessons: list[Lesson]
    widgets: WidgetSet = field(default_factory=WidgetSet)

    def lesson(self, lesson_id: str) -> Lesson:
        """The written lesson with this id (raises LessonError with a sentence if there is none)."""
        for lesson in self.lessons:
            if lesson.id == lesson_id:
                return lesson
        known = ", ".join(lesson.id for lesson in self.lessons) or "none"
        planned = any(lesson_id in chapter.lesson_ids for chapter in self.chapters)
        reason = "is planned but not written yet" if planned else "does not exist"
        if planned:
            raise LessonError(f"The lesson {lesson_id!r} {reason}; the written lessons are: {known}.")
        raise LessonError(f"There is no written lesson {lesson_id!r}; the written lessons are: {known}.")

    def code_exercises(self) -> list[CodeExercise]:
        """Every code exercise of every written lesson, in teaching order.

        Examples
        --------
        >>> Catalog([], []).code_exercises()
        []
        """
        return [
            CodeExercise(f"{lesson.id}/{exercise.id}", lesson, exercise)
            for lesson in self.lessons
            for exercise in lesson.exercises.values()
            if exercise.kind == "code"
        ]

    def code_exercise(self, qualified_id: str) -> CodeExercise:
        """The code exercise with an id such as ``"L9.1/area"`` (lesson id, slash, exercise id).

        Raises
        ------
        LessonError
            If there is no such code exercise; the message lists the ids there are.

        Examples
        --------
        >>> Catalog([], []).code_exercise("L9.9/area")
        Traceback (most recent call last):
        ...
        qkv.lessons.model.LessonError: There is no code exercise 'L9.9/area'; the code exercises are: none.
        """
        known = self.code_exercises()
        for entry in known:
            if entry.id == qualified_id:
                return entry
        listed = ", ".join(entry.id for entry in known) or "none"
        raise LessonError(f"There is no code exercise {qualified_id!r}; the code exercises are: {listed}.")

    def chapter(self, chapter_id: str) -> Chapter:
        """The chapter with this id (raises LessonError with a sentence if there is none)."""
        for chapter in self.chapters:
            if chapter.id == chapter_id:
                return chapter
        known = ", ".join(chapter.id for chapter in self.chapters) or "none"
        raise LessonError(f"There is no chapter {chapter_id!r}; the chapters are: {known}.")

    def chapter_reference(self, chapter_id: str) -> RenderedSection:
        """The chapter's reference section, rendered once and shared by all its lessons."""
        return self.chapter(chapter_id).reference()
