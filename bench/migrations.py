"""What an upgrade costs on large tables: `python -m bench.migrations`.

A database as release 0.1.0 leaves it (migration 1's text applied at start-up, its digest in
schema_applied) is filled with a million players, 100,000 runs and a million battles with
their snapshots, then upgraded to this release's migrations while a bystander reads a player by
id in a loop. Then the same database, made to look like one of a release before 0.1.0 (no
ledger, no digest), runs the baseline again: the upgrade such a database takes, whose statements
each take their table's lock. Each row gives the upgrade's time and the bystander's slowest
read during it, against its median before: a lock held long shows there.
"""

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import asyncpg

from bench.database import as_release_0_1_0, as_release_before_0_1_0, on_database
from bench.leaderboard import fill as fill_players
from bench.table import format_table
from service.games.cryptids.content import DEFAULT_RULESET
from service.store import migrate
from service.store.database import create_pool

BATTLES_PER_RUN = 10

# Runs of the first players, each with its battles and their two snapshots, written without
# triggers or foreign-key checks (the ids are consistent by construction): the end-turn writes
# them one at a time, and a million of those would take the bench an hour.
_FILL_RUNS = """
INSERT INTO runs (run_id, player_id, ruleset, seed, status, lives, wins, shop, rating_at_start)
SELECT md5('run' || i)::uuid, p.player_id, $2, i, 'lost', 0, 5, '{}'::jsonb, 1000
  FROM (SELECT player_id, row_number() OVER (ORDER BY player_id) AS i FROM players) p
 WHERE i <= $1
"""
_FILL_SNAPSHOTS = """
INSERT INTO snapshots (snapshot_id, run_id, player_id, round, ruleset, rating, wins, lives,
                       warband, created_at)
SELECT n, r.run_id, r.player_id, (n - 1) % $1 + 1, r.ruleset, 1000, 0, 5, '[]'::jsonb, $2
  FROM (SELECT run_id, player_id, ruleset, row_number() OVER (ORDER BY run_id) AS i FROM runs) r,
       generate_series((r.i - 1) * $1 + 1, r.i * $1) AS n
"""
_FILL_BATTLES = """
INSERT INTO battles (battle_id, run_id, round, player_snapshot_id, player_snapshot_at,
                     ghost_snapshot_id, ghost_snapshot_at, ruleset, seed, pairing, rating_gap,
                     pairing_ms, winner, rolls, health_player, health_ghost, rating_change,
                     lives_after, wins_after, status_after, rating_pending, created_at)
SELECT s.snapshot_id, s.run_id, s.round, s.snapshot_id, s.created_at, s.snapshot_id,
       s.created_at, s.ruleset, s.snapshot_id, 'bot', 0, 0.1, 'player', 12, 3, 0, 0, 5,
       s.round, 'shopping', 0, s.created_at
  FROM snapshots s
"""


async def fill(pool: asyncpg.Pool, players: int, runs: int) -> float:
    started = time.perf_counter()
    await fill_players(pool, players)
    async with pool.acquire() as conn:
        now = await conn.fetchval("SELECT now()")
        await conn.execute("SET session_replication_role = replica")
        try:
            await conn.execute(_FILL_RUNS, runs, DEFAULT_RULESET)
            await conn.execute(_FILL_SNAPSHOTS, BATTLES_PER_RUN, now)
            await conn.execute(_FILL_BATTLES)
        finally:
            await conn.execute("RESET session_replication_role")
        await conn.execute("ANALYZE")
    return time.perf_counter() - started


async def _bystander(pool: asyncpg.Pool, player_id: Any, stop: asyncio.Event) -> list[float]:
    timings: list[float] = []
    while not stop.is_set():
        started = time.perf_counter()
        await pool.fetchrow("SELECT * FROM players WHERE player_id = $1", player_id)
        timings.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.002)
    return timings


async def _beside_a_bystander(
    pool: asyncpg.Pool, work: Callable[[], Awaitable[object]]
) -> tuple[float, list[float], list[float]]:
    """The work's seconds, and the bystander's read times idle (1 s) and during the work."""
    player_id = await pool.fetchval("SELECT player_id FROM players LIMIT 1")
    stop = asyncio.Event()
    idle = asyncio.create_task(_bystander(pool, player_id, stop))
    await asyncio.sleep(1.0)
    stop.set()
    before = await idle
    stop = asyncio.Event()
    during = asyncio.create_task(_bystander(pool, player_id, stop))
    started = time.perf_counter()
    await work()
    seconds = time.perf_counter() - started
    stop.set()
    return seconds, before, await during


def _row(figure: str, seconds: float, before: list[float], during: list[float]) -> dict[str, str]:
    idle = statistics.median(before)
    return {
        "figure": figure,
        "seconds": f"{seconds:.3f}",
        "bystander reads": str(len(during)),
        "slowest read ms": f"{max(during):.1f}",
        "vs idle p50": f"{max(during) / idle:.0f}x",
    }


async def measure(url: str, players: int, runs: int) -> list[dict[str, str]]:
    await as_release_0_1_0(url)
    pool = await create_pool(url, 2, 4, 600.0)
    try:
        loaded = await fill(pool, players, runs)
        rows = [
            {
                "figure": f"load {players:,} players, {runs:,} runs,"
                f" {runs * BATTLES_PER_RUN:,} battles and snapshots",
                "seconds": f"{loaded:.1f}",
                "bystander reads": "",
                "slowest read ms": "",
                "vs idle p50": "",
            }
        ]
        level = migrate.known()[-1].version
        upgrade = await _beside_a_bystander(pool, lambda: migrate.migrate(url))
        rows.append(_row(f"0.1.0's database to migration {level}", *upgrade))
        await as_release_before_0_1_0(pool)
        older = await _beside_a_bystander(pool, lambda: migrate.migrate(url))
        rows.append(_row(f"an older release's database to migration {level}", *older))
    finally:
        await pool.close()
    return rows


def run(smoke: bool = False) -> list[dict[str, str]]:
    players, runs = (2_000, 100) if smoke else (1_000_000, 100_000)
    return on_database("migrations", lambda url: measure(url, players, runs))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.migrations", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    args = parser.parse_args(argv)
    print(format_table(run(args.smoke)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
