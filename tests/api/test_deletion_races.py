"""Deletions racing the player's own writes, and each other, through HTTP on the real database
(docs/api.md#deleting-an-account): whichever commits first, nothing of the player is left
playing. A write that lands first is ended by the deletion with the rest of what the player
holds; one that comes after is a 401 and writes nothing.
"""

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import asyncpg
import pytest

from service.api.keys import POOL
from service.config import Settings
from tests.api.deletion_helpers import NOTHING, asked_match, left_behind
from tests.api.matches_helpers import create, start_match
from tests.conftest import make_url, service_and_app
from tests.http import Answer, Api

ROUNDS = 20
# The deletion is sent this much later in one round out of each few, so that either may win.
JITTER_SECONDS = (0.0, 0.002, 0.005, 0.01)


@pytest.fixture(scope="module")
async def raced(settings: Settings) -> AsyncIterator[tuple[Api, asyncpg.Pool]]:
    """A service on a database of the module's own: no other test's ticket meets these."""
    name = f"t_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(settings.database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        url = make_url(settings.database_url or "", name)
        async with service_and_app(dataclasses.replace(settings, database_url=url)) as (api, app):
            yield api, app[POOL]
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


# A write fired with the deletion, given the player's token; what it answers when it lands.
Write = Callable[[str], Awaitable[Answer]]


@dataclass(frozen=True)
class Race:
    """What a player holds before the race, and the write it fires with its deletion."""

    prepare: Callable[[Api, str], Awaitable[Write]]
    landed: int


async def _delete(api: Api, token: str, after: float = 0.0) -> Answer:
    await asyncio.sleep(after)
    return await api.call("DELETE", "/v1/players/me", token=token)


async def _race(api: Api, pool: asyncpg.Pool, race: Race) -> None:
    """ROUNDS players at once, each deleted while its write is in flight."""

    async def one(number: int) -> None:
        player_id, token = await api.new_player(f"racer-{number}")
        write = await race.prepare(api, token)
        jitter = JITTER_SECONDS[number % len(JITTER_SECONDS)]
        deleted, written = await asyncio.gather(_delete(api, token, jitter), write(token))
        assert deleted.status == 200, deleted.body
        assert written.status in (race.landed, 401), written.body
        if written.status == 401:
            assert written.error_code == "unauthorized"
        assert await left_behind(pool, uuid.UUID(player_id)) == NOTHING

    await asyncio.gather(*[one(number) for number in range(ROUNDS)])


async def _run_start(api: Api, token: str) -> Write:
    return lambda t: api.post("/v1/runs", token=t)


async def _buy(api: Api, token: str) -> Write:
    run = (await api.post("/v1/runs", token=token)).body
    return lambda t: api.post(f"/v1/runs/{run['run_id']}/buy", {"slot": 0}, token=t)


async def _end_turn(api: Api, token: str) -> Write:
    run = (await api.post("/v1/runs", token=token)).body
    bought = await api.post(f"/v1/runs/{run['run_id']}/buy", {"slot": 0}, token=token)
    assert bought.status == 200, bought.body
    return lambda t: api.post(f"/v1/runs/{run['run_id']}/end-turn", {"round": 1}, token=t)


async def _create(api: Api, token: str) -> Write:
    return lambda t: create(api, t)


async def _bot_match(api: Api, token: str) -> Write:
    return lambda t: create(api, t, bots=[1])


async def _join(api: Api, token: str) -> Write:
    _, host = await api.new_player("host")
    match_id = (await create(api, host)).body["match_id"]
    return lambda t: api.post(f"/v1/matches/{match_id}/join", token=t)


async def _act(api: Api, token: str) -> Write:
    _, rival = await api.new_player("rival")
    match_id, mine = await asked_match(api, token, rival)
    body = {"version": mine["version"], "action": mine["legal_actions"][0]}
    return lambda t: api.post(f"/v1/matches/{match_id}/actions", body, token=t)


async def _ticket(api: Api, token: str) -> Write:
    body = {"game": "necromancers", "seats": 2}
    return lambda t: api.post("/v1/matchmaking/tickets", body, token=t)


RACES = {
    "run start": Race(_run_start, 201),
    "buy": Race(_buy, 200),
    "end-turn": Race(_end_turn, 200),
    "match create": Race(_create, 201),
    "bot match": Race(_bot_match, 201),
    "match join": Race(_join, 200),
    "match action": Race(_act, 200),
    "ticket": Race(_ticket, 201),
}


@pytest.mark.parametrize("kind", RACES)
async def test_a_deletion_racing_a_write_leaves_nothing_of_the_player_in_play(
    raced: tuple[Api, asyncpg.Pool], kind: str
) -> None:
    await _race(*raced, RACES[kind])


async def test_forty_players_seated_together_delete_at_once_and_every_deletion_succeeds(
    raced: tuple[Api, asyncpg.Pool],
) -> None:
    """Each in matches with the next two of a ring: their resignations end matches whose
    roll-up and rating rows the others' resignations write too, in crossing orders."""
    api, pool = raced
    players = [await api.new_player(f"ring-{number}") for number in range(40)]
    tokens = [token for _, token in players]
    for number, token in enumerate(tokens):
        for step in (1, 2):
            await start_match(api, [token, tokens[(number + step) % len(tokens)]])
    deleted = await asyncio.gather(*[_delete(api, token) for token in tokens])
    assert [answer.status for answer in deleted] == [200] * len(tokens)
    for player_id, _ in players:
        assert await left_behind(pool, uuid.UUID(player_id)) == NOTHING
    # Each match was resigned by the first of its two players to go; the other found it over.
    counted = sum(a.body["matches_resigned"] for a in deleted)
    assert counted == 2 * len(tokens)
