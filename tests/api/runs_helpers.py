"""Helpers for run tests: seeding the ghost pool directly, playing turns through HTTP."""

import json
import uuid
from typing import Any

import asyncpg
from aiohttp import web

from service.api.keys import POOL
from service.config import Settings
from service.games.cryptids.content import DEFAULT_RULESET
from service.usecases import runs
from tests.http import Api

WEAK = [["mothman", 0, 1]]
STRONG = [
    ["kraken", 0, 3],
    ["yeti", 0, 3],
    ["ogopogo", 0, 3],
    ["el_cuero", 0, 3],
    ["bigfoot", 0, 3],
]


async def ghost_player(
    pool: asyncpg.Pool, name: str = "ghost", established: bool = True
) -> uuid.UUID:
    """A ghost owner; an established one (by the default settings: an old account with runs
    played out) moves the ratings of those who fight its ghosts
    (docs/rules/cryptids.md#rated-ghosts)."""
    defaults = Settings()
    age = defaults.rated_ghost_min_age_seconds if established else 0
    player_id: uuid.UUID = await pool.fetchval(
        "INSERT INTO players (name, created_at) VALUES ($1, now() - make_interval(secs => $2))"
        " RETURNING player_id",
        name,
        float(age),
    )
    if established:
        await pool.execute(
            """
            INSERT INTO runs (player_id, ruleset, seed, status, lives, shop, rating_at_start,
                              ended_at)
            SELECT $1, $2, 0, 'lost', 0, '{}', 1000, now() FROM generate_series(1, $3)
            """,
            player_id,
            DEFAULT_RULESET,
            defaults.rated_ghost_min_runs,
        )
    return player_id


async def add_snapshot(
    pool: asyncpg.Pool,
    player_id: uuid.UUID,
    round_: int,
    rating: int,
    warband: list[list[Any]],
    age_seconds: float = 0,
    ruleset: str = DEFAULT_RULESET,
) -> int:
    snapshot_id: int = await pool.fetchval(
        """
        INSERT INTO snapshots (player_id, round, ruleset, rating, wins, lives, warband, created_at)
        VALUES ($1, $2, $3, $4, 0, 5, $5, now() - make_interval(secs => $6))
        RETURNING snapshot_id
        """,
        player_id,
        round_,
        ruleset,
        rating,
        json.dumps(warband),
        age_seconds,
    )
    return snapshot_id


async def fill_pool(
    pool: asyncpg.Pool, warband: list[list[Any]], players: int, rounds: int, rating: int = 1000
) -> None:
    """`players` ghost owners, each with a snapshot of `warband` in every round up to `rounds`."""
    for i in range(players):
        owner = await ghost_player(pool, f"ghost-{i}")
        for round_ in range(1, rounds + 1):
            await add_snapshot(pool, owner, round_, rating, warband)


async def seeded_run(app: web.Application, api: Api, seed: int) -> tuple[str, str]:
    """A player and a run started with a known seed; returns (token, run_id)."""
    player_id, token = await api.new_player()
    run = await runs.start(app[POOL], uuid.UUID(player_id), seed=seed)
    return token, run["run_id"]


async def spend_gold(api: Api, token: str, run: dict[str, Any]) -> dict[str, Any]:
    """Buy offers left to right while gold and board room allow."""
    for slot, offer in enumerate(run["shop"]):
        if offer is None or run["gold"] < offer["cost"]:
            continue
        answer = await api.post(f"/v1/runs/{run['run_id']}/buy", {"slot": slot}, token=token)
        if answer.status == 200:
            run = answer.body
        else:
            assert answer.body["error"]["code"] == "board_full"
    return run
