"""An exercise as a learner saw it, for the instructor: its question and its named mistakes' sentences,
filled with the numbers of one variant (never a ``{{…}}`` template).

    >>> from qkv.lessons.model import Exercise
    >>> ex = Exercise(id="q", kind="numeric", part="p", prompt="", prompt_template="x = {{x}}. Type q.",
    ...               mistakes={"swapped": "You swapped x = {{x}}."})
    >>> texts = exercise_texts(ex, {"x": [1, 2]})
    >>> texts.prompt, texts.mistakes["swapped"]
    ('x = [1, 2]. Type q.', 'You swapped x = [1, 2].')
    >>> texts.prompt_html
    'x = <span class="literal">[1, 2]</span>. Type q.'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qkv.lessons.markup import fill
from qkv.lessons.model import Exercise
from qkv.lessons.render import prompt_html


@dataclass(frozen=True)
class ExerciseTexts:
    """The question (plain and as safe HTML) and each named mistake's sentence, for one variant."""

    prompt: str
    prompt_html: str
    mistakes: dict[str, str]


def exercise_texts(exercise: Exercise, names: Mapping[str, Any]) -> ExerciseTexts:
    """The exercise's question and named mistakes filled with ``names`` (a variant's namespace).

    Multiple-choice exercises name their mistakes by the wrong choice's letter, with its feedback; the
    question then lists the choices after the prompt.
    """
    template = exercise.prompt_template if exercise.kind != "code" else exercise.label or exercise.prompt
    prompt = fill(template, names)
    shown = prompt_html(template, names)
    if exercise.kind == "choice":
        mistakes = {c.letter: fill(c.feedback, names) for c in exercise.choices if not c.correct}
        listed = " ".join(f"{c.letter}) {fill(c.text, names)}" for c in exercise.choices)
        prompt = f"{prompt} {listed}".strip()
        shown = f"{shown} {prompt_html(listed, names)}".strip()
    else:
        mistakes = {key: fill(message, names) for key, message in exercise.mistakes.items()}
    return ExerciseTexts(prompt=prompt, prompt_html=shown, mistakes=mistakes)


__all__ = ["ExerciseTexts", "exercise_texts"]
