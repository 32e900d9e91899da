"""Whose share a request spends: a client's *bound key*, the one key every per-address bound counts by.

An IPv4 address is its own key; an IPv6 address counts by its network prefix (a /64 by default), since one
subscriber is usually given a whole /64 and could otherwise take a share per address; an IPv4-mapped IPv6
address (``::ffff:192.0.2.1``) is the IPv4 address it maps. The grading line, the new learners per
address, the storage budget and the request rates all use :func:`client_key`, so no bound counts
addresses another bound counts as one network.
"""

from __future__ import annotations

import ipaddress
import math
from datetime import UTC, datetime, time, timedelta

from starlette.requests import Request

DEFAULT_IPV6_PREFIX = 64
MIN_IPV6_PREFIX, MAX_IPV6_PREFIX = 32, 128


def check_ipv6_prefix(prefix: int) -> int:
    """``prefix`` if it is a prefix length a bound may count IPv6 clients by (32 to 128).

    Raises
    ------
    ValueError
        With a sentence, for anything else.

    Examples
    --------
    >>> check_ipv6_prefix(56)
    56
    >>> check_ipv6_prefix(8)
    Traceback (most recent call last):
    ...
    ValueError: The IPv6 prefix length must be a whole number from 32 to 128, not 8.
    """
    whole = isinstance(prefix, int) and not isinstance(prefix, bool)
    if not whole or not MIN_IPV6_PREFIX <= prefix <= MAX_IPV6_PREFIX:
        raise ValueError(
            f"The IPv6 prefix length must be a whole number from {MIN_IPV6_PREFIX} to {MAX_IPV6_PREFIX}, "
            f"not {prefix!r}."
        )
    return prefix


def client_key(host: str, ipv6_prefix: int = DEFAULT_IPV6_PREFIX) -> str:
    """The bound key of the client at ``host``: what every per-address bound counts it under.

    Parameters
    ----------
    host : str
        The client's address as the server saw it (the forwarded one behind a trusted proxy).
    ipv6_prefix : int
        The prefix length an IPv6 address counts by (``qkv serve --ipv6-prefix``, 64 by default).

    Returns
    -------
    str
        An IPv4 address, an IPv6 network such as ``2001:db8:1:2::/64``, or (for a host that is no
        address, as in tests) the host itself, cut to 64 characters, or ``"unknown"``.

    Examples
    --------
    >>> client_key("203.0.113.7")
    '203.0.113.7'
    >>> client_key("2001:db8:1:2:aaaa::1"), client_key("2001:db8:1:2:bbbb::9")
    ('2001:db8:1:2::/64', '2001:db8:1:2::/64')
    >>> client_key("2001:db8:1:3::1"), client_key("::ffff:192.0.2.1")
    ('2001:db8:1:3::/64', '192.0.2.1')
    >>> client_key("2001:db8:1:2ff::1", ipv6_prefix=56), client_key("fe80::1%eth0", ipv6_prefix=128)
    ('2001:db8:1:200::/56', 'fe80::1/128')
    """
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host[:64] or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, ipv6_prefix), strict=False))
    return str(address)


def storage_key(host: str) -> str:
    """The bound key of ``host`` with the default prefix (kept for callers that have no settings).

    >>> storage_key("2001:db8::1")
    '2001:db8::/64'
    """
    return client_key(host)


def request_client_key(request: Request) -> str:
    """The bound key of the request's client (the forwarded address behind a trusted proxy), with the
    server's ``ipv6_prefix`` setting."""
    host = request.client.host if request.client else ""
    services = getattr(request.app.state, "qkv", None)
    prefix = services.settings.ipv6_prefix if services is not None else DEFAULT_IPV6_PREFIX
    return client_key(host, prefix)


request_storage_key = request_client_key  # the storage budget counts by the same key as every bound


def seconds_to_next_day(now: datetime | None = None) -> int:
    """Whole seconds until the next UTC midnight, when every client's storage budget starts afresh.

    >>> seconds_to_next_day(datetime(2026, 3, 1, 23, 59, 30, tzinfo=UTC))
    30
    """
    now = now or datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), time(), tzinfo=UTC)
    return max(1, math.ceil((midnight - now).total_seconds()))
