"""How many new learner identities one client address may be given: a sliding window per address.

Identities are free (one page view mints a cookie), so without a bound one client could become hundreds of
learners and take hundreds of places in the grading line. A classroom behind one NAT shares an address, so
the default allows a class several times over.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["MintLimit", "TooManyIdentities"]


class TooManyIdentities(RuntimeError):
    """An address was given as many new identities as the window allows; ``retry_after_s`` until the next."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class MintLimit:
    """At most ``per_window`` new identities per address in any ``window_s`` seconds.

    Parameters
    ----------
    per_window : int
        New identities one address may be given in one window.
    window_s : float
        The window's length.
    max_addresses : int
        Addresses remembered at once (the oldest are forgotten first), so memory stays bounded.
    clock : callable
        ``time.monotonic`` unless a test gives another.

    Examples
    --------
    >>> now = [0.0]
    >>> limit = MintLimit(2, 60.0, clock=lambda: now[0])
    >>> limit.take("10.0.0.1"); limit.take("10.0.0.1")
    >>> try:
    ...     limit.take("10.0.0.1")
    ... except TooManyIdentities as refused:
    ...     print(refused.retry_after_s, str(refused)[:48])
    60 This address was given 2 new learner identities
    >>> now[0] = 61.0; limit.take("10.0.0.1")
    """

    def __init__(
        self,
        per_window: int,
        window_s: float,
        *,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_window < 1 or window_s <= 0:
            raise ValueError(
                f"A mint limit needs per_window >= 1 and window_s > 0, not {per_window} and {window_s}."
            )
        self.per_window = per_window
        self.window_s = window_s
        self.max_addresses = max_addresses
        self._clock = clock
        self._lock = threading.Lock()
        self._minted: OrderedDict[str, deque[float]] = OrderedDict()

    def take(self, address: str) -> None:
        """Count one new identity for ``address``, or raise ``TooManyIdentities`` if it has had its share."""
        now = self._clock()
        with self._lock:
            times = self._minted.pop(address, None) or deque()
            while times and times[0] <= now - self.window_s:
                times.popleft()
            self._minted[address] = times  # now the most recently used address
            if len(times) >= self.per_window:
                retry = max(1, math.ceil(times[0] + self.window_s - now))
                raise TooManyIdentities(
                    f"This address was given {len(times)} new learner identities in the last "
                    f"{self.window_s:g} s, the most allowed; keep your cookie, or try again in {retry} s.",
                    retry,
                )
            times.append(now)
            while len(self._minted) > self.max_addresses:
                self._minted.popitem(last=False)
