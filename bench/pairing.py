"""Pairing at scale and the end-turn loop: `python -m bench.pairing`.

Fills a fresh embedded PostgreSQL (or DATABASE_URL) with a pool of snapshots by COPY, then
measures the pairing query's latency and the throughput of the whole end-turn use-case
(lock, snapshot, pair, fight, store) with many players ending turns at once. The snapshots'
ages spread evenly over AGE_DAYS, as a ladder writing at a steady rate leaves them: one in
eight is inside the 7-day time-to-live, the rest in older weekly partitions.
"""

import argparse
import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from bench.database import on_database
from bench.table import format_table, percentile
from service.games.cryptids import shop as shops
from service.games.cryptids.content import DEFAULT_RULESET, load_ruleset
from service.games.kernel.rng import SplitMix64
from service.store.database import create_pool
from service.store.migrate import migrate_on
from service.usecases import pairing, runs

ROUNDS = 20
BENCH_SEED = 0xBE7C4
AGE_DAYS = 56
TTL_SECONDS = 7 * 24 * 3600


async def fill(pool: asyncpg.Pool, snapshots: int, owners: int) -> float:
    """COPY `owners` players and `snapshots` snapshots spread over rounds, ratings and ages."""
    rng = SplitMix64(BENCH_SEED)
    ruleset = load_ruleset(DEFAULT_RULESET)
    species = sorted(ruleset.species)
    started = time.perf_counter()
    players = [(uuid.UUID(int=rng.next() << 64 | rng.next()), f"p{i}") for i in range(owners)]
    warbands = [
        json.dumps([[rng.pick(species), rng.below(2), 1 + rng.below(3)] for _ in range(5)])
        for _ in range(64)
    ]
    async with pool.acquire() as conn:
        now: datetime = await conn.fetchval("SELECT now()")
        await conn.fetchval("SELECT ensure_partitions(2, $1)", AGE_DAYS // 7 + 1)
        await conn.copy_records_to_table("players", records=players, columns=["player_id", "name"])
        batch = 100_000
        for start in range(0, snapshots, batch):
            records = []
            for _ in range(min(batch, snapshots - start)):
                # Ratings spread like a ladder: most near 1000, tails to about ±600.
                rating = 1000 + sum(rng.below(101) - 50 for _ in range(4)) * 3
                records.append(
                    (
                        players[rng.below(owners)][0],
                        1 + rng.below(ROUNDS),
                        DEFAULT_RULESET,
                        rating,
                        0,
                        5,
                        warbands[rng.below(len(warbands))],
                        now - timedelta(seconds=rng.below(AGE_DAYS * 86400)),
                    )
                )
            await conn.copy_records_to_table(
                "snapshots",
                records=records,
                columns=[
                    "player_id",
                    "round",
                    "ruleset",
                    "rating",
                    "wins",
                    "lives",
                    "warband",
                    "created_at",
                ],
            )
        await conn.execute("ANALYZE snapshots")
    return time.perf_counter() - started


async def pairing_latency(pool: asyncpg.Pool, queries: int) -> list[float]:
    rng = SplitMix64(BENCH_SEED + 1)
    ids = [r["player_id"] for r in await pool.fetch("SELECT player_id FROM players LIMIT 200")]
    rules = load_ruleset(DEFAULT_RULESET).pairing
    timings = []
    async with pool.acquire() as conn:
        for i in range(queries):
            exclude = [ids[rng.below(len(ids))] for _ in range(1 + rng.below(10))]
            started = time.perf_counter()
            await pairing.find_ghost(
                conn,
                run_seed=i,
                ruleset=DEFAULT_RULESET,
                rules=rules,
                round_=1 + rng.below(ROUNDS),
                rating=700 + rng.below(601),
                exclude_players=exclude,
                ttl_seconds=TTL_SECONDS,
            )
            timings.append((time.perf_counter() - started) * 1000)
    return timings


async def _player_with_run(pool: asyncpg.Pool, seed: int) -> tuple[uuid.UUID, uuid.UUID]:
    player_id: uuid.UUID = await pool.fetchval(
        "INSERT INTO players (name) VALUES ('bench') RETURNING player_id"
    )
    run = await runs.start(pool, player_id, seed=seed)
    return player_id, uuid.UUID(run["run_id"])


async def end_turn_loop(pool: asyncpg.Pool, players: int, turns: int) -> tuple[float, list[float]]:
    """`players` players each play `turns` rounds (buy what gold allows, end the turn)."""
    ruleset = load_ruleset(DEFAULT_RULESET)
    policy = runs.PairingPolicy(TTL_SECONDS)
    pairs = [await _player_with_run(pool, seed) for seed in range(players)]
    latencies: list[float] = []

    def buy_all(_: Any, shop: shops.Shop) -> shops.Shop:
        for slot in range(len(shop.offers)):
            try:
                shop = shops.buy(ruleset, shop, slot)
            except shops.ShopError:
                continue
        return shop

    async def play(player_id: uuid.UUID, run_id: uuid.UUID) -> None:
        for _ in range(turns):
            run = await runs.shop_move(pool, player_id, run_id, "buy", buy_all, runs.Retry())
            started = time.perf_counter()
            answer = await runs.end_turn(
                pool,
                player_id,
                run_id,
                round_=run["round"],
                moves=(),
                order=None,
                abilities=None,
                policy=policy,
                retry=runs.Retry(),
            )
            latencies.append((time.perf_counter() - started) * 1000)
            if answer["status"] != "shopping":
                return

    started = time.perf_counter()
    await asyncio.gather(*(play(p, r) for p, r in pairs))
    return len(latencies) / (time.perf_counter() - started), latencies


async def measure(
    url: str, snapshots: int, queries: int, players: int, turns: int
) -> list[dict[str, Any]]:
    pool = await create_pool(url, 4, 20, 30.0)
    try:
        async with pool.acquire() as conn:
            await migrate_on(conn)
        load_s = await fill(pool, snapshots, owners=max(10, snapshots // 20))
        latency = await pairing_latency(pool, queries)
        throughput, turn_latency = await end_turn_loop(pool, players, turns)
    finally:
        await pool.close()
    return [
        {
            "figure": f"COPY {snapshots:,} snapshots",
            "value": f"{load_s:.1f} s",
            "p50 ms": "",
            "p99 ms": "",
        },
        {
            "figure": f"pairing query ({queries} runs)",
            "value": f"{1000 / statistics.mean(latency):.0f} /s serial",
            "p50 ms": f"{percentile(latency, 0.5):.2f}",
            "p99 ms": f"{percentile(latency, 0.99):.2f}",
        },
        {
            "figure": f"end-turn, {players} players at once",
            "value": f"{throughput:.0f} turns/s",
            "p50 ms": f"{percentile(turn_latency, 0.5):.2f}",
            "p99 ms": f"{percentile(turn_latency, 0.99):.2f}",
        },
    ]


def run(smoke: bool = False) -> list[dict[str, Any]]:
    sizes = (2_000, 50, 4, 2) if smoke else (1_000_000, 2_000, 32, 8)
    return on_database("pairing", lambda url: measure(url, *sizes))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pairing", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    args = parser.parse_args(argv)
    print(format_table(run(args.smoke)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
