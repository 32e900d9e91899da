"""Shared fixtures of the grading tests.

The solution corpora under correct/, wrong/ and hostile/ are learners' files, read as text and graded in
the sandbox. They must never be imported by pytest itself (``--doctest-modules`` would import every .py
file it collects, and the hostile ones fork, loop and kill), so they are excluded from collection here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

collect_ignore_glob = ["correct/*", "wrong/*", "hostile/*"]


@pytest.fixture(scope="session")
def grader() -> Iterator[object]:
    """One grader for the whole session, with warm spares so that each grading takes a fraction of a second."""
    from qkv.grading import Grader

    with Grader(warm_spares=2) as shared:
        yield shared
