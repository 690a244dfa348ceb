"""Limits per client address and per player that hold across processes and instances.

Each test runs one or two real services (two apps on one database are two instances) on a
database of its own, so that its buckets are its own; the suite's other services all come
from 127.0.0.1 with limits set out of the way.
"""

import asyncio
import dataclasses
import ipaddress
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import aiohttp
import asyncpg

from service.config import Settings
from service.store import limits
from tests.api.matches_helpers import new_players, socket_url, start_match
from tests.conftest import TEST_OPS_TOKEN, service_and_app
from tests.faults import FaultProxy
from tests.http import Answer, Api

LOCAL_PROXY = (ipaddress.ip_network("127.0.0.1"),)
SIMULATE = {
    "seed": 42,
    "a": {"cryptids": [{"species": "mothman", "ability": 0, "level": 2}]},
    "b": {"cryptids": [{"species": "nahual", "ability": 0, "level": 1}]},
}


@asynccontextmanager
async def instances(
    settings: Settings, database_url: str, count: int = 1, **changes: Any
) -> AsyncIterator[list[Api]]:
    """`count` services on `database_url`, with `changes` to the suite's settings."""
    changed = dataclasses.replace(settings, database_url=database_url, **changes)
    async with AsyncExitStack() as stack:
        apis = [
            (await stack.enter_async_context(service_and_app(changed)))[0] for _ in range(count)
        ]
        yield apis


async def register(api: Api, forwarded_for: str | None = None) -> Answer:
    headers = {} if forwarded_for is None else {"X-Forwarded-For": forwarded_for}
    return await api.post("/v1/players", {"name": "someone"}, headers=headers)


async def handshake(api: Api, token: str, match_id: str, forwarded_for: str | None = None) -> int:
    """The status of a WebSocket handshake on the match: 101 when it opened."""
    headers = {"Authorization": f"Bearer {token}"}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    try:
        async with api.session.ws_connect(socket_url(api, match_id), headers=headers):
            return 101
    except aiohttp.WSServerHandshakeError as refused:
        return refused.status


def assert_refused(answer: Answer, limit: str) -> None:
    assert (answer.status, answer.error_code) == (429, "rate_limited"), answer.body
    assert answer.body["error"]["details"]["limit"] == limit
    assert int(answer.headers["Retry-After"]) == answer.body["error"]["details"]["retry_after"]


async def test_registrations_from_one_address_hit_a_429_by_the_hour(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(settings, fresh_database_url, registrations_per_address_per_hour=3) as (
        api,
    ):
        statuses = [(await register(api)).status for _ in range(3)]
        refused = await register(api)
    assert statuses == [201, 201, 201]
    assert_refused(refused, "registrations_per_address_per_hour")
    # The next registration comes when the bucket has refilled one: an hour over three.
    assert 1100 <= int(refused.headers["Retry-After"]) <= 1200


async def test_registrations_from_one_address_have_a_daily_budget(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings,
        fresh_database_url,
        registrations_per_address_per_hour=100,
        registrations_per_address_per_day=4,
    ) as (api,):
        statuses = [(await register(api)).status for _ in range(4)]
        refused = await register(api)
    assert statuses == [201] * 4
    assert_refused(refused, "registrations_per_address_per_day")
    assert 21000 <= int(refused.headers["Retry-After"]) <= 21600


async def test_the_forwarded_address_counts_only_from_a_trusted_proxy(
    settings: Settings, fresh_database_url: str
) -> None:
    async with (
        instances(
            settings,
            fresh_database_url,
            registrations_per_address_per_hour=2,
            trusted_proxies=LOCAL_PROXY,
        ) as (proxied,),
        instances(
            settings,
            fresh_database_url,
            registrations_per_address_per_hour=2,
            trusted_proxies=(ipaddress.ip_network("10.0.0.0/8"),),
        ) as (direct,),
    ):
        # Behind the trusted proxy each client has its own budget...
        first = [(await register(proxied, "203.0.113.7")).status for _ in range(2)]
        third = await register(proxied, "203.0.113.7")
        other_client = await register(proxied, "203.0.113.8")
        # ...and what a client writes left of the proxy's entry is not read.
        spoofed = await register(proxied, "198.51.100.99, 203.0.113.7")
        # From a peer that is no trusted proxy, the header changes nothing: 127.0.0.1 it is.
        untrusted = [(await register(direct, f"192.0.2.{n}")).status for n in range(3)]
    assert first == [201, 201]
    assert_refused(third, "registrations_per_address_per_hour")
    assert other_client.status == 201
    assert_refused(spoofed, "registrations_per_address_per_hour")
    assert untrusted == [201, 201, 429]


async def test_two_instances_on_one_database_share_the_registration_budget(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(settings, fresh_database_url, 2, registrations_per_address_per_hour=4) as (
        one,
        two,
    ):
        statuses = [(await register(api)).status for api in (one, two, one, two, one, two)]
    assert statuses == [201, 201, 201, 201, 429, 429]


async def test_handshakes_per_player_are_limited_across_instances_and_addresses(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings,
        fresh_database_url,
        2,
        ws_handshakes_per_player_per_minute=3,
        trusted_proxies=LOCAL_PROXY,
    ) as (one, two):
        tokens = await new_players(one, 2)
        match_id = await start_match(one, tokens)
        # Each handshake from an address of its own, on either instance.
        statuses = [
            await handshake(api, tokens[0], match_id, f"203.0.113.{n}")
            for n, api in enumerate((one, two, one, two))
        ]
        # The other player has its own.
        other = await handshake(two, tokens[1], match_id, "203.0.113.200")
        refused = await one.get(
            f"/v1/matches/{match_id}/ws",
            token=tokens[0],
            headers={"X-Forwarded-For": "203.0.113.99"},
        )
    assert statuses == [101, 101, 101, 429]
    assert other == 101
    assert_refused(refused, "ws_handshakes_per_player_per_minute")


async def test_handshakes_per_address_are_limited_across_instances(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings, fresh_database_url, 2, ws_handshakes_per_address_per_minute=3
    ) as (one, two):
        tokens = await new_players(one, 4)
        match_id = await start_match(one, tokens[:2])
        statuses = [
            await handshake(api, token, match_id)
            for api, token in zip((one, two, one, two), tokens, strict=True)
        ]
    assert statuses == [101, 101, 101, 429]


async def test_wrong_ops_tokens_get_a_429_after_a_few_and_then_so_does_the_right_one(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings, fresh_database_url, 2, auth_failures_per_address_per_minute=3
    ) as (one, two):
        guesses = [
            await api.get("/v1/ops/database", headers={"X-Ops-Token": f"guess-{n}" * 8})
            for n, api in enumerate((one, two, one, two, one))
        ]
        # Once the address has no failure left, a token is refused before it is checked: a
        # guess that happened to be right would tell nothing.
        right = await two.get("/v1/ops/database", headers={"X-Ops-Token": TEST_OPS_TOKEN})
    assert [g.status for g in guesses] == [403, 403, 403, 429, 429]
    assert_refused(guesses[3], "auth_failures_per_address_per_minute")
    assert_refused(right, "auth_failures_per_address_per_minute")


async def test_forged_tokens_count_against_the_address_on_every_instance(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings, fresh_database_url, 2, auth_failures_per_address_per_minute=3
    ) as (one, two):
        _, token = await one.new_player()
        assert (await one.get("/v1/players/me", token=token)).status == 200
        forged = [
            (await api.get("/v1/players/me", token=f"forged.{n}.token")).status
            for n, api in enumerate((one, two, one, two))
        ]
        # A token the instance has not checked yet is a sign-in, refused from this address...
        new_to_two = await two.get("/v1/players/me", token=token)
        # ...but one it has checked goes on working.
        known_to_one = await one.get("/v1/players/me", token=token)
    assert forged == [401, 401, 401, 429]
    assert_refused(new_to_two, "auth_failures_per_address_per_minute")
    assert known_to_one.status == 200


async def test_sign_ins_from_one_address_are_limited_across_instances(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(settings, fresh_database_url, 2, sign_ins_per_address_per_minute=3) as (
        one,
        two,
    ):
        tokens = [(await one.new_player())[1] for _ in range(4)]
        # Each token is new to the instance that sees it first.
        statuses = [
            (await api.get("/v1/players/me", token=token)).status
            for api, token in zip((one, two, one, two), tokens, strict=True)
        ]
    assert statuses == [200, 200, 200, 429]


async def test_a_players_request_rate_holds_across_two_instances(
    settings: Settings, fresh_database_url: str
) -> None:
    """4 requests a second after a burst of 2, for 4 seconds of requests spread over two
    instances: 18 answers, and a few more while the instances catch up with each
    other; kept in each process alone, it would be twice as many (36)."""
    async with instances(
        settings,
        fresh_database_url,
        2,
        rate_limit_per_second=4.0,
        rate_limit_burst=2,
        rate_limit_sync_seconds=0.05,
    ) as (one, two):
        async with one.session.post(one.base_url + "/v1/players", json={"name": "busy"}) as created:
            token = (await created.json())["token"]
        served = 0
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            for api in (one, two):
                answer = await api.get("/v1/players/me", token=token)
                assert answer.status in (200, 429), answer.body
                served += answer.status == 200
            await asyncio.sleep(0.01)
    assert 14 <= served <= 24, served


async def test_buckets_full_again_are_swept(settings: Settings, fresh_database_url: str) -> None:
    async with instances(settings, fresh_database_url, registrations_per_address_per_hour=3) as (
        api,
    ):
        _, token = await api.new_player()
        await api.get("/v1/players/me", token=token)
    pool = await asyncpg.create_pool(fresh_database_url, min_size=1, max_size=1)
    try:
        # Two days on, every bucket has refilled to the brim but the hour's, which is told
        # its last take was just now.
        await pool.execute(
            "UPDATE rate_buckets SET updated_at = now() - CASE kind"
            " WHEN 'registrations_per_address_per_hour' THEN interval '0' ELSE interval '2 days'"
            " END"
        )
        before = await pool.fetchval("SELECT count(*) FROM rate_buckets")
        swept = await limits.sweep(pool)
        left = [tuple(row) for row in await pool.fetch("SELECT kind, key FROM rate_buckets")]
    finally:
        await pool.close()
    assert before >= 4  # registrations by the hour and by the day, a sign-in, a failure look
    assert swept == before - 1
    assert left == [("registrations_per_address_per_hour", "127.0.0.1")]


async def test_a_new_token_simulates_a_battle_while_the_database_is_down(
    settings: Settings, fresh_database_url: str
) -> None:
    """A sign-in the database cannot count lets through what needs no database."""
    proxy = FaultProxy(fresh_database_url)
    await proxy.start()
    try:
        async with instances(settings, proxy.url, db_timeout_seconds=1.0) as (api,):
            _, token = await api.new_player()
            proxy.refusing = True
            proxy.cut()
            answer = await api.post("/v1/battles/simulate", SIMULATE, token=token)
            ops = await api.get("/v1/ops/database", headers={"X-Ops-Token": TEST_OPS_TOKEN})
    finally:
        await proxy.close()
    assert answer.status == 200, answer.body
    # The ops door is not held open by an outage.
    assert (ops.status, ops.error_code) == (503, "unavailable")


async def test_refused_refreshes_count_against_the_address_and_device_sign_ins_as_registrations(
    settings: Settings, fresh_database_url: str
) -> None:
    async with instances(
        settings,
        fresh_database_url,
        2,
        auth_failures_per_address_per_minute=3,
        registrations_per_address_per_hour=2,
    ) as (one, two):
        made = [
            await api.post("/v1/auth/device", {"device_id": f"new-device-number-{n:04d}"})
            for n, api in enumerate((one, two, one))
        ]
        known = await two.post("/v1/auth/device", {"device_id": "new-device-number-0000"})
        guesses = [
            await api.post("/v1/auth/refresh", {"refresh_token": f"guess-{n}"})
            for n, api in enumerate((one, two, one, two))
        ]
        # Once the address has no failure left, a sign-in is refused before it is checked.
        after = await one.post("/v1/auth/device", {"device_id": "new-device-number-0000"})
    assert [g.status for g in guesses[:3]] == [401, 401, 401]
    assert_refused(guesses[3], "auth_failures_per_address_per_minute")
    # A new device makes a player: the third from one address this hour is refused; a device
    # that signs in its player already is no registration.
    assert [m.status for m in made[:2]] == [201, 201]
    assert_refused(made[2], "registrations_per_address_per_hour")
    assert known.status == 200
    assert_refused(after, "auth_failures_per_address_per_minute")
