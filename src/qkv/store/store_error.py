"""The store's exceptions: ``StoreError``, and the one case of it a caller answers apart."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database cannot be opened or used; the message is a sentence that names the database."""


class LearnerErased(StoreError):
    """Work was to be saved for a learner whose data was erased on request (``qkv learners erase``).

    Their id is never given a row again, so that nothing reaches the database under it after the erasure:
    a program graded while it was erased, or a browser still holding the old cookie.
    """
