"""The client's address, the key of every per-address limit.

A request's peer is the client, unless the peer is a proxy listed in TRUSTED_PROXIES: then
the client is the rightmost address of X-Forwarded-For that is not a trusted proxy. Each
proxy appends the address it received the request from, so everything right of that entry was
written by proxies we trust, and everything left of it by the client, who may write anything:
a client that sends the header itself changes nothing but the entries we never read.

An IPv6 client is keyed by its /64, the block one subscriber is usually given, so that walking
through the addresses of one's own block does not reset the limits. A /64 is cheap to come by
in bulk (a tunnel broker gives a /48, 65,536 of them, for free), so each per-address limit also
spends from the client's /48, its site, which gets a larger budget of its own
(ratelimit.SharedLimits).
"""

import ipaddress
from collections.abc import Iterable, Sequence

from aiohttp import web

from service.api.keys import SETTINGS
from service.config import IPNetwork

FORWARDED_FOR = "X-Forwarded-For"
IPV6_BLOCK = 64
IPV6_SITE = 48
# An entry that is no address (a proxy's "unknown") is kept as it is, this long at most.
MAX_ENTRY = 64

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse(text: str) -> _Address | None:
    """An address, also as proxies write it with a port ("1.2.3.4:80", "[2001:db8::1]:80")."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _key(address: _Address) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_BLOCK), strict=False))
    return str(address)


def site_of(key: str) -> str | None:
    """The /48 that an IPv6 client's key (its /64) lies in; None for any other key."""
    if "/" not in key:
        return None
    try:
        block = ipaddress.IPv6Network(key)
    except ValueError:
        return None
    if block.prefixlen != IPV6_BLOCK:
        return None
    return str(block.supernet(new_prefix=IPV6_SITE))


def _trusted(address: _Address, proxies: Sequence[IPNetwork]) -> bool:
    return any(address in network for network in proxies)


def address_of(peer: str | None, forwarded: Iterable[str], proxies: Sequence[IPNetwork]) -> str:
    """The client's address key, from the peer and the X-Forwarded-For headers, in order."""
    current = _parse(peer or "")
    if current is None:
        return (peer or "unknown")[:MAX_ENTRY]
    if not _trusted(current, proxies):
        return _key(current)
    entries = [entry for header in forwarded for entry in header.split(",") if entry.strip()]
    for entry in reversed(entries):
        hop = _parse(entry)
        if hop is None:
            # Written by a trusted proxy, since everything right of it was: its word for the
            # client, whatever it is.
            return entry.strip()[:MAX_ENTRY]
        current = hop
        if not _trusted(current, proxies):
            break
    return _key(current)


def client_address(request: web.Request) -> str:
    """The address key of the client that sent `request`."""
    proxies = request.app[SETTINGS].trusted_proxies
    if not proxies:
        return address_of(request.remote, (), proxies)
    return address_of(request.remote, request.headers.getall(FORWARDED_FOR, ()), proxies)
