"""Fetching an LMS's registration documents so that no LMS can hold the server or reach its network.

Dynamic Registration is where the server fetches a URL that whoever holds a registration link chooses (the
``openid_configuration`` of the request, and the ``registration_endpoint`` that configuration names).
So every such fetch

- goes to a public address only, unless ``qkv serve --allow-private-lms``: the host is resolved here, every
  address it resolves to must be public (no loopback, private, shared, link-local, unique-local, multicast,
  reserved or unspecified address, nor one that embeds such an IPv4 address), and the connection is made
  to a vetted address with the URL's own ``Host`` header and TLS server name, so that no second
  resolution can point it elsewhere; redirects are not followed, proxies from the environment not used;
- reads at most ``max_bytes`` of an answer, as it streams (uncompressed: ``Accept-Encoding: identity``);
- runs on the event loop, holding none of the threads that serve pages; and a whole attempt (every fetch
  of it) has one deadline (``LmsFetcher.run``): what is still being read then is dropped.

Whatever goes wrong is a ``FetchFailed``, whose text is for the server's log only (the LMS's URL without
its query, and the cause); the learner-facing answer is one sentence whatever the cause.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx

T = TypeVar("T")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_MAX_ADDRESSES = 4  # vetted addresses of one host tried in turn when a connection is refused


class FetchFailed(Exception):
    """A registration fetch that failed; its text (for the log) says where and why."""


@dataclass(frozen=True)
class FetchPolicy:
    """How registration fetches are bounded.

    Parameters
    ----------
    allow_private : bool
        Fetch from any address (``qkv serve --allow-private-lms``: an LMS on the school's network, tests).
    deadline_s : float
        Seconds a whole registration attempt may take, every fetch of it together.
    max_bytes : int
        Bytes an answer may have.
    """

    allow_private: bool = False
    deadline_s: float = 10.0
    max_bytes: int = 256 * 1024


def is_public(address: IPv4Address | IPv6Address) -> bool:
    """Whether a registration fetch may go to ``address`` without ``--allow-private-lms``.

    Examples
    --------
    >>> from ipaddress import ip_address
    >>> [is_public(ip_address(a)) for a in ("93.184.215.14", "2606:4700:4700::1111")]
    [True, True]
    >>> refused = ["127.0.0.1", "10.0.0.8", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    ...            "0.0.0.0", "224.0.0.251", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "ff02::1",
    ...            "::ffff:127.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1"]
    >>> [a for a in refused if is_public(ip_address(a))]
    []
    """
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return is_public(embedded)
    excluded = (
        address.is_private,
        address.is_loopback,
        address.is_link_local,
        address.is_multicast,
        address.is_reserved,
        address.is_unspecified,
    )
    return address.is_global and not any(excluded)


def _embedded_ipv4(address: IPv4Address | IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64), which is what it reaches."""
    if not isinstance(address, IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def where(url: str) -> str:
    """A URL as the log may show it: without its query or fragment (which may hold a token).

    Examples
    --------
    >>> where("https://lms.example/openid?registration_token=secret#x")
    'https://lms.example/openid'
    """
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"[:300]


class LmsClient:
    """The fetches of one registration attempt (see ``LmsFetcher.run``)."""

    def __init__(self, client: httpx.AsyncClient, policy: FetchPolicy) -> None:
        self._client, self._policy = client, policy

    async def get_json(self, url: str, headers: dict[str, str]) -> dict[str, Any]:
        """The JSON object at ``url``; ``FetchFailed`` for anything else."""
        return await self._fetch("GET", url, headers, None)

    async def post_json(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        """Post ``body`` as JSON to ``url``; the JSON object answered, or ``FetchFailed``."""
        return await self._fetch("POST", url, headers, body)

    async def _fetch(
        self, method: str, url: str, headers: dict[str, str], body: dict[str, Any] | None
    ) -> dict[str, Any]:
        try:
            target = httpx.URL(url)
        except httpx.InvalidURL as error:
            raise FetchFailed(f"{where(url)} is not a URL qkv can fetch ({error})") from None
        if target.scheme not in {"http", "https"} or not target.host:
            raise FetchFailed(f"{where(url)} is not an absolute http(s) URL")
        headers = {**headers, "Accept-Encoding": "identity"}
        if self._policy.allow_private:
            return await self._send(method, target, headers, body, {})
        addresses = await self._vetted(target.host, target.port or (443 if target.scheme == "https" else 80))
        pinned = {**headers, "Host": target.netloc.decode("ascii")}
        server_name = {"sni_hostname": target.host} if target.scheme == "https" else {}
        for address in addresses[:-1]:
            try:
                return await self._send(method, target.copy_with(host=address), pinned, body, server_name)
            except httpx.ConnectError:
                continue  # the next vetted address of this host
        return await self._send(method, target.copy_with(host=addresses[-1]), pinned, body, server_name)

    async def _vetted(self, host: str, port: int) -> list[str]:
        """The host's addresses, each public (unless private ones are allowed), or ``FetchFailed``."""
        try:
            found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as error:
            raise FetchFailed(f"the host {host!r} could not be resolved ({error})") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        refused = [a for a in addresses if not is_public(ipaddress.ip_address(a.split("%", 1)[0]))]
        if refused or not addresses:
            raise FetchFailed(
                f"the host {host!r} resolves to {', '.join(refused) or 'no address'}, not a public address "
                "(qkv serve --allow-private-lms allows an LMS on a private network)"
            )
        return addresses[:_MAX_ADDRESSES]

    async def _send(
        self,
        method: str,
        target: httpx.URL,
        headers: dict[str, str],
        body: dict[str, Any] | None,
        extensions: dict[str, Any],
    ) -> dict[str, Any]:
        request = self._client.build_request(
            method, target, headers=headers, json=body, extensions=extensions
        )
        shown = where(str(target))
        try:
            response = await self._client.send(request, stream=True)
        except httpx.ConnectError:
            raise  # the caller may try the host's next address
        except httpx.HTTPError as error:
            raise FetchFailed(f"{method} {shown} failed ({type(error).__name__}: {error})") from None
        try:
            if not 200 <= response.status_code < 300:
                raise FetchFailed(f"{method} {shown} answered {response.status_code}, not 2xx")
            content = await self._read_body(response, shown)
        finally:
            await response.aclose()
        return _json_object(content, shown)

    async def _read_body(self, response: httpx.Response, shown: str) -> bytes:
        limit = self._policy.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchFailed(f"{shown} announced {declared} bytes, over {limit}")
        content = bytearray()
        try:
            async for chunk in response.aiter_raw():
                content += chunk
                if len(content) > limit:
                    raise FetchFailed(f"{shown} sent over {limit} bytes")
        except httpx.HTTPError as error:
            raise FetchFailed(f"reading {shown} failed ({type(error).__name__}: {error})") from None
        return bytes(content)


def _json_object(content: bytes, shown: str) -> dict[str, Any]:
    try:
        body = json.loads(content)
    except ValueError:
        raise FetchFailed(f"{shown} answered {len(content)} bytes that are not JSON") from None
    if not isinstance(body, dict):
        raise FetchFailed(f"{shown} answered JSON that is not an object")
    return body


class LmsFetcher:
    """Runs registration attempts under ``policy``: each with its own client, all of it by one deadline.

    Parameters
    ----------
    policy : FetchPolicy
        Which addresses, how long, how much.
    """

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy

    async def run(self, attempt: Callable[[LmsClient], Awaitable[T]]) -> T:
        """``attempt``'s result; ``FetchFailed`` when a fetch failed or the deadline passed first."""
        deadline = self.policy.deadline_s
        client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(deadline),
            headers={"User-Agent": "qkv-lti"},
        )
        # The client closes outside the deadline's scope, so that its connections are closed, not
        # abandoned, when the deadline cuts a fetch short.
        async with client:
            try:
                with anyio.fail_after(deadline):
                    return await attempt(LmsClient(client, self.policy))
            except TimeoutError:
                raise FetchFailed(
                    f"the LMS took longer than the {deadline:g} s an attempt may take"
                ) from None
            except httpx.ConnectError as error:
                raise FetchFailed(f"no connection could be made ({type(error).__name__}: {error})") from None


__all__ = ["FetchFailed", "FetchPolicy", "LmsClient", "LmsFetcher", "is_public", "where"]
