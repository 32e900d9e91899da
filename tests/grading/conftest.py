"""Shared fixtures of the grading tests.

The solution corpora under correct/, wrong/, hostile/ and side_effects/ are learners' files, read as text
and graded in the sandbox. They must never be imported by pytest itself (``--doctest-modules`` would import every .py
file it collects, and the hostile ones fork, loop and kill), so they are excluded from collection here.
"""

from __future__ import annotations

collect_ignore_glob = ["correct/*", "wrong/*", "hostile/*", "side_effects/*"]
