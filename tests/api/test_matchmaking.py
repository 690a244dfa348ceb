"""Play now: matchmaking tickets over HTTP, on one instance and on two sharing a database."""

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from service.config import Settings
from service.store.matchmaking import Bucket, bucket_key
from tests.api.matches_helpers import create, new_players, read, receive, socket_url, start_match
from tests.conftest import running_service
from tests.http import Answer, Api

TICKETS = "/v1/matchmaking/tickets"
NECROMANCERS = {"game": "necromancers", "seats": 2}


@pytest.fixture
async def queue_service(make_settings: Any, fresh_database_url: str) -> AsyncIterator[Api]:
    """A service on a database of its own, so that no other test's tickets match these."""
    async with running_service(make_settings(database_url=fresh_database_url)) as api:
        yield api


async def post_ticket(api: Api, token: str, **fields: Any) -> Answer:
    return await api.post(TICKETS, {**NECROMANCERS, **fields}, token=token)


async def wait_matched(api: Api, token: str, ticket_id: str, wait: float = 10.0) -> dict[str, Any]:
    answer = await api.get(f"{TICKETS}/{ticket_id}?wait={wait}", token=token)
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def test_two_players_pressing_play_now_share_one_match(queue_service: Api) -> None:
    api = queue_service
    a, b = await new_players(api, 2)
    started = time.monotonic()
    first = await post_ticket(api, a)
    assert first.status == 201, first.body
    assert first.body["status"] == "searching"
    second = await post_ticket(api, b)
    assert second.status == 201, second.body
    mine = await wait_matched(api, a, first.body["ticket_id"])
    theirs = await wait_matched(api, b, second.body["ticket_id"])
    assert time.monotonic() - started < 2.0
    assert mine["status"] == theirs["status"] == "matched"
    assert mine["match_id"] == theirs["match_id"]
    assert {mine["seat"], theirs["seat"]} == {0, 1}
    match = await read(api, a, mine["match_id"])
    assert match["status"] == "active"
    assert [s["bot"] for s in match["seats"]] == [False, False]
    assert (await read(api, b, mine["match_id"]))["seat"] == theirs["seat"]


async def test_the_long_poll_returns_as_soon_as_the_ticket_is_matched(queue_service: Api) -> None:
    api = queue_service
    a, b = await new_players(api, 2)
    first = await post_ticket(api, a)
    ticket = first.body["ticket_id"]
    still = await api.get(f"{TICKETS}/{ticket}?wait=0.3", token=a)
    assert still.body["status"] == "searching" and still.body["match_id"] is None
    poll = asyncio.create_task(wait_matched(api, a, ticket, wait=20.0))
    await asyncio.sleep(0.2)
    assert not poll.done()
    started = time.monotonic()
    await post_ticket(api, b)
    matched = await poll
    assert matched["status"] == "matched"
    assert time.monotonic() - started < 1.5


async def test_a_lone_player_gets_a_bot_after_the_delay(
    make_settings: Any, fresh_database_url: str
) -> None:
    settings = make_settings(database_url=fresh_database_url, matchmaking_bot_after_seconds=1)
    async with running_service(settings) as api:
        (token,) = await new_players(api, 1)
        posted = await post_ticket(api, token)
        ticket = await wait_matched(api, token, posted.body["ticket_id"])
        assert ticket["status"] == "matched"
        match = await read(api, token, ticket["match_id"])
        bots = [s["bot"] for s in match["seats"]]
        assert sorted(bots) == [False, True]
        assert match["seats"][ticket["seat"]]["bot"] is False


async def test_a_match_made_by_the_queue_has_the_queues_turn_timer(
    make_settings: Any, fresh_database_url: str
) -> None:
    """Strangers matched together: one who walks away does not hold the other's game."""
    settings = make_settings(database_url=fresh_database_url, matchmaking_turn_seconds=1)
    async with running_service(settings) as api:
        a, b = await new_players(api, 2)
        first = await post_ticket(api, a)
        await post_ticket(api, b)
        ticket = await wait_matched(api, a, first.body["ticket_id"])
        match = await read(api, a, ticket["match_id"])
        assert match["turn_seconds"] == 1 and match["turn_deadline"] is not None
        # Nobody acts: the timer runs out and the game's timeout action moves the match on.
        deadline = time.monotonic() + 10
        while (await read(api, a, ticket["match_id"]))["version"] == match["version"]:
            assert time.monotonic() < deadline, "the turn timer never ran out"
            await asyncio.sleep(0.2)


async def test_a_searching_ticket_counts_as_a_seat_in_a_waiting_match(
    make_settings: Any, fresh_database_url: str
) -> None:
    settings = make_settings(database_url=fresh_database_url, max_waiting_matches=1)
    async with running_service(settings) as api:
        (a,) = await new_players(api, 1)
        queued = await post_ticket(api, a)
        created = await create(api, a)
        assert (created.status, created.error_code) == (409, "too_many_waiting_matches")
        details = created.body["error"]["details"]
        assert details == {"limit": 1, "matches": [], "tickets": [queued.body["ticket_id"]]}
        another = await post_ticket(api, a, seats=3)
        assert (another.status, another.error_code) == (409, "too_many_waiting_matches")
        # Leaving the queue makes room.
        await api.call("DELETE", f"{TICKETS}/{queued.body['ticket_id']}", token=a)
        assert (await create(api, a)).status == 201


async def test_a_socket_the_player_follows_announces_the_match_the_queue_made(
    make_settings: Any, fresh_database_url: str
) -> None:
    """The socket is on one instance, the tickets are matched on the other: the push crosses
    instances through the database, and reaches the matched player's socket only."""
    settings = make_settings(database_url=fresh_database_url)
    async with running_service(settings) as one, running_service(settings) as two:
        a, b, c = await new_players(one, 3)
        followed = await start_match(one, [a, c])
        sockets = [
            await two.session.ws_connect(
                socket_url(two, followed), headers={"Authorization": f"Bearer {token}"}
            )
            for token in (a, c)
        ]
        try:
            for ws in sockets:
                assert (await receive(ws))["events"]
            first = await post_ticket(one, a)
            await post_ticket(one, b)
            ticket = await wait_matched(one, a, first.body["ticket_id"])
            announced = await receive(sockets[0])
            assert announced == {"matched": ticket}
            with pytest.raises(TimeoutError):
                await sockets[1].receive(timeout=0.5)
        finally:
            for ws in sockets:
                await ws.close()


async def test_a_ticket_is_cancelled_once(queue_service: Api) -> None:
    api = queue_service
    a, other = await new_players(api, 2)
    ticket = (await post_ticket(api, a)).body["ticket_id"]
    assert (await api.call("DELETE", f"{TICKETS}/{ticket}", token=other)).status == 404
    assert (await api.get(f"{TICKETS}/{ticket}", token=other)).status == 404
    cancelled = await api.call("DELETE", f"{TICKETS}/{ticket}", token=a)
    assert cancelled.status == 200, cancelled.body
    assert cancelled.body["status"] == "cancelled"
    again = await api.call("DELETE", f"{TICKETS}/{ticket}", token=a)
    assert again.status == 409 and again.error_code == "ticket_not_searching"
    assert (await api.get(f"{TICKETS}/{ticket}", token=a)).body["status"] == "cancelled"
    # A cancelled ticket matches nothing: the next player queues alone.
    (b,) = await new_players(api, 1)
    alone = (await post_ticket(api, b)).body["ticket_id"]
    assert (await wait_matched(api, b, alone, wait=0.5))["status"] == "searching"


async def test_a_matched_ticket_cannot_be_cancelled(queue_service: Api) -> None:
    api = queue_service
    a, b = await new_players(api, 2)
    ticket = (await post_ticket(api, a)).body["ticket_id"]
    await post_ticket(api, b)
    assert (await wait_matched(api, a, ticket))["status"] == "matched"
    refused = await api.call("DELETE", f"{TICKETS}/{ticket}", token=a)
    assert refused.status == 409 and refused.error_code == "ticket_not_searching"


async def test_a_second_ticket_for_the_same_game_is_409_naming_the_first(
    queue_service: Api,
) -> None:
    api = queue_service
    (a,) = await new_players(api, 1)
    first = await post_ticket(api, a)
    second = await post_ticket(api, a, seats=3)
    assert second.status == 409 and second.error_code == "ticket_exists"
    assert second.body["error"]["details"]["ticket_id"] == first.body["ticket_id"]


async def test_a_retried_ticket_with_its_idempotency_key_queues_once(queue_service: Api) -> None:
    api = queue_service
    (a,) = await new_players(api, 1)
    key = {"Idempotency-Key": "play-now-1"}
    first = await api.post(TICKETS, NECROMANCERS, token=a, headers=key)
    again = await api.post(TICKETS, NECROMANCERS, token=a, headers=key)
    assert first.status == again.status == 201
    assert again.body["ticket_id"] == first.body["ticket_id"]


@pytest.mark.parametrize(
    ("fields", "status", "code", "mentions"),
    [
        ({"game": "chess"}, 422, "unknown_game", "chess"),
        ({"seats": 1}, 422, "invalid_match", "2 to 4"),
        ({"seats": 65}, 422, "invalid_field", "seats"),
        ({"seats": "2"}, 422, "invalid_field", "seats"),
        ({"options": {"lives": 3}}, 422, "invalid_match", "lives"),
        ({"options": []}, 422, "invalid_field", "options"),
        ({"ruleset": "necromancers-1999"}, 422, "unknown_game", "necromancers-1999"),
        ({"bots": [1]}, 422, "invalid_field", "bots"),
        ({"game": "fate-duel"}, 422, "missing_loadout", "loadout"),
        ({"game": "fate-duel", "options": {"deal": 7}, "loadout": {}}, 422, "public_deal", "deal"),
        ({"game": "medianokte", "loadout": {"nonsense": True}}, 422, None, ""),
    ],
)
async def test_malformed_tickets_are_4xx_and_queue_nothing(
    queue_service: Api, fields: dict[str, Any], status: int, code: str | None, mentions: str
) -> None:
    api = queue_service
    (a,) = await new_players(api, 1)
    answer = await post_ticket(api, a, **fields)
    assert answer.status == status, answer.body
    if code is not None:
        assert answer.error_code == code
    assert mentions in answer.body["error"]["message"]
    # Nothing was queued: a good ticket is the player's first.
    good = await post_ticket(api, a)
    assert good.status == 201, good.body


PLAYERS = 201


async def test_many_tickets_on_two_instances_make_exactly_the_expected_matches(
    make_settings: Any, fresh_database_url: str
) -> None:
    """201 players queue at once, spread over two instances on one database: 100 matches of two
    players and one of a player and a bot; nobody in two matches, nobody left searching."""
    settings: Settings = make_settings(
        database_url=fresh_database_url, matchmaking_bot_after_seconds=4, db_timeout_seconds=10.0
    )
    async with running_service(settings) as one, running_service(settings) as two:
        tokens = await new_players(one, PLAYERS)
        posted = await asyncio.gather(
            *(post_ticket(one if i % 2 else two, t) for i, t in enumerate(tokens))
        )
        assert all(p.status == 201 for p in posted), [p.body for p in posted if p.status != 201]
        tickets = await asyncio.gather(
            *(
                wait_matched(two if i % 2 else one, t, p.body["ticket_id"], wait=20.0)
                for i, (t, p) in enumerate(zip(tokens, posted, strict=True))
            )
        )
    assert all(t["status"] == "matched" for t in tickets)
    conn = await asyncpg.connect(fresh_database_url)
    try:
        seats = await conn.fetch(
            "SELECT match_id, seat, player_id, bot FROM match_seats ORDER BY match_id, seat"
        )
        statuses = await conn.fetch("SELECT status, count(*) FROM match_tickets GROUP BY 1")
    finally:
        await conn.close()
    assert {r["status"]: r["count"] for r in statuses} == {"matched": PLAYERS}
    players = [r["player_id"] for r in seats if not r["bot"]]
    assert len(players) == len(set(players)) == PLAYERS
    by_match: dict[Any, list[bool]] = {}
    for r in seats:
        by_match.setdefault(r["match_id"], []).append(r["bot"])
    shapes = sorted(tuple(sorted(bots)) for bots in by_match.values())
    assert shapes == [(False, False)] * (PLAYERS // 2) + [(False, True)]
    seat_of = {(str(r["match_id"]), r["seat"]): r for r in seats}
    for ticket in tickets:
        assert not seat_of[(ticket["match_id"], ticket["seat"])]["bot"]


async def test_deleting_an_account_takes_its_ticket_out_of_the_queue(
    make_settings: Any, fresh_database_url: str
) -> None:
    async with running_service(make_settings(database_url=fresh_database_url)) as api:
        (leaving,) = await new_players(api, 1)
        queued = await post_ticket(api, leaving, seats=3)
        assert queued.status == 201, queued.body
        deleted = await api.call("DELETE", "/v1/players/me", {}, token=leaving)
        assert deleted.status == 200, deleted.body
    conn = await asyncpg.connect(fresh_database_url)
    try:
        status = await conn.fetchval(
            "SELECT status FROM match_tickets WHERE ticket_id = $1", queued.body["ticket_id"]
        )
    finally:
        await conn.close()
    assert status == "cancelled"


async def test_a_stored_ticket_is_answered_201_searching_when_the_matchers_turn_after_it_fails(
    make_settings: Any, fresh_database_url: str
) -> None:
    """A 503 `unavailable` promises that nothing was written. The ticket commits before its
    matcher's turn; here that turn times out on its bucket's lock, which another connection
    holds, and the answer is still the ticket, which the matcher's interval matches later."""
    settings = make_settings(database_url=fresh_database_url, db_timeout_seconds=1.0)
    async with running_service(settings) as api:
        a, b = await new_players(api, 2)
        first = await post_ticket(api, a)
        assert first.status == 201, first.body
        shape = first.body
        bucket = Bucket(shape["game"], shape["ruleset"], shape["seats"], shape["options"])
        holder = await asyncpg.connect(fresh_database_url)
        try:
            async with holder.transaction():
                await holder.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", bucket_key(bucket)
                )
                started = time.monotonic()
                second = await post_ticket(api, b)
                # The answer waited for the matcher's turn to time out, and is the ticket.
                assert time.monotonic() - started >= 1.0
                assert second.status == 201, second.body
                assert second.body["status"] == "searching"
                stored = await holder.fetchval(
                    "SELECT status FROM match_tickets WHERE ticket_id = $1",
                    uuid.UUID(second.body["ticket_id"]),
                )
                assert stored == "searching"
        finally:
            await holder.close()
        mine = await wait_matched(api, b, second.body["ticket_id"])
        theirs = await wait_matched(api, a, first.body["ticket_id"])
        assert mine["status"] == theirs["status"] == "matched"
        assert mine["match_id"] == theirs["match_id"]
