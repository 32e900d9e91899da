"""The store's clock: the time every row is stamped with, in UTC without a zone (as the columns hold it)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """Now, in UTC, as a naive ``datetime`` (the store's columns hold UTC without a zone).

    Examples
    --------
    >>> utc_now().tzinfo is None
    True
    """
    return datetime.now(UTC).replace(tzinfo=None)


__all__ = ["utc_now"]
