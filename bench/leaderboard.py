"""The leaderboards at scale: `python -m bench.leaderboard`.

Fills a fresh embedded PostgreSQL (or DATABASE_URL) with a million players in one statement,
and a million ratings of one turn-based game and season (one per player) in another, deletes a
few thousand players, then times the leaderboards' reads (the best 100, and `around=me` at the
top, in the middle, inside the largest tie and at the bottom, 100 a page), of the autobattler's
board and of the game's, against a plain read of one player by id in the same run, and gives
each as a ratio to that read.

Autobattler ratings spread like a ladder's: two players in five still at the starting 1000, the
others from 0 to 2000, most near the middle. Game ratings as early in a season: one player in
five won its only match against a newcomer and one in five lost it (two ties, each at one
exact ordinal), the others played 2 to 61 matches and spread. The deleted players are those
just below the autobattler's middle player, all at 1000: a walk that stepped over deleted
players would meet them all.
"""

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any
from uuid import UUID

import asyncpg

from bench.database import as_release_before_0_1_0, on_database
from bench.table import format_table, percentile
from service.games.kernel.ratings import Skill, rate
from service.store.database import create_pool
from service.store.migrate import migrate_on
from service.usecases import game_ratings, players

PAGE = 100
GAME = "necromancers"
SEASON = "bench"
# Players deleted: a few thousand, all where the autobattler's middle player's walk goes.
DELETED = 3_000
# Deterministic ratings (setseed) and ids (a hash of the row number): every run ranks alike.
# In id order, the primary key's: appended to, not written all over.
_FILL = """
INSERT INTO players (player_id, name, rating)
SELECT * FROM (
    SELECT md5('bench-player-' || i)::uuid, 'p' || i,
           CASE WHEN i % 5 < 2 THEN 1000
                ELSE 1000 + floor((random() + random() + random() + random() - 2) * 500)::int END
      FROM generate_series(1, $1::int) AS i) AS made
 ORDER BY 1
"""

# One rating for each of the first `$1` players of _FILL. $4/$5: the mu of a first match's
# winner and loser against a newcomer, $6 their sigma (the same for both). In player id order,
# that of two of the table's three indexes.
_FILL_GAME = """
INSERT INTO game_ratings (player_id, game, season, mu, sigma, matches)
SELECT * FROM (
    SELECT md5('bench-player-' || i)::uuid, $2, $3,
           CASE i % 5 WHEN 0 THEN $4 WHEN 1 THEN $5
                ELSE 25 + (random() + random() + random() + random() - 2) * 8 END,
           CASE WHEN i % 5 < 2 THEN $6 ELSE 1 + 4 * random() END,
           CASE WHEN i % 5 < 2 THEN 1 ELSE 2 + floor(random() * 60)::int END
      FROM generate_series(1, $1::int) AS i) AS rated
 ORDER BY 1
"""


async def fill(pool: asyncpg.Pool, count: int) -> float:
    """Insert `count` players in one statement (the rating counts follow in the same one)."""
    started = time.perf_counter()
    async with pool.acquire() as conn:
        await conn.execute("SELECT setseed(0.25)")
        await conn.execute(_FILL, count)
        await conn.execute("ANALYZE players, rating_counts")
    return time.perf_counter() - started


async def fill_game(pool: asyncpg.Pool, count: int) -> float:
    """Rate the first `count` players of `fill` in GAME and SEASON, in one statement.

    They are loaded as into a database made before the boards' index and counts, without
    triggers or foreign-key checks (the ids are those of `fill`), and the baseline migration,
    run on such a database, then builds the index and counts them: a bulk load through
    the index and the triggers takes over a minute of random index writes, foreign-key checks
    and upserts that no match's end makes, and this times the upgrade instead."""
    first = rate([[1], [0]], {0: Skill(), 1: Skill()})
    started = time.perf_counter()
    async with pool.acquire() as conn:
        await conn.execute("SELECT setseed(0.5)")
        await conn.execute("INSERT INTO seasons (name) VALUES ($1) ON CONFLICT DO NOTHING", SEASON)
        await conn.execute("DROP INDEX game_ratings_leaderboard_idx")
        await conn.execute("DROP TRIGGER game_ratings_counts_insert ON game_ratings")
        # The baseline migration runs again, and builds them.
        await as_release_before_0_1_0(conn)
        # The load's sort in memory.
        await conn.execute("SET work_mem = '256MB'")
        await conn.execute("SET session_replication_role = replica")
        try:
            await conn.execute(
                _FILL_GAME, count, GAME, SEASON, first[1].mu, first[0].mu, first[1].sigma
            )
        finally:
            await conn.execute("RESET session_replication_role")
            await conn.execute("RESET work_mem")
    async with pool.acquire() as conn:
        await migrate_on(conn)
    await pool.execute("ANALYZE game_ratings, game_rating_counts")
    return time.perf_counter() - started


async def delete_players(pool: asyncpg.Pool, count: int) -> float:
    """Delete `count` players as the deletion does (no name, `deleted_at` set): those just below
    the autobattler's middle player. Each leaves its game ratings' board through the trigger
    on players (schema.sql)."""
    middle = await _middle(pool)
    started = time.perf_counter()
    await pool.execute(
        """
        UPDATE players SET name = NULL, deleted_at = now()
         WHERE player_id IN (SELECT player_id FROM players
                              WHERE rating = 1000 AND player_id > $1 AND deleted_at IS NULL
                              ORDER BY player_id LIMIT $2)
        """,
        middle,
        count,
    )
    await pool.execute("ANALYZE players, game_ratings")
    return time.perf_counter() - started


async def _middle(pool: asyncpg.Pool) -> UUID:
    """The autobattler's middle player, among those tied at the starting rating: the same one
    after `delete_players` (those it deletes still count here, and come after it)."""
    found: UUID = await pool.fetchval(
        "SELECT player_id FROM players WHERE rating = 1000 ORDER BY player_id"
        " OFFSET (SELECT count(*) / 2 FROM players WHERE rating = 1000) LIMIT 1"
    )
    return found


async def ladder_positions(pool: asyncpg.Pool) -> dict[str, UUID]:
    """The autobattler board's first player, one in the middle (among those tied at the
    starting rating) and the last."""
    first = "SELECT player_id FROM players WHERE deleted_at IS NULL ORDER BY {} LIMIT 1"
    return {
        "top": await pool.fetchval(first.format("rating DESC, player_id")),
        "middle": await _middle(pool),
        "bottom": await pool.fetchval(first.format("rating, player_id DESC")),
    }


async def game_positions(pool: asyncpg.Pool) -> dict[str, UUID]:
    """The game board's first player, the one halfway down, one inside the tie of first
    matches won (the middle of it) and the last."""
    board = (
        "SELECT player_id FROM game_ratings"
        " WHERE game = $1 AND season = $2 AND matches > 0 AND NOT player_deleted {}"
    )
    order = "ORDER BY ordinal DESC, player_id"
    won = "AND ordinal = (SELECT max(ordinal) FROM game_ratings WHERE matches = 1)"
    halfway = "OFFSET (SELECT count(*) / 2 FROM ({}) AS b) LIMIT 1"
    return {
        "top": await pool.fetchval(board.format(f"{order} LIMIT 1"), GAME, SEASON),
        "middle": await pool.fetchval(
            board.format(f"{order} {halfway.format(board.format(''))}"), GAME, SEASON
        ),
        "tied": await pool.fetchval(
            board.format(f"{won} {order} {halfway.format(board.format(won))}"), GAME, SEASON
        ),
        "bottom": await pool.fetchval(
            board.format("ORDER BY ordinal, player_id DESC LIMIT 1"), GAME, SEASON
        ),
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


async def game_board(pool: asyncpg.Pool, around: UUID | None) -> game_ratings.Board:
    return await game_ratings.leaderboard(pool, GAME, SEASON, PAGE, around)


async def measure(url: str, count: int, calls: int) -> list[dict[str, Any]]:
    deleted = min(DELETED, count // 100)
    pool = await create_pool(url, 1, 2, 120.0)
    try:
        async with pool.acquire() as conn:
            await migrate_on(conn)
        loads = {
            f"INSERT {count:,} players": await fill(pool, count),
            f"INSERT {count:,} {GAME} ratings": await fill_game(pool, count),
            f"delete {deleted:,} players": await delete_players(pool, deleted),
        }
        where = await ladder_positions(pool)
        baseline = await timed(partial(players.find, pool, where["middle"]), calls)
        reads = {f"leaderboard, best {PAGE}": await timed(partial(top, pool), calls)}
        for label, player_id in where.items():
            reads[f"leaderboard around=me, {label}"] = await timed(
                partial(players.leaderboard, pool, PAGE, player_id), calls
            )
        reads[f"{GAME} board, best {PAGE}"] = await timed(partial(game_board, pool, None), calls)
        for label, player_id in (await game_positions(pool)).items():
            reads[f"{GAME} board around=me, {label}"] = await timed(
                partial(game_board, pool, player_id), calls
            )
    finally:
        await pool.close()
    base = statistics.median(baseline)
    rows = [
        {"figure": figure, "value": f"{seconds:.1f} s", "p50 ms": "", "p99 ms": "", "vs by id": ""}
        for figure, seconds in loads.items()
    ]
    rows.append(_row("player by id (baseline)", baseline, base))
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
