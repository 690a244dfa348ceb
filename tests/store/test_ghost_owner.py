"""What rating asks of a ghost's owner (service/store/snapshots.py `owner`,
docs/rules/cryptids.md#rated-ghosts): only runs that played a battle count toward being
established, and counting them reads an index, however many runs the owner left empty."""

import json
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg

from service.games.cryptids.content import DEFAULT_RULESET
from service.store import snapshots

EMPTY_RUNS = 5_000


async def _player(pool: asyncpg.Pool, name: str) -> uuid.UUID:
    player_id: uuid.UUID = await pool.fetchval(
        "INSERT INTO players (name, created_at) VALUES ($1, now() - interval '30 days')"
        " RETURNING player_id",
        name,
    )
    return player_id


async def _runs(pool: asyncpg.Pool, owner: uuid.UUID, status: str, round_: int, count: int) -> None:
    """`count` runs of the owner that ended `status` with their shop at `round_`."""
    await pool.execute(
        """
        INSERT INTO runs (player_id, ruleset, seed, status, lives, shop, rating_at_start,
                          ended_at)
        SELECT $1, $2, 0, $3, 5, jsonb_build_object('round', $4::int), 1000, now()
          FROM generate_series(1, $5)
        """,
        owner,
        DEFAULT_RULESET,
        status,
        round_,
        count,
    )


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


async def test_only_runs_that_played_a_battle_count_and_the_count_reads_an_index(
    fresh_pool: asyncpg.Pool,
) -> None:
    owner = await _player(fresh_pool, "owner")
    fighter = await _player(fresh_pool, "fighter")
    # Started and abandoned at once, by the thousand: round 1, no battle played.
    await _runs(fresh_pool, owner, "abandoned", 1, EMPTY_RUNS)
    # Left after a battle, and played out.
    await _runs(fresh_pool, owner, "abandoned", 2, 1)
    await _runs(fresh_pool, owner, "lost", 6, 1)
    await fresh_pool.execute("ANALYZE runs")

    async with fresh_pool.acquire() as conn:
        standing = await snapshots.owner(conn, fighter, owner, 3)
        assert standing is not None and standing.fought_runs == 2
        await _runs(fresh_pool, owner, "won", 11, 5)
        standing = await snapshots.owner(conn, fighter, owner, 3)
        assert standing is not None and standing.fought_runs == 3

        # Under the plan PostgreSQL caches for the statement, the runs are read from the index
        # of fought runs, and no more of them than asked for.
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        explained = await conn.fetchval(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + snapshots._OWNER.sql,
            *snapshots._OWNER.args(player_id=fighter, owner_id=owner, runs_needed=3),
        )
    scans = [
        n for n in _nodes(json.loads(explained)[0]["Plan"]) if n.get("Relation Name") == "runs"
    ]
    assert scans, explained
    for scan in scans:
        assert scan.get("Index Name") == "runs_fought_idx", scan
        assert scan["Actual Rows"] <= 3 and not scan.get("Rows Removed by Filter"), scan
