"""What else happens when a learner's work on a lesson is saved: the listeners other parts of the app add.

The lesson API (``web/learner/``) saves a learner's work and then calls :func:`lesson_changed`; it knows
nothing of who listens. LTI (``web/lti/``) adds a listener when it is installed, which queues the learner's
score for the LMS. So the learner's package never imports LTI's, and an app without LTI has no listener.

Examples
--------
>>> from types import SimpleNamespace
>>> state, heard = SimpleNamespace(), []
>>> lesson_changed(state, "learner", "L4.1", {"solved": 1})  # nobody listens yet: nothing happens
>>> add_listener(state, lambda learner, lesson, progress: heard.append((learner, lesson, progress)))
>>> lesson_changed(state, "learner", "L4.1", {"solved": 1})
>>> heard
[('learner', 'L4.1', {'solved': 1})]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LessonListener", "add_listener", "lesson_changed"]

LessonListener = Callable[[str, str, dict[str, Any]], None]  # (learner id, lesson id, PROGRESS document)
_LISTENERS = "qkv_lesson_listeners"


def add_listener(app_state: object, listener: LessonListener) -> None:
    """Call ``listener`` after every save of a learner's work on a lesson, in this app."""
    listeners: list[LessonListener] = getattr(app_state, _LISTENERS, [])
    setattr(app_state, _LISTENERS, [*listeners, listener])


def lesson_changed(app_state: object, learner_id: str, lesson_id: str, progress: dict[str, Any]) -> None:
    """Tell every listener of the app that a learner's work on a lesson was saved, with its progress."""
    for listener in getattr(app_state, _LISTENERS, []):
        listener(learner_id, lesson_id, progress)
