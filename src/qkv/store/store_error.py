"""The store's one exception type."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database cannot be opened or used; the message is a sentence that names the database."""
