"""Which hosts an http(s) reference may reach (OWASP SSRF prevention, "network layer").

A host name is resolved and refused when *any* of its addresses is loopback, private,
link-local (where cloud metadata services such as 169.254.169.254 answer), multicast or
otherwise not globally routable, unless ``host[:port]`` is on the allow list. IPv6 addresses
that embed an IPv4 address (mapped, 6to4, Teredo, NAT64) are judged by that address.

The same rule runs twice: :func:`check_url` before a request and for every redirect target
(clear errors, and the only check for IP literals, which aiohttp does not resolve), and
:class:`CheckingResolver` inside the connector, so the addresses connected to are exactly the
addresses checked: a name that resolves differently the second time is judged again.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from urllib.parse import SplitResult, urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class RefusedAddress(Exception):
    """The policy refuses this URL or host; ``str()`` says why and what to do."""


def check_url(url: str, allow_hosts: Sequence[str]) -> SplitResult:
    """The parts of an http(s) URL whose host the policy allows; else :class:`RefusedAddress`."""
    try:
        parts = urlsplit(url)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError as exc:
        raise RefusedAddress(f"malformed URL: {exc}") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS:
        raise RefusedAddress(f"scheme {parts.scheme or 'none'!r} is not http or https")
    if parts.username is not None or parts.password is not None:
        raise RefusedAddress("credentials in the URL are refused; the server's settings "
                             "decide how to authenticate")
    if not parts.hostname:
        raise RefusedAddress("the URL names no host")
    if not is_allowed(parts.hostname, port, allow_hosts):
        addresses = resolve(parts.hostname, port)
        for address in addresses:
            refuse_if_internal(parts.hostname, port, address)
    return parts


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (an IP literal is its own address)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise RefusedAddress(f"cannot resolve host {host!r}: {exc}") from None
    return [str(info[4][0]) for info in infos]


def is_allowed(host: str, port: int, allow_hosts: Sequence[str]) -> bool:
    """True when ``host`` or ``host:port`` is on the allow list (case-insensitive)."""
    host = host.strip("[]").lower()
    return any(_entry(entry) in ((host, None), (host, port)) for entry in allow_hosts)


def _entry(entry: str) -> tuple[str, int | None]:
    """An allow-list entry ``host``, ``host:port``, ``[v6]:port`` or bare IPv6 as (host, port)."""
    try:
        parts = urlsplit(f"//{entry}")
        return (parts.hostname or "").lower(), parts.port
    except ValueError:  # a bare IPv6 address such as ::1
        return entry.strip("[]").lower(), None


def refuse_if_internal(host: str, port: int, address: str) -> None:
    """Raise :class:`RefusedAddress` when ``address`` is not a public, routable address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    reason = internal_reason(ip)
    if reason is not None:
        shown = host if host == address else f"{host} ({address})"
        entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise RefusedAddress(f"{shown} is a {reason} address, which data URIs may not reach; "
                             f"an operator can allow it by adding {entry} to "
                             f"LIGHTTOUCH_URI_ALLOW_HOSTS")


def internal_reason(ip: IPAddress) -> str | None:
    """Why the address is not public (``loopback``, ``private``, ...), or None when it is."""
    embedded = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    if embedded is not None:
        return internal_reason(embedded)
    checks = (("loopback", ip.is_loopback), ("link-local (cloud metadata)", ip.is_link_local),
              ("private", ip.is_private), ("multicast", ip.is_multicast),
              ("unspecified", ip.is_unspecified), ("reserved", ip.is_reserved),
              ("non-public", not ip.is_global))
    return next((name for name, hit in checks if hit), None)


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo client, NAT64)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


class CheckingResolver(AbstractResolver):
    """An aiohttp resolver that returns a host's addresses only when the policy allows them."""

    def __init__(self, allow_hosts: Sequence[str]):
        self._allow_hosts = list(allow_hosts)
        self._resolver = ThreadedResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        """Resolve ``host`` and refuse it when any address is internal and it is not allowed."""
        results = await self._resolver.resolve(host, port, family)
        if not is_allowed(host, port, self._allow_hosts):
            for result in results:
                refuse_if_internal(host, port, result["host"])
        return results

    async def close(self) -> None:
        """Release the wrapped resolver."""
        await self._resolver.close()
