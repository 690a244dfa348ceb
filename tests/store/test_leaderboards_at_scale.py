"""Every leaderboard read, of the autobattler's board and of a game's, on boards bulk-loaded by
bench/leaderboard.py's fill (400,000 players rated in both, a few thousand of them deleted):
each takes under 20 ms, reads bounded ranges of indexes (no Seq Scan of any table in its plan,
run or generic, no row read and then discarded, fewer than ROWS_READ rows read in all), and
ranks exactly.

Why 400,000 and not a million: a million players and a million ratings take well over a minute
to load on a 2-core machine, and what a read touches does not grow with the boards (the plans
above are the proof; the count rows of one 64th of ordinal, the only part that grows with the
density of a board, are at most 692 at a million). The bench reads the same boards at a million
(`python -m bench.leaderboard`, docs/performance.md#the-leaderboards).
"""

import json
import statistics
import time
from bisect import bisect_right
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import asyncpg
import pytest

from bench.leaderboard import (
    DELETED,
    GAME,
    SEASON,
    delete_players,
    fill,
    fill_game,
    game_positions,
    ladder_positions,
)
from service.usecases import game_ratings, players

PLAYERS = 400_000
RATINGS = PLAYERS
READ_MS = 20.0
# A page of 100 and the count rows of its ranks: what one read may touch, whatever the size.
ROWS_READ = 5_000

Read = Callable[[asyncpg.Connection], Awaitable[Any]]


@pytest.fixture
def pool(fresh_pool: asyncpg.Pool) -> asyncpg.Pool:
    return fresh_pool


def _scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes of a plan that read a relation, all the way down."""
    found = [plan] if "Relation Name" in plan else []
    for child in plan.get("Plans", []):
        found += _scans(child)
    return found


async def _plans(conn: asyncpg.Connection, query: str, args: tuple[Any, ...]) -> list[Any]:
    """The statement's plan run with these arguments (EXPLAIN ANALYZE), and its generic plan,
    the one PostgreSQL caches for a prepared statement after a few runs (EXPLAIN (GENERIC_PLAN)
    takes no arguments, which the extended protocol would bind: it is run from a function)."""
    run = await conn.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + query, *args)
    await conn.execute(
        """
        CREATE OR REPLACE FUNCTION pg_temp.generic_plan(query text) RETURNS SETOF json
        LANGUAGE plpgsql AS $$
        BEGIN
            RETURN QUERY EXECUTE 'EXPLAIN (GENERIC_PLAN, FORMAT JSON) ' || query;
        END $$
        """
    )
    generic = await conn.fetchval("SELECT pg_temp.generic_plan($1)", query)
    return [json.loads(run)[0]["Plan"], json.loads(generic)[0]["Plan"]]


async def _median_ms(conn: asyncpg.Connection, read: Read) -> float:
    await read(conn)
    timings = []
    for _ in range(7):
        started = time.perf_counter()
        await read(conn)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


async def _statements(conn: asyncpg.Connection, read: Read) -> list[tuple[str, tuple[Any, ...]]]:
    """The statements one read sends, with their arguments."""
    sent: list[Any] = []
    conn.add_query_logger(sent.append)
    try:
        await read(conn)
    finally:
        conn.remove_query_logger(sent.append)
    return [(s.query, s.args) for s in sent]


async def test_each_leaderboard_read_is_bounded_under_20_ms_and_exact_on_bulk_loaded_boards(
    pool: asyncpg.Pool,
) -> None:
    loads = {
        f"{PLAYERS:,} players": await fill(pool, PLAYERS),
        f"{RATINGS:,} {GAME} ratings": await fill_game(pool, RATINGS),
        f"{DELETED:,} deleted": await delete_players(pool, DELETED),
    }
    print("\n" + "\n".join(f"{label}: {seconds:.1f} s" for label, seconds in loads.items()))
    ladder = await ladder_positions(pool)
    board = await game_positions(pool)
    reads: dict[str, Read] = {"best 100": partial(players.leaderboard, limit=100, around=None)}
    for where, player_id in ladder.items():
        reads[f"around=me, {where}"] = partial(players.leaderboard, limit=100, around=player_id)
    game_board = partial(game_ratings.leaderboard, game=GAME, season=SEASON, limit=100)
    reads[f"{GAME} best 100"] = partial(game_board, around=None)
    for where, player_id in board.items():
        reads[f"{GAME} around=me, {where}"] = partial(game_board, around=player_id)

    timings = {}
    async with pool.acquire() as conn:
        for label, read in reads.items():
            timings[label] = await _median_ms(conn, read)
            for query, args in await _statements(conn, read):
                for plan in await _plans(conn, query, args):
                    scans = _scans(plan)
                    assert not [s for s in scans if s["Node Type"] == "Seq Scan"], (label, query)
                    run = [s for s in scans if "Actual Rows" in s]
                    assert sum(s.get("Rows Removed by Filter", 0) for s in run) == 0, label
                    assert sum(s["Actual Rows"] * s["Actual Loops"] for s in run) < ROWS_READ
    print("\n".join(f"{label}: {ms:.2f} ms" for label, ms in timings.items()))
    assert all(ms < READ_MS for ms in timings.values()), timings

    # Every rank of every page, against the boards themselves, read whole once.
    ratings = sorted(
        r["rating"] for r in await pool.fetch("SELECT rating FROM players WHERE deleted_at IS NULL")
    )
    for player_id in [None, *ladder.values()]:
        for entry in (await players.leaderboard(pool, 100, player_id))["entries"]:
            assert entry["rank"] == 1 + len(ratings) - bisect_right(ratings, entry["rating"])
    ordinals = sorted(
        r["ordinal"]
        for r in await pool.fetch(
            """
            SELECT r.ordinal FROM game_ratings r JOIN players p USING (player_id)
             WHERE r.game = $1 AND r.season = $2 AND r.matches > 0 AND p.deleted_at IS NULL
            """,
            GAME,
            SEASON,
        )
    )
    for player_id in [None, *board.values()]:
        for entry in (await game_board(pool, around=player_id))["entries"]:
            # The ordinal as the table computes it, in the same floating point.
            ordinal = entry["mu"] - 3 * entry["sigma"]
            assert entry["rank"] == 1 + len(ordinals) - bisect_right(ordinals, ordinal)
