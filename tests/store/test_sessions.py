"""The revocations every process reads (service/store/sessions.py), on bulk-loaded tables: a read
after the first brings only what changed since, through the indexes, however many players
signed out everywhere within the window."""

import statistics
import time

import asyncpg

from service.store import sessions as store

BULK = 200_000
# Generous: the read of a few new rows takes about a millisecond; the full read of the bulk
# (what every sync did before) takes hundreds.
INCREMENTAL_MS = 20.0


async def test_a_read_after_the_first_brings_only_what_changed_on_200000_players(
    fresh_pool: asyncpg.Pool,
) -> None:
    pool = fresh_pool
    async with pool.acquire() as conn, conn.transaction():
        # Without the triggers that count ratings: this table's revocations are what is read.
        await conn.execute("SET LOCAL session_replication_role = replica")
        await conn.execute(
            """
            INSERT INTO players (name, tokens_after)
            SELECT 'signed-out', now() - interval '1 hour' FROM generate_series(1, $1)
            """,
            BULK,
        )
    await pool.execute("ANALYZE players")
    started = time.time()
    first = await store.revocations_at_start(pool, started - 60, started - 30 * 24 * 3600)
    assert len(first.players) == BULK
    changed = await pool.fetch(
        """
        UPDATE players SET tokens_after = now()
         WHERE player_id IN (SELECT player_id FROM players LIMIT 3)
        RETURNING player_id
        """
    )
    margin = 100.0
    timings = []
    for _ in range(5):
        began = time.perf_counter()
        later = await store.revocations_since(pool, first.read_at - margin)
        timings.append((time.perf_counter() - began) * 1000)
        assert set(later.players) == {r["player_id"] for r in changed}
        assert later.sessions == {}
        assert later.read_at >= first.read_at
    assert statistics.median(timings) < INCREMENTAL_MS, timings
