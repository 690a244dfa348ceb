"""The client address that per-address limits key on (service/api/address.py)."""

import ipaddress

import pytest

from service.api.address import address_of

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
