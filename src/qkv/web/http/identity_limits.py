"""How many new learners one client address may start saving work for: a sliding window per address.

Identities are free (one page view mints a cookie), so without a bound one client could become hundreds of
learners, each with stored work and a place in the grading line. But a bound on *minted* cookies lets one
client lock a classroom out: 200 cookieless requests from a school's NAT would leave every new learner
behind it with a 429 on the first page. So a new identity costs nothing until it first saves work (an
answer, a program, a draft, a name, a variant): only then is it counted against its address, once.
Reading pages never uses up the bound, and a minted cookie that is never used is free.

The trade-off: a client that *does* save work under many identities can still use up its address's
share, and then new learners behind that address can read the lessons but not save until the window
moves on. Learners who saved work before are never refused. The default allows a class behind one NAT
several times over.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

__all__ = ["MintLimit", "TooManyIdentities"]


class TooManyIdentities(RuntimeError):
    """An address has had as many new learners as the window allows; ``retry_after_s`` until the next."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class MintLimit:
    """At most ``per_window`` new learners per address in any ``window_s`` seconds, each counted once.

    Parameters
    ----------
    per_window : int
        New learners one address may start in one window.
    window_s : float
        The window's length.
    max_addresses : int
        Addresses remembered at once (the oldest are forgotten first), so memory stays bounded.
    max_identities : int
        Identities remembered as counted (or as known to the store); a forgotten one is looked up again.
    clock : callable
        ``time.monotonic`` unless a test gives another.

    Examples
    --------
    >>> now = [0.0]
    >>> limit = MintLimit(2, 60.0, clock=lambda: now[0])
    >>> limit.take("10.0.0.1", "ann"); limit.take("10.0.0.1", "ben")
    >>> limit.take("10.0.0.1", "ann")  # counted already: free
    >>> try:
    ...     limit.take("10.0.0.1", "cy")
    ... except TooManyIdentities as refused:
    ...     print(refused.retry_after_s, str(refused)[:52])
    60 This address has started 2 new learners saving work
    >>> now[0] = 61.0; limit.take("10.0.0.1", "cy")
    """

    def __init__(
        self,
        per_window: int,
        window_s: float,
        *,
        max_addresses: int = 10_000,
        max_identities: int = 200_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_window < 1 or window_s <= 0:
            raise ValueError(
                f"A mint limit needs per_window >= 1 and window_s > 0, not {per_window} and {window_s}."
            )
        self.per_window = per_window
        self.window_s = window_s
        self.max_addresses = max_addresses
        self.max_identities = max_identities
        self._clock = clock
        self._lock = threading.Lock()
        self._started: OrderedDict[str, deque[float]] = OrderedDict()
        self._counted: OrderedDict[str, None] = OrderedDict()

    def counted(self, identity: str) -> bool:
        """Whether ``identity`` was counted (or remembered) already, so it costs nothing more."""
        with self._lock:
            if identity not in self._counted:
                return False
            self._counted.move_to_end(identity)
            return True

    def remember(self, identity: str) -> None:
        """Note that ``identity`` costs nothing (the store already holds its work), without counting it."""
        with self._lock:
            self._note(identity)

    def take(self, address: str, identity: str) -> None:
        """Count ``identity`` as a new learner of ``address`` (once), or raise ``TooManyIdentities``."""
        now = self._clock()
        with self._lock:
            if identity in self._counted:
                self._counted.move_to_end(identity)
                return
            times = self._started.pop(address, None) or deque()
            while times and times[0] <= now - self.window_s:
                times.popleft()
            self._started[address] = times  # now the most recently used address
            if len(times) >= self.per_window:
                retry = max(1, math.ceil(times[0] + self.window_s - now))
                raise TooManyIdentities(
                    f"This address has started {len(times)} new learners saving work in the last "
                    f"{self.window_s:g} s, the most allowed, so your work could not be saved; the lessons "
                    f"still open, and saving works again in {retry} s.",
                    retry,
                )
            times.append(now)
            self._note(identity)
            while len(self._started) > self.max_addresses:
                self._started.popitem(last=False)

    def _note(self, identity: str) -> None:
        self._counted[identity] = None
        self._counted.move_to_end(identity)
        while len(self._counted) > self.max_identities:
            self._counted.popitem(last=False)
