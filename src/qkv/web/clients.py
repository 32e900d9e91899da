"""The key a client's storage is counted under: its address, or an IPv6 address's /64."""

from __future__ import annotations

import ipaddress
import math
from datetime import UTC, datetime, time, timedelta

from starlette.requests import Request


def storage_key(host: str) -> str:
    """The key of ``host`` for the per-client storage budget.

    An IPv4 address (or a name) is its own key. An IPv6 address counts by its /64, since one subscriber
    is usually given a whole /64 and could otherwise spend a budget per address.

    Examples
    --------
    >>> storage_key("203.0.113.7")
    '203.0.113.7'
    >>> storage_key("2001:db8:1:2:aaaa::1"), storage_key("::ffff:192.0.2.1")
    ('2001:db8:1:2::/64', '192.0.2.1')
    """
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host[:64] or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def request_storage_key(request: Request) -> str:
    """The storage key of the request's client (the forwarded address behind a trusted proxy)."""
    return storage_key(request.client.host if request.client else "")


def seconds_to_next_day(now: datetime | None = None) -> int:
    """Whole seconds until the next UTC midnight, when every client's storage budget starts afresh.

    >>> seconds_to_next_day(datetime(2026, 3, 1, 23, 59, 30, tzinfo=UTC))
    30
    """
    now = now or datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), time(), tzinfo=UTC)
    return max(1, math.ceil((midnight - now).total_seconds()))
