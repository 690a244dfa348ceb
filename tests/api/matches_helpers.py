"""Helpers for the match tests: seat players, play through HTTP, check the cached states."""

import json
import random
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import asyncpg
import msgpack
import pytest

from service.config import Settings
from service.games.kernel.protocol import rebuild
from service.games.registry import get_game
from service.store import matches as store
from tests.conftest import TEST_OPS_TOKEN
from tests.http import Answer, Api

SOCKET_WAIT = 5.0
OPS = {"X-Ops-Token": TEST_OPS_TOKEN}


async def new_players(api: Api, count: int) -> list[str]:
    """`count` new players' tokens."""
    return [(await api.new_player(f"p{i}"))[1] for i in range(count)]


async def create(api: Api, token: str, **fields: Any) -> Answer:
    body = {"game": "necromancers", "seats": 2, **fields}
    return await api.post("/v1/matches", body, token=token)


async def start_match(api: Api, tokens: list[str], **fields: Any) -> str:
    """A match with a seat for each token, in order; active when the last one joins."""
    created = await create(api, tokens[0], seats=len(tokens), **fields)
    assert created.status == 201, created.body
    match_id = str(created.body["match_id"])
    for seat, token in enumerate(tokens[1:], start=1):
        joined = await api.post(f"/v1/matches/{match_id}/join", token=token)
        assert joined.status == 200, joined.body
        assert joined.body["seat"] == seat
    return match_id


async def operator_match(api: Api, **fields: Any) -> Answer:
    """A match the operator makes: bots in `bots`, every other seat free to join."""
    body = {"game": "necromancers", "seats": 2, **fields}
    return await api.post("/v1/ops/matches", body, headers=OPS)


async def walk_list(
    api: Api, token: str, query: str = "", limit: int = 100
) -> list[dict[str, Any]]:
    """Every match of a list (the lobby, or `mine=true`), page after page by its cursor."""
    listed: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = await api.get(f"/v1/matches?limit={limit}{query}{cursor}", token=token)
        assert page.status == 200, page.body
        assert len(page.body["matches"]) <= limit
        listed += page.body["matches"]
        if page.body["next"] is None:
            return listed
        cursor = f"&cursor={page.body['next']}"


async def read(api: Api, token: str, match_id: str) -> dict[str, Any]:
    answer = await api.get(f"/v1/matches/{match_id}", token=token)
    assert answer.status == 200, answer.body
    body: dict[str, Any] = answer.body
    return body


async def act(
    api: Api, token: str, match_id: str, version: int, action: Any, **kwargs: Any
) -> Answer:
    body = {"version": version, "action": action}
    return await api.post(f"/v1/matches/{match_id}/actions", body, token=token, **kwargs)


async def play_step(
    api: Api, match_id: str, tokens: list[str], rng: random.Random, fmt: str = "json"
) -> Answer:
    """One random legal action by one of the seats asked to act."""
    match = await read(api, tokens[0], match_id)
    seat = rng.choice(match["to_act"])
    mine = await read(api, tokens[seat], match_id)
    action = rng.choice(mine["legal_actions"])
    return await act(api, tokens[seat], match_id, mine["version"], action, fmt=fmt)


async def play_out(api: Api, match_id: str, tokens: list[str], rng: random.Random) -> None:
    """Random legal actions to the end; a turn timer may overtake a step (409), then retry."""
    for _ in range(1000):
        if (await read(api, tokens[0], match_id))["status"] == "finished":
            return
        answer = await play_step(api, match_id, tokens, rng)
        assert answer.status == 200 or answer.error_code == "stale_version", answer.body
    raise AssertionError("match did not finish")


async def wait_until(
    api: Api,
    token: str,
    match_id: str,
    done: Callable[[dict[str, Any]], bool],
    seconds: float = 15.0,
) -> dict[str, Any]:
    """The match once `done` holds, long-polling for changes in between."""
    deadline = time.monotonic() + seconds
    after = 0
    while not done(match := await read(api, token, match_id)):
        assert time.monotonic() < deadline, f"match {match_id} never got there: {match}"
        page = await api.get(f"/v1/matches/{match_id}/events?after={after}&wait=1", token=token)
        after = page.body["last_seq"]
    return match


async def all_events(api: Api, token: str, match_id: str) -> list[dict[str, Any]]:
    """Every event `token` may see, paging through the events endpoint."""
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await api.get(f"/v1/matches/{match_id}/events?after={after}", token=token)
        assert page.status == 200, page.body
        events += page.body["events"]
        if page.body["last_seq"] == after:
            return events
        after = page.body["last_seq"]


def ints_in(value: Any) -> set[int]:
    if isinstance(value, dict):
        return {i for v in value.values() for i in ints_in(v)}
    if isinstance(value, list):
        return {i for v in value for i in ints_in(v)}
    return {value} if type(value) is int else set()


@pytest.fixture(scope="module", autouse=True)
async def finished_matches_rebuild(settings: Settings) -> AsyncIterator[None]:
    """After a module: every finished match in the database still rebuilds from its log.

    Imported by each match test module, so that it runs for those modules only.
    """
    yield
    assert settings.database_url is not None
    await assert_finished_matches_rebuild(settings.database_url)


async def cache_agrees_with_log(db: store.Conn, match_id: uuid.UUID) -> bool:
    """True when replaying the seed, the loadouts and the action log gives the cached state."""
    row = await store.get(db, match_id)
    assert row is not None, match_id
    seats = await store.seats(db, match_id)
    log = [(a.seat, a.action) for a in await store.actions(db, match_id)]
    game = get_game(row.game, row.ruleset)
    loadouts = [s.loadout for s in seats]
    state = rebuild(game, row.seed, row.seats, row.options, loadouts, log)
    return bool(game.dump_state(state) == row.state)


async def assert_finished_matches_rebuild(database_url: str) -> int:
    """Every finished match's seed and action log rebuild its cached state; returns how many."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=2)
    try:
        rows = await pool.fetch("SELECT match_id FROM matches WHERE status = 'finished'")
        finished = [row["match_id"] for row in rows]
        for match_id in finished:
            assert await cache_agrees_with_log(pool, match_id), match_id
        return len(finished)
    finally:
        await pool.close()


async def receive(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    message = await ws.receive(timeout=SOCKET_WAIT)
    if message.type == aiohttp.WSMsgType.TEXT:
        data: dict[str, Any] = json.loads(message.data)
    else:
        assert message.type == aiohttp.WSMsgType.BINARY, message
        data = msgpack.unpackb(message.data)
    return data


def socket_url(api: Api, match_id: str, query: str = "") -> str:
    return f"{api.base_url.replace('http', 'ws', 1)}/v1/matches/{match_id}/ws{query}"
