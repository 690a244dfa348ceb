"""The client address that per-address limits key on (service/api/address.py)."""

import ipaddress
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest

from service.api.address import address_of, site_of
from service.config import load_settings
from tests.conftest import running_service

PROXIES = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("127.0.0.1"))


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # An untrusted peer is the client, whatever it writes in the header.
        ("203.0.113.9", ["198.51.100.1"], "203.0.113.9"),
        # A trusted peer: the rightmost entry that is not a trusted proxy.
        ("127.0.0.1", ["203.0.113.7"], "203.0.113.7"),
        ("127.0.0.1", ["198.51.100.1, 203.0.113.7, 10.1.2.3"], "203.0.113.7"),
        # The client wrote the left entries itself: they are never read.
        ("127.0.0.1", ["1.1.1.1, 203.0.113.7"], "203.0.113.7"),
        # Two headers read as one list, in order.
        ("127.0.0.1", ["198.51.100.1", "203.0.113.7"], "203.0.113.7"),
        # No header, or only proxies in it: the leftmost address reached.
        ("127.0.0.1", [], "127.0.0.1"),
        ("127.0.0.1", ["10.9.9.9, 10.1.1.1"], "10.9.9.9"),
        # Ports and brackets as some proxies write them; IPv4 mapped into IPv6.
        ("127.0.0.1", ["203.0.113.7:51234"], "203.0.113.7"),
        ("127.0.0.1", ["[2001:db8::1]:443"], "2001:db8::/64"),
        ("::ffff:203.0.113.7", [], "203.0.113.7"),
        # An IPv6 client is its /64.
        ("2001:db8:0:1:aaaa::1", [], "2001:db8:0:1::/64"),
        ("2001:db8:0:1:bbbb::2", [], "2001:db8:0:1::/64"),
        # A trusted proxy's word for a client it could not name.
        ("127.0.0.1", ["unknown"], "unknown"),
    ],
)
def test_the_client_is_the_rightmost_address_no_trusted_proxy_wrote(
    peer: str, forwarded: list[str], client: str
) -> None:
    assert address_of(peer, forwarded, PROXIES) == client


def test_with_no_trusted_proxy_the_header_is_ignored() -> None:
    assert address_of("127.0.0.1", ["203.0.113.7"], ()) == "127.0.0.1"


@pytest.mark.parametrize(
    ("key", "site"),
    [
        ("2001:db8:0:1::/64", "2001:db8::/48"),
        ("2001:db8:7:ffff::/64", "2001:db8:7::/48"),
        ("203.0.113.7", None),
        ("unknown", None),
        ("7a9c1f7e-4f3b-4d1e-9a53-3c1f2e8b6d10", None),
    ],
)
def test_an_ipv6_clients_site_is_the_48_its_64_lies_in(key: str, site: str | None) -> None:
    assert site_of(key) == site


FAILURES = 2
SITE_BUDGETS = 3


@asynccontextmanager
async def _behind(
    make_settings: Any, database_url: str, proxies: str, **changes: Any
) -> AsyncIterator[str]:
    """A service trusting `proxies`, on a database of its own (the failures are counted
    there), whose every address may fail FAILURES times."""
    settings = make_settings(
        database_url=database_url,
        trusted_proxies=load_settings({"TRUSTED_PROXIES": proxies}).trusted_proxies,
        auth_failures_per_address_per_minute=FAILURES,
        **changes,
    )
    async with running_service(settings) as api:
        yield api.base_url


async def _forged(base_url: str, peer: str, headers: Mapping[str, str] = {}) -> int:
    """The status of a forged token's request, sent from the loopback address `peer`."""
    connector = aiohttp.TCPConnector(local_addr=(peer, 0), force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(
            base_url + "/v1/players/me",
            headers={"Authorization": "Bearer forged.token.here", **headers},
        ) as answer,
    ):
        return answer.status


async def test_walking_the_64s_of_one_48_gains_only_the_sites_budgets(
    make_settings: Any, fresh_database_url: str
) -> None:
    async with _behind(
        make_settings, fresh_database_url, "127.0.0.1", ipv6_site_budgets=SITE_BUDGETS
    ) as url:
        walked = [
            await _forged(url, "127.0.0.1", {"X-Forwarded-For": f"2001:db8:0:{block:x}::1"})
            for block in range(1, 11)
        ]
        # Another site is another client.
        elsewhere = await _forged(url, "127.0.0.1", {"X-Forwarded-For": "2001:db8:1:1::1"})
    budget = FAILURES * SITE_BUDGETS
    assert walked == [401] * budget + [429] * (10 - budget)
    assert elsewhere == 401


async def test_a_client_inside_the_proxys_range_but_not_the_proxy_cannot_choose_its_key(
    make_settings: Any, fresh_database_url: str
) -> None:
    """127.0.0.2 is the proxy and 127.0.0.3 a client beside it: trusting the proxy's address
    alone, the client's X-Forwarded-For is never read; trusting the range both are in, each
    request names a new client and the client's failures are never refused."""
    claims = [{"X-Forwarded-For": f"198.51.100.{n}"} for n in range(1, 7)]
    async with _behind(make_settings, fresh_database_url, "127.0.0.2") as url:
        narrow = [await _forged(url, "127.0.0.3", claim) for claim in claims]
        # The proxy itself still names its clients.
        proxied = await _forged(url, "127.0.0.2", {"X-Forwarded-For": "198.51.100.99"})
    assert narrow == [401] * FAILURES + [429] * (len(claims) - FAILURES)
    assert proxied == 401
    async with _behind(make_settings, fresh_database_url, "127.0.0.0/8") as url:
        wide = [await _forged(url, "127.0.0.3", claim) for claim in claims]
    assert wide == [401] * len(claims)
