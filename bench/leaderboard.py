"""The leaderboard at scale: `python -m bench.leaderboard`.

Fills a fresh embedded PostgreSQL (or DATABASE_URL) with a million players in one statement,
then times the leaderboard's reads (the best 100, and `around=me` for a player at the top, in
the middle and at the bottom, 100 a page) against a plain read of one player by id in the same
run, and gives each as a ratio to that read. Ratings spread like a ladder's: two players in
five still at the starting 1000, the others from 0 to 2000, most near the middle.
"""

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any
from uuid import UUID

import asyncpg

from bench.database import on_database
from bench.table import format_table, percentile
from service.store.database import apply_schema, create_pool
from service.usecases import players

PAGE = 100
# Deterministic ratings (setseed) and ids (a hash of the row number): every run ranks alike.
_FILL = """
INSERT INTO players (player_id, name, rating)
SELECT md5('bench-player-' || i)::uuid, 'p' || i,
       CASE WHEN i % 5 < 2 THEN 1000
            ELSE 1000 + floor((random() + random() + random() + random() - 2) * 500)::int END
  FROM generate_series(1, $1::int) AS i
"""


async def fill(pool: asyncpg.Pool, count: int) -> float:
    """Insert `count` players in one statement (the rating counts follow in the same one)."""
    started = time.perf_counter()
    async with pool.acquire() as conn:
        await conn.execute("SELECT setseed(0.25)")
        await conn.execute(_FILL, count)
        await conn.execute("ANALYZE players, rating_counts")
    return time.perf_counter() - started


async def ladder_positions(pool: asyncpg.Pool) -> dict[str, UUID]:
    """The first player on the board, one in the middle (among those tied at the starting
    rating) and the last."""
    first = "SELECT player_id FROM players ORDER BY {} LIMIT 1"
    return {
        "top": await pool.fetchval(first.format("rating DESC, player_id")),
        "middle": await pool.fetchval(
            "SELECT player_id FROM players WHERE rating = 1000 ORDER BY player_id"
            " OFFSET (SELECT count(*) / 2 FROM players WHERE rating = 1000) LIMIT 1"
        ),
        "bottom": await pool.fetchval(first.format("rating, player_id DESC")),
    }


async def timed(read: Callable[[], Awaitable[Any]], calls: int) -> list[float]:
    """Milliseconds of each of `calls` reads, one after the other, after a few to warm up."""
    for _ in range(3):
        await read()
    timings = []
    for _ in range(calls):
        started = time.perf_counter()
        await read()
        timings.append((time.perf_counter() - started) * 1000)
    return timings


async def top(pool: asyncpg.Pool) -> players.Leaderboard:
    return await players.leaderboard(pool, PAGE, None)


async def measure(url: str, count: int, calls: int) -> list[dict[str, Any]]:
    pool = await create_pool(url, 1, 2, 120.0)
    try:
        await apply_schema(pool)
        load_s = await fill(pool, count)
        where = await ladder_positions(pool)
        baseline = await timed(partial(players.find, pool, where["middle"]), calls)
        reads = {f"leaderboard, best {PAGE}": await timed(partial(top, pool), calls)}
        for label, player_id in where.items():
            reads[f"leaderboard around=me, {label}"] = await timed(
                partial(players.leaderboard, pool, PAGE, player_id), calls
            )
    finally:
        await pool.close()
    base = statistics.median(baseline)
    rows = [
        {
            "figure": f"INSERT {count:,} players",
            "value": f"{load_s:.1f} s",
            "p50 ms": "",
            "p99 ms": "",
            "vs by id": "",
        },
        _row("player by id (baseline)", baseline, base),
    ]
    rows.extend(_row(label, timings, base) for label, timings in reads.items())
    return rows


def _row(figure: str, timings: list[float], base: float) -> dict[str, Any]:
    return {
        "figure": f"{figure} ({len(timings)} reads)",
        "value": f"{1000 / statistics.mean(timings):.0f} /s serial",
        "p50 ms": f"{percentile(timings, 0.5):.2f}",
        "p99 ms": f"{percentile(timings, 0.99):.2f}",
        "vs by id": f"{statistics.median(timings) / base:.1f}x",
    }


def run(smoke: bool = False) -> list[dict[str, Any]]:
    count, calls = (2_000, 20) if smoke else (1_000_000, 500)
    return on_database("leaderboard", lambda url: measure(url, count, calls))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.leaderboard", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    args = parser.parse_args(argv)
    print(format_table(run(args.smoke)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
