"""A match's events are read once per process and change, however many sockets follow it, and
a match played before a cap's worth of sockets costs a bystander little: each socket costs its
push."""

import asyncio
from pathlib import Path
from typing import Any

import asyncpg

from service.config import Settings
from service.store.match_events import CHANNEL
from tests.api.bystander import CYCLES, under_attack
from tests.api.matches_helpers import act, new_players, read, receive, socket_url, start_match
from tests.conftest import running_service
from tests.http import Api

SOCKETS = 24
LOCK_SETTLE_SECONDS = 0.5


WAITING_ON_EVENTS = (
    "SELECT count(*) FROM pg_locks WHERE relation = 'match_events'::regclass AND NOT granted"
)


async def _readers_waiting(conn: asyncpg.Connection) -> int:
    """How many statements wait for the lock on match_events, once they have stopped coming."""
    for _ in range(250):
        if await conn.fetchval(WAITING_ON_EVENTS):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("nothing came to read match_events")
    await asyncio.sleep(LOCK_SETTLE_SECONDS)
    waiting: int = await conn.fetchval(WAITING_ON_EVENTS)
    return waiting


async def test_a_notification_is_read_once_for_all_the_sockets_on_its_match(
    make_settings: Any, fresh_database_url: str
) -> None:
    """SOCKETS spectators follow a match on a database of its own, with the sweeps asleep.
    While match_events is locked, a notification of the match wakes them all: the statements
    that then wait on the lock are the reads the notification costs. One, not one a socket."""
    settings = make_settings(
        database_url=fresh_database_url,
        sweep_interval_seconds=3600.0,
        matchmaking_interval_seconds=3600.0,
        run_sweep_interval_seconds=3600.0,
    )
    async with running_service(settings) as api:
        seats, watchers = await new_players(api, 2), await new_players(api, 4)
        match_id = await start_match(api, seats)
        sockets = []
        for n in range(SOCKETS):
            url = socket_url(api, match_id, f"?token={watchers[n % len(watchers)]}")
            sockets.append(await api.session.ws_connect(url))
        locker = await asyncpg.connect(fresh_database_url)
        watcher = await asyncpg.connect(fresh_database_url)
        try:
            for ws in sockets:
                assert (await receive(ws))["events"]
            async with locker.transaction():
                await locker.execute("LOCK TABLE match_events IN ACCESS EXCLUSIVE MODE")
                await watcher.execute("SELECT pg_notify($1, $2)", CHANNEL, match_id)
                waiting = await _readers_waiting(watcher)
            # And an action's events still reach every socket, from that one read.
            (seat,) = (await read(api, seats[0], match_id))["to_act"]
            mine = await read(api, seats[seat], match_id)
            moved = await act(api, seats[seat], match_id, mine["version"], mine["legal_actions"][0])
            assert moved.status == 200, moved.body
            for ws in sockets:
                assert (await receive(ws))["events"] == moved.body["events"]
        finally:
            await locker.close()
            await watcher.close()
            for ws in sockets:
                await ws.close()
    print(f"\nreads waiting after one notification with {SOCKETS} sockets open: {waiting}")
    assert waiting == 1


# Five actions a second on one match: a table many times livelier than people play.
ACTION_PACE_SECONDS = 0.2


async def _loyalty_match(api: Api, seats: list[str]) -> str:
    """A two-seat match of the loyalty game, the longest the service runs (about a thousand
    actions played at random), so that it is still going when the measuring ends."""
    games = (await api.get("/v1/games", token=seats[0])).body["games"]
    loadout = next(game["sample_loadout"] for game in games if game["id"] == "loyalty")
    body = {"game": "loyalty", "seats": 2, "loadout": loadout}
    created = await api.post("/v1/matches", body, token=seats[0])
    assert created.status == 201, created.body
    match_id: str = created.body["match_id"]
    joined = await api.post(f"/v1/matches/{match_id}/join", {"loadout": loadout}, token=seats[1])
    assert joined.status == 200, joined.body
    return match_id


async def test_a_bystanders_p50_stays_within_twice_idle_while_a_match_plays_to_a_full_crowd(
    settings: Settings, fresh_database_url: str, repo_root: Path
) -> None:
    """MAX_SOCKETS_PER_MATCH spectators' sockets (MAX_SOCKETS_PER_PLAYER from each of as many
    players as that takes) and the two seats' on one match, whose seats play on their sockets
    every ACTION_PACE_SECONDS, from a process of their own (tests/api/socket_crowd.py). Every
    action is pushed to every socket. The bystander is timed in windows, the match paused and
    playing in turn (tests/api/bystander.py)."""
    shipped = Settings(
        port=0,
        database_url=fresh_database_url,
        data_dir=settings.data_dir,
        secret_key=settings.secret_key,
        ops_token=settings.ops_token,
        # Only the sign-ups the test makes itself are raised from what is shipped.
        registrations_per_address_per_hour=1000,
        registrations_per_address_per_day=1000,
    )
    per_watcher = shipped.max_sockets_per_player
    async with running_service(shipped) as api:
        _, bystander = await api.new_player("bystander")
        seats = await new_players(api, 2)
        watchers = await new_players(api, shipped.max_sockets_per_match // per_watcher)
        spec = {
            "base_url": api.base_url,
            "match_id": await _loyalty_match(api, seats),
            "seats": seats,
            "watchers": watchers,
            "per_watcher": per_watcher,
            "pace": ACTION_PACE_SECONDS,
        }
        measured = await under_attack(api, bystander, "tests.api.socket_crowd", spec, repo_root)
    counts = measured.counts
    sockets = len(watchers) * per_watcher + 2
    print(f"\n{measured.summary(f'while the match plays to {sockets} sockets')}")
    print(f"  {dict(sorted(counts.items()))}")
    assert "match ended" not in counts
    assert counts["actions applied"] > CYCLES
    assert counts["batches pushed to watchers"] >= counts["actions applied"] * len(watchers)
    assert measured.loaded_p50 <= 2 * measured.idle_p50
