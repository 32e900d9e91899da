"""The store's clock: the time every row is stamped with, in UTC without a zone (as the columns hold it).

Every stamp qkv keeps (work saved, a first solve, a score's time, a session's end) is read from
``utc_now``, so a test that needs the time to pass (work on time, then late, then after a lesson's close)
installs its own clock with ``use_clock`` instead of sleeping:

    >>> later = datetime(2030, 1, 1, 12, 0)
    >>> with use_clock(lambda: later):
    ...     utc_now()
    datetime.datetime(2030, 1, 1, 12, 0)
    >>> utc_now() < later
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime


def _system_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


_source: Callable[[], datetime] = _system_now


def utc_now() -> datetime:
    """Now, in UTC, as a naive ``datetime`` (the store's columns hold UTC without a zone).

    Examples
    --------
    >>> utc_now().tzinfo is None
    True
    """
    return _source()


@contextmanager
def use_clock(source: Callable[[], datetime]) -> Iterator[None]:
    """Read the time from ``source`` (naive UTC) inside the block, for every thread of the process.

    Parameters
    ----------
    source : callable
        Returns the time it is, naive UTC; a test's clock moves it forward as its story needs.

    Examples
    --------
    >>> with use_clock(lambda: datetime(2030, 1, 1)):
    ...     utc_now().year
    2030
    """
    global _source
    before = _source
    _source = source
    try:
        yield
    finally:
        _source = before


__all__ = ["use_clock", "utc_now"]
