"""How many LTI logins one client may begin: a rate per address, and logins pending per address.

``/lti/login`` is open to anyone (the LMS sends the browser there), and each login stores a state row for
ten minutes. So each client address (its bound key: an IPv6 client by its prefix) may begin at most
``per_minute`` logins in any minute and have at most ``pending`` begun in the last ten minutes that have
not come back as a launch yet; the whole server's pending logins are bounded in the store
(``LtiLogins.begin(max_pending=...)``). The defaults let a class of a few hundred behind one NAT launch at
once. The counts live in each server's memory, as the new-learner bound's do.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from qkv.web.lti.refusal import LaunchRefused

PER_MINUTE = 120
PENDING_PER_ADDRESS = 300
LIFETIME_S = 600.0  # a login's state lives as long (qkv.store.lti.logins.LOGIN_LIFETIME)


class TooManyLogins(LaunchRefused):
    """A login refused for its address's rate or pending logins; ``retry_after_s`` until one frees up."""

    def __init__(self, sentence: str, retry_after_s: int) -> None:
        super().__init__(429, sentence)
        self.retry_after_s = retry_after_s


class LoginLimits:
    """Per address, at most ``per_minute`` logins in any 60 s and ``pending`` not yet launched.

    Parameters
    ----------
    per_minute, pending : int
        The rate and the pending logins one address may have.
    lifetime_s : float
        How long a login stays pending when no launch ends it.
    max_tracked : int
        Logins remembered as pending at once (the oldest forgotten first), so memory stays bounded.
    max_addresses : int
        Addresses whose rate is remembered at once (the least recently seen forgotten first).
    clock : callable
        ``time.monotonic`` unless a test gives another.

    Examples
    --------
    >>> now = [0.0]
    >>> limits = LoginLimits(per_minute=2, pending=3, clock=lambda: now[0])
    >>> limits.begun("192.0.2.1", "s1"); limits.begun("192.0.2.1", "s2")
    >>> try:
    ...     limits.admit("192.0.2.1")
    ... except TooManyLogins as refused:
    ...     print(refused.status, refused.retry_after_s, str(refused)[:54])
    429 60 This address has begun 2 LTI logins in the last minute
    >>> limits.admit("198.51.100.7")  # another address
    >>> now[0] = 61.0; limits.ended("s1"); limits.admit("192.0.2.1")
    """

    def __init__(
        self,
        per_minute: int = PER_MINUTE,
        pending: int = PENDING_PER_ADDRESS,
        *,
        lifetime_s: float = LIFETIME_S,
        max_tracked: int = 100_000,
        max_addresses: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_minute = per_minute
        self.pending = pending
        self.lifetime_s = lifetime_s
        self.max_tracked = max_tracked
        self.max_addresses = max_addresses
        self._clock = clock
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, deque[float]] = OrderedDict()  # address -> begun in the last 60 s
        self._open: OrderedDict[str, tuple[str, float]] = OrderedDict()  # state -> (address, begun at)
        self._open_by_address: dict[str, int] = {}

    def admit(self, address: str) -> None:
        """Raise ``TooManyLogins`` if ``address`` may not begin a login now."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            recent = self._recent.get(address, deque())
            while recent and recent[0] <= now - 60.0:
                recent.popleft()
            if len(recent) >= self.per_minute:
                retry = max(1, math.ceil(recent[0] + 60.0 - now))
                raise TooManyLogins(
                    f"This address has begun {len(recent)} LTI logins in the last minute, the most one "
                    f"address may; launch again from the LMS in {retry} s.",
                    retry,
                )
            pending = self._open_by_address.get(address, 0)
            if pending >= self.pending:
                oldest = next(begun for owner, begun in self._open.values() if owner == address)
                retry = max(1, math.ceil(oldest + self.lifetime_s - now))
                raise TooManyLogins(
                    f"This address has {pending} LTI logins begun and not yet completed, the most one "
                    f"address may have; launch again from the LMS in {retry} s.",
                    retry,
                )

    def begun(self, address: str, state: str) -> None:
        """Count a login ``address`` began (its ``state``, or any key naming it)."""
        now = self._clock()
        with self._lock:
            recent = self._recent.pop(address, None) or deque()
            recent.append(now)
            self._recent[address] = recent  # now the most recently used
            while len(self._recent) > self.max_addresses:
                self._recent.popitem(last=False)
            self._open[state] = (address, now)
            self._open_by_address[address] = self._open_by_address.get(address, 0) + 1
            while len(self._open) > self.max_tracked:
                self._close(next(iter(self._open)))

    def ended(self, state: str) -> None:
        """The login of ``state`` came back as a launch (used or refused): it is pending no more."""
        with self._lock:
            if state in self._open:
                self._close(state)

    def _expire(self, now: float) -> None:
        while self._open:
            state, (_, begun) = next(iter(self._open.items()))
            if begun > now - self.lifetime_s:
                return
            self._close(state)

    def _close(self, state: str) -> None:
        address, _ = self._open.pop(state)
        left = self._open_by_address[address] - 1
        if left:
            self._open_by_address[address] = left
        else:
            del self._open_by_address[address]
